import { fileURLToPath } from "node:url";
import react from "@vitejs/plugin-react";
import { defaultClientConditions, defineConfig } from "vite";
import { nacreApiPlugin } from "./api/plugin.js";

// `pnpm dev`: the demo chat on the API engine, against the fake provider the dev server starts on loopback, or
// against your own provider named by NACRE_* variables (see the README, "Use it with your own provider").
const root = fileURLToPath(new URL("./api", import.meta.url));
const repoRoot = fileURLToPath(new URL("..", import.meta.url));

export default defineConfig({
  root,
  // Its own pre-bundle cache, so that `pnpm dev` and `pnpm dev:mock` do not re-optimise each other's.
  cacheDir: fileURLToPath(new URL("../node_modules/.vite-dev-api", import.meta.url)),
  plugins: [react(), nacreApiPlugin({ repoRoot })],
  resolve: { conditions: ["source", ...defaultClientConditions] },
  server: { host: "127.0.0.1", port: 5174, strictPort: true },
});
