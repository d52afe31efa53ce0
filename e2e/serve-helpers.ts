import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, repoRoot } from "./helpers.js";

export interface ServeProcess {
  /** `http://127.0.0.1:PORT` as printed. */
  readonly url: string;
  readonly output: () => string;
  stop(): Promise<void>;
  /** SIGKILL: no shutdown, as when the machine dies; resolves once it has exited. */
  kill(): Promise<void>;
}

/** How long to wait for `listening on …`: `pnpm serve` over a real local model waits for its model list. */
export interface StartServeOptions {
  /** Default 120 s. */
  readonly timeoutMs?: number;
}

/**
 * Runs `pnpm serve` (its script, on a free port, chats in a fresh folder) and waits for `listening on …`. The
 * one way tests, the bench and scripts start it (`scripts/real-server-run.ts` too).
 */
export async function startServe(
  env: Record<string, string> = {},
  args: string[] = [],
  { timeoutMs = 120_000 }: StartServeOptions = {},
): Promise<ServeProcess> {
  const port = await freePort();
  const dataDir = await mkdtemp(join(tmpdir(), "nacre-serve-"));
  const child: ChildProcess = spawn(
    process.execPath,
    ["--conditions=source", "--import", "tsx", "scripts/serve.ts", "--port", String(port), ...args],
    {
      cwd: repoRoot,
      // PGlite in the fresh folder unless the test names a database (a DATABASE_URL of the run is not this test's).
      env: { ...process.env, NACRE_DATA_DIR: dataDir, DATABASE_URL: "", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let output = "";
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`pnpm serve did not start within ${timeoutMs / 1000} s:\n${output}`)),
      timeoutMs,
    );
    const read = (chunk: unknown) => {
      output += String(chunk);
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1] as string);
      }
    };
    child.stdout?.on("data", read);
    child.stderr?.on("data", read);
    child.once("exit", () => {
      clearTimeout(timer);
      reject(new Error(`pnpm serve exited:\n${output}`));
    });
  });
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once("exit", () => resolve());
  });
  return {
    url,
    output: () => output,
    kill: async () => {
      child.kill("SIGKILL");
      await exited;
      await rm(dataDir, { recursive: true, force: true });
    },
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        await new Promise<void>((resolve) => {
          child.once("exit", () => resolve());
          child.kill("SIGTERM");
          setTimeout(() => child.kill("SIGKILL"), 5_000).unref();
        });
      }
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Runs `pnpm serve` expecting it to refuse to start: its exit code and what it said. */
export function serveRefusal(
  env: Record<string, string>,
  args: string[],
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--conditions=source", "--import", "tsx", "scripts/serve.ts", ...args], {
      cwd: repoRoot,
      env: { ...process.env, DATABASE_URL: "", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout?.on("data", (chunk) => {
      output += String(chunk);
    });
    child.stderr?.on("data", (chunk) => {
      output += String(chunk);
    });
    child.once("exit", (code) => resolve({ code, output }));
  });
}
