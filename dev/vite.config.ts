import { fileURLToPath } from "node:url";
import react from "@vitejs/plugin-react";
import { defaultClientConditions, defineConfig } from "vite";
import { demoTranscriptPlugin } from "./transcript-plugin.js";

const root = fileURLToPath(new URL(".", import.meta.url));
const repoRoot = fileURLToPath(new URL("..", import.meta.url));

export default defineConfig({
  root,
  // Only the mock page: the API page (dev/api/) has its own config, and must not be scanned from here.
  optimizeDeps: { entries: ["index.html"] },
  plugins: [
    react(),
    demoTranscriptPlugin({
      repoRoot,
      file: "minsky-specstory.jsonl",
      id: "minsky/2025-04-26_20-30-setting-up-minsky-cli-with-bun",
    }),
  ],
  resolve: { conditions: ["source", ...defaultClientConditions] },
  server: { host: "127.0.0.1", port: 5173, strictPort: true },
  preview: { host: "127.0.0.1", port: 4173, strictPort: true },
  build: { outDir: "../dev-dist", emptyOutDir: true },
});
