// `pnpm dev:local [vite options]`: `pnpm dev` against a real model on this computer. Builds llama.cpp's
// llama-server once (scripts/ensure-llama-server.mjs), starts it with the project's model
// (test-fixtures/models/stories260K.gguf) on a free loopback port, and runs the `pnpm dev` page against it
// (NACRE_PROVIDER=llama.cpp). Stops the server when the page's server stops (Ctrl-C).
//
//   NACRE_LOCAL_WINDOW  the real window in tokens (default 2048: a fold within a few turns)
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { newlineToken, startLlamaServer } from "./llama-server.js";

const repositoryRoot = join(dirname(fileURLToPath(import.meta.url)), "..");
const window = Number(process.env.NACRE_LOCAL_WINDOW ?? 2048);
if (!Number.isInteger(window) || window < 256) {
  console.error(
    `NACRE_LOCAL_WINDOW must be a whole number of tokens, at least 256 (got ${process.env.NACRE_LOCAL_WINDOW})`,
  );
  process.exit(2);
}

const server = await startLlamaServer({
  window,
  // The model never stops by itself in chat format: ending at a newline keeps answers (and summaries) short.
  endToken: newlineToken,
  maxAnswerTokens: 256,
});
console.error(
  `[dev:local] llama-server (pid ${server.pid}) serving ${server.alias} with a real ${window}-token window at ${server.origin}`,
);

const viteBin = join(dirname(createRequire(import.meta.url).resolve("vite/package.json")), "bin", "vite.js");
const vite = spawn(
  process.execPath,
  [
    "--conditions=source",
    "--import",
    "tsx",
    viteBin,
    "--configLoader",
    "native",
    "--config",
    "dev/vite.api.config.ts",
    ...process.argv.slice(2),
  ],
  {
    cwd: repositoryRoot,
    stdio: "inherit",
    env: {
      ...process.env,
      NACRE_PROVIDER: "llama.cpp",
      // The address as llama.cpp's own documentation gives it (with `/v1`): pnpm dev forwards /provider to the
      // server's root, so the page's adapter reaches /props beside the OpenAI-style API (e2e/real-server checks it).
      NACRE_BASE_URL: `${server.origin}/v1`,
      NACRE_MODEL: server.alias,
    },
  },
);

let stopping = false;
async function stop(code: number) {
  if (stopping) return;
  stopping = true;
  if (vite.exitCode === null && vite.signalCode === null) vite.kill("SIGTERM");
  await server.stop();
  process.exit(code);
}
process.on("SIGINT", () => void stop(130));
process.on("SIGTERM", () => void stop(143));
vite.once("exit", (code) => void stop(code ?? 0));
