import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

// The page alone; server.ts serves what this builds beside the engine's handler.
export default defineConfig({
  root: import.meta.dirname,
  plugins: [react()],
  build: { outDir: "dist", emptyOutDir: true },
});
