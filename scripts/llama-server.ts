// A real llama.cpp `llama-server` on this computer, for the real-server suite, `pnpm dev:local` and the bench:
// the binary `scripts/ensure-llama-server.mjs` builds, serving `test-fixtures/models/stories260K.gguf` on a free
// 127.0.0.1 port with a real window of the caller's choosing.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "./free-port.mjs";

const repositoryRoot = join(dirname(fileURLToPath(import.meta.url)), "..");

/** The model the project carries (test-fixtures/models/README.md: provenance, sha256, MIT licence). */
export const projectModelPath = join(repositoryRoot, "test-fixtures", "models", "stories260K.gguf");
export const projectModelAlias = "stories260K";
/** The newline token of stories260K's vocabulary: as its end token, an answer ends at its first line. */
export const newlineToken = 13;

/**
 * The llama-server binary: builds it once (about 6 minutes on an idle 2-core machine) or finds it in the cache. Throws with the
 * build's own output when there is none: callers fail, they never skip.
 */
export function ensureLlamaServerBinary(): string {
  const script = join(repositoryRoot, "scripts", "ensure-llama-server.mjs");
  let stdout: string;
  try {
    // The build's progress goes to this process's stderr as it happens; stdout's last line is the path.
    stdout = execFileSync(process.execPath, [script], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
  } catch (error) {
    throw new Error(
      `No llama-server binary: \`node scripts/ensure-llama-server.mjs\` failed (${error instanceof Error ? error.message : String(error)}). ` +
        "Its output above says why; LLAMA_SERVER_BIN can point at a llama-server you built yourself.",
    );
  }
  const path = stdout.trim().split("\n").at(-1) ?? "";
  if (path === "") throw new Error("ensure-llama-server printed no path");
  return path;
}

export interface LlamaServerOptions {
  /** The real window in tokens: `-c N` plus `llama.context_length=N` (the model's trained 512 otherwise caps it). */
  readonly window: number;
  /** Ends every answer at this token (stories260K never stops by itself in chat format): {@link newlineToken}. */
  readonly endToken?: number;
  /** `-n`: the most tokens of an answer whose request names no `max_tokens` (one that names it, has that). Default: no cap. */
  readonly maxAnswerTokens?: number;
  /** `-np`: how many requests it serves at once (its slots). Default: the server's own (4 in this build). */
  readonly slots?: number;
  /** Default {@link projectModelPath}. */
  readonly modelPath?: string;
  /** The model's id in `/v1/models` and `/props`. Default {@link projectModelAlias}. */
  readonly alias?: string;
  /** Default {@link ensureLlamaServerBinary}'s. */
  readonly binary?: string;
  /** Default: a free one. */
  readonly port?: number;
  /** The server's own log lines (stderr and stdout). Default: kept, and shown if it does not start. */
  readonly onLog?: (line: string) => void;
  /** How long to wait for `/health`. Default 60 s. */
  readonly startTimeoutMs?: number;
}

export interface StartedLlamaServer {
  /** `http://127.0.0.1:PORT` (no `/v1`): what createLlamaCpp takes; OpenAI's API is under `${origin}/v1`. */
  readonly origin: string;
  readonly port: number;
  readonly pid: number;
  readonly window: number;
  readonly alias: string;
  /** The arguments it was started with. */
  readonly args: readonly string[];
  /** The server's count of `text`'s tokens (`POST /tokenize`, no special tokens added). */
  tokenize(text: string): Promise<number>;
  /**
   * Resolves once no slot is processing a request (`GET /slots`). The server's slots share one window's KV cells,
   * so a request still running from one chat (a fold ahead after its last turn) can make another's fail with
   * "Context size has been exceeded.": each chat of the suite waits for this before the next starts.
   */
  idle(timeoutMs?: number): Promise<void>;
  /** Stops it by its pid (SIGTERM, then SIGKILL after 5 s) and waits until it is gone. */
  stop(): Promise<void>;
}

/**
 * `fetch`, sent once more when the connection was closed before any answer: llama-server closes an idle keep-alive
 * connection after 5 s, and a request that goes out on it as it closes fails with "other side closed" though the
 * server never read it (a run of the suite met it on `/tokenize`).
 */
export async function fetchOnClosedRetry(url: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (error) {
    const code = (error as { cause?: { code?: unknown } }).cause?.code;
    if (init.signal?.aborted || (code !== "UND_ERR_SOCKET" && code !== "ECONNRESET")) throw error;
    return fetch(url, init);
  }
}

// A process of its own that kills the server when the process that started it is gone without stopping it
// (a test run killed with SIGKILL skips every exit handler): no server outlives its owner.
const watchdogSource = `
const [owner, server] = process.argv.slice(1).map(Number);
setInterval(() => {
  try { process.kill(server, 0); } catch { process.exit(0); }
  try { process.kill(owner, 0); return; } catch {}
  try { process.kill(server, "SIGKILL"); } catch {}
  process.exit(0);
}, 1000);
`;

/** The arguments of one server; exported so that docs and tests show exactly what runs. */
export function llamaServerArgs(options: LlamaServerOptions & { readonly port: number }): string[] {
  const args = [
    "-m",
    options.modelPath ?? projectModelPath,
    "--alias",
    options.alias ?? projectModelAlias,
    "--host",
    "127.0.0.1",
    "--port",
    String(options.port),
    "-c",
    String(options.window),
    // One `--override-kv`, its values comma-separated: this llama.cpp deprecates giving it twice (and warns so).
    "--override-kv",
    [
      `llama.context_length=int:${options.window}`,
      ...(options.endToken === undefined ? [] : [`tokenizer.ggml.eos_token_id=int:${options.endToken}`]),
    ].join(","),
    // One thread is 8–20× faster than two for this model on a shared 2-core machine (TOOLCHAIN).
    "-t",
    "1",
    "-tb",
    "1",
    // Flash attention's "auto" turns it on, and its CPU kernel at this model's head size of 8 is 4–5× slower than
    // the plain one once a prompt holds thousands of tokens (a 7,176-token prompt: 160 s on, 34 s off).
    "-fa",
    "off",
    "--no-webui",
  ];
  if (options.maxAnswerTokens !== undefined) args.push("-n", String(options.maxAnswerTokens));
  if (options.slots !== undefined) args.push("-np", String(options.slots));
  return args;
}

async function waitForHealth(origin: string, child: ChildProcess, timeoutMs: number, logTail: () => string) {
  const deadline = Date.now() + timeoutMs;
  let exited: string | null = null;
  child.once("exit", (code, signal) => {
    exited = `exited (${code ?? signal})`;
  });
  for (;;) {
    if (exited) throw new Error(`llama-server ${exited} before it was healthy:\n${logTail()}`);
    try {
      const response = await fetch(`${origin}/health`, { signal: AbortSignal.timeout(2_000) });
      await response.body?.cancel();
      if (response.ok) return;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) throw new Error(`llama-server was not healthy within ${timeoutMs} ms:\n${logTail()}`);
    // Poll: the next check waits for the event loop's timer, not for a guessed start-up time.
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Starts llama-server and resolves once `/health` answers 200. */
export async function startLlamaServer(options: LlamaServerOptions): Promise<StartedLlamaServer> {
  const binary = options.binary ?? ensureLlamaServerBinary();
  const port = options.port ?? (await freePort());
  const args = llamaServerArgs({ ...options, port });
  const child = spawn(binary, args, { stdio: ["ignore", "pipe", "pipe"] });
  if (child.pid === undefined) {
    await once(child, "error");
    throw new Error(`llama-server could not be started from ${binary}`);
  }
  const pid = child.pid;
  const lines: string[] = [];
  const onData = (chunk: Buffer) => {
    for (const line of chunk.toString("utf8").split("\n")) {
      if (line === "") continue;
      if (options.onLog) options.onLog(line);
      lines.push(line);
      if (lines.length > 200) lines.shift();
    }
  };
  child.stdout?.on("data", onData);
  child.stderr?.on("data", onData);
  const killOnExit = () => {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  };
  process.once("exit", killOnExit);
  spawn(process.execPath, ["-e", watchdogSource, String(process.pid), String(pid)], {
    detached: true,
    stdio: "ignore",
  }).unref();

  const origin = `http://127.0.0.1:${port}`;
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once("exit", () => resolve());
  });
  const stop = async () => {
    process.removeListener("exit", killOnExit);
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
    await exited;
    clearTimeout(timer);
  };
  try {
    await waitForHealth(origin, child, options.startTimeoutMs ?? 60_000, () => lines.slice(-30).join("\n"));
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    origin,
    port,
    pid,
    window: options.window,
    alias: options.alias ?? projectModelAlias,
    args,
    async tokenize(text) {
      const response = await fetchOnClosedRetry(`${origin}/tokenize`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ content: text, add_special: false }),
      });
      if (!response.ok) throw new Error(`/tokenize answered ${response.status}: ${await response.text()}`);
      const body = (await response.json()) as { tokens: readonly unknown[] };
      return body.tokens.length;
    },
    async idle(timeoutMs = 120_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const response = await fetchOnClosedRetry(`${origin}/slots`, { method: "GET" });
        if (!response.ok) throw new Error(`/slots answered ${response.status}: ${await response.text()}`);
        const slots = (await response.json()) as readonly { readonly is_processing?: boolean }[];
        if (!slots.some((slot) => slot.is_processing)) return;
        if (Date.now() > deadline) throw new Error(`llama-server was still processing after ${timeoutMs} ms`);
        // Poll: a cancelled request ends at the server's next token, not at a time known here.
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    stop,
  };
}
