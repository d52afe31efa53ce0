import { fileURLToPath } from "node:url";
import react from "@vitejs/plugin-react";
import { defaultClientConditions, defineConfig } from "vite";

// `pnpm serve`'s page, built: the demo chat with the engine on the server (scripts/serve.ts).
export const servePageDir = fileURLToPath(new URL("../node_modules/.nacre-serve/page", import.meta.url));

export default defineConfig({
  root: fileURLToPath(new URL("./serve", import.meta.url)),
  plugins: [react()],
  resolve: { conditions: ["source", ...defaultClientConditions] },
  build: { outDir: servePageDir, emptyOutDir: true, reportCompressedSize: false },
  logLevel: "warn",
});
