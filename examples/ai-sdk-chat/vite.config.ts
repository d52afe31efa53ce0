import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

// The page alone; server.ts serves what this builds beside the route and the engine's handler.
export default defineConfig({
  root: import.meta.dirname,
  plugins: [react()],
  // React, the AI SDK and Nacre in one chunk: a small page needs no splitting.
  build: { outDir: "dist", emptyOutDir: true, chunkSizeWarningLimit: 1_000 },
});
