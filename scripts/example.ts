// `pnpm example:ai-sdk` and `pnpm example:assistant-ui`: an example run from this clone, on the workspace's own
// packages (their sources, under the "source" condition, as `pnpm dev` reads them; nothing to publish or build
// first). The example's page is built with its own vite.config.ts, then its server.ts serves it on PORT (default
// 3000). With OPENAI_BASE_URL or OPENAI_API_KEY set it talks to that provider, as the example's `npm start` does
// (MODEL, SUMMARY_MODEL); without them, to the fake provider `pnpm dev` starts on this computer, so no account is
// needed. Chats live in DATA_DIR (default .nacre-data/examples/<example>/).
import type { AddressInfo } from "node:net";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { createProvider, type ProviderAdapter } from "@conch/engine-client";
import { build, defaultClientConditions } from "vite";
import {
  firstChatModel,
  loadSharedConversations,
  startDemoFakeProvider,
  summariserModel,
} from "../dev/api/fake-provider.js";
import { conversationsDir } from "../dev/transcript-plugin.js";

const repoRoot = fileURLToPath(new URL("..", import.meta.url));
const examples = ["ai-sdk-chat", "assistant-ui-chat"] as const;
type ExampleName = (typeof examples)[number];

function fail(message: string): never {
  console.error(`example: ${message}`);
  process.exit(1);
}

const name = process.argv[2] as ExampleName;
if (!examples.includes(name)) fail(`name one of ${examples.join(", ")} (got ${process.argv[2] ?? "nothing"}).`);
const port = Number(process.env.PORT ?? 3000);
if (!Number.isInteger(port) || port < 0 || port > 65_535) fail(`PORT=${process.env.PORT} is not a port number.`);
const exampleDir = join(repoRoot, "examples", name);
const pageDir = join(exampleDir, "dist");
const dataDir = resolve(process.env.DATA_DIR?.trim() || join(repoRoot, ".nacre-data", "examples", name));

// The page as the example's `npm run build` makes it, but from the workspace's sources.
await build({
  configFile: join(exampleDir, "vite.config.ts"),
  resolve: { conditions: ["source", ...defaultClientConditions] },
  build: { outDir: pageDir, emptyOutDir: true, reportCompressedSize: false },
  logLevel: "warn",
});

const ownProvider = Boolean(process.env.OPENAI_BASE_URL || process.env.OPENAI_API_KEY);
let provider: { readonly provider: ProviderAdapter; readonly model: string; readonly apiKey?: string };
let closeFake: () => Promise<void> = async () => undefined;
if (ownProvider) {
  const { providerFromEnv } = await import(`../examples/${name}/server.js`);
  provider = providerFromEnv(process.env);
} else {
  const fake = await startDemoFakeProvider({
    dialect: "openrouter",
    conversations: loadSharedConversations(conversationsDir(repoRoot)),
  });
  provider = {
    provider: createProvider("openrouter", {
      baseURL: fake.server.baseURL,
      local: false,
      cheapestModel: summariserModel,
    }),
    model: firstChatModel,
  };
  closeFake = () => fake.server.close();
}

let server: import("node:http").Server;
let closeExample: () => Promise<void>;
switch (name) {
  case "ai-sdk-chat": {
    const { createAiSdkChatServer } = await import("../examples/ai-sdk-chat/server.js");
    const example = await createAiSdkChatServer({ ...provider, dataDir, pageDir });
    server = example.server;
    closeExample = () => example.close();
    break;
  }
  case "assistant-ui-chat": {
    const { createChatServer } = await import("../examples/assistant-ui-chat/server.js");
    const example = createChatServer({ ...provider, dataDir, pageDir });
    server = example;
    closeExample = () => new Promise((done) => example.close(() => done()));
    break;
  }
  default:
    name satisfies never;
    fail(`no example ${name}`);
}

server.listen(port, "127.0.0.1", () => {
  const { port: listening } = server.address() as AddressInfo;
  console.log(`listening on http://127.0.0.1:${listening}`);
  console.log(
    `example ${name}: ${ownProvider ? `your provider, model ${provider.model}` : "the fake provider on this computer (send a few long messages to see a fold)"}; chats in ${dataDir}.`,
  );
});

const stop = () => {
  void closeExample()
    .then(closeFake)
    .then(() => process.exit(0));
};
process.once("SIGINT", stop);
process.once("SIGTERM", stop);
