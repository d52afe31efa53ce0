// The fake provider of `pnpm dev`, started on its own, to try "Use it with your own provider" (README) without
// an account anywhere:
//
//   node --conditions=source --import tsx dev/api/start-fake-provider.ts [--dialect openai|openrouter|anthropic|ollama]
//        [--port 8787] [--api-key KEY]
//
// It prints its base URL and the NACRE_* variables that point `pnpm dev` at it, then serves until Ctrl+C.
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { conversationsDir } from "../transcript-plugin.js";
import { type DemoDialect, fakeModels, loadSharedConversations, startDemoFakeProvider } from "./fake-provider.js";

const usage =
  "usage: node --conditions=source --import tsx dev/api/start-fake-provider.ts [--dialect openai|openrouter|anthropic|ollama] [--port N] [--api-key KEY]";
const dialects: readonly DemoDialect[] = ["openai", "openrouter", "anthropic", "ollama"];

const { values } = parseArgs({
  options: {
    dialect: { type: "string", default: "openai" },
    port: { type: "string", default: "0" },
    "api-key": { type: "string" },
    help: { type: "boolean", default: false },
  },
});
if (values.help) {
  console.log(usage);
  process.exit(0);
}
const dialect = values.dialect as DemoDialect;
const port = Number(values.port);
if (!dialects.includes(dialect) || !Number.isInteger(port) || port < 0 || port > 65_535) {
  console.error(usage);
  process.exit(2);
}
const apiKey = values["api-key"];

const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
const fake = await startDemoFakeProvider({
  dialect,
  port,
  ...(apiKey ? { apiKey } : {}),
  conversations: loadSharedConversations(conversationsDir(repoRoot)),
});

const nacreProvider: Record<DemoDialect, string> = {
  openai: "openai-compatible",
  openrouter: "openrouter",
  anthropic: "anthropic",
  ollama: "ollama",
};
const variables = [
  `NACRE_PROVIDER=${nacreProvider[dialect]}`,
  `NACRE_BASE_URL=${fake.server.baseURL}`,
  ...(apiKey ? ["NACRE_API_KEY=<the key you gave with --api-key>"] : []),
  "NACRE_MODEL=chat-8k",
];
console.log(`Fake provider (${dialect} API) listening at ${fake.server.baseURL}`);
console.log(
  `Models: ${fakeModels.map((model) => `${model.id} (${model.window.toLocaleString("en")} tokens)`).join(", ")}`,
);
console.log(apiKey ? "Every request must carry the key given with --api-key." : "No key needed.");
console.log(`Point pnpm dev at it (in another terminal):\n  ${variables.join(" ")} pnpm dev`);
console.log("Stop it with Ctrl+C.");

const stop = () => {
  void fake.server.close().then(() => process.exit(0));
};
process.once("SIGINT", stop);
process.once("SIGTERM", stop);
