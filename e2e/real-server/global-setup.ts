// Vitest globalSetup of the "real-server" project: the llama-server binary, built once per machine
// (scripts/ensure-llama-server.mjs; about 6 minutes cold on an idle 2-core machine, a stat when cached). No binary is a failure
// of the whole project, never a skip: the suite exists to put a real server in the loop.
import type { TestProject } from "vitest/node";
import { ensureLlamaServerBinary } from "../../scripts/llama-server.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** The absolute path of llama-server. */
    llamaServerBinary: string;
  }
}

export function setup(project: TestProject): void {
  const started = performance.now();
  const binary = ensureLlamaServerBinary();
  console.error(`[real-server] llama-server at ${binary} (${((performance.now() - started) / 1000).toFixed(1)} s)`);
  project.provide("llamaServerBinary", binary);
}
