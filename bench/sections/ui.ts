import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { BenchSection } from "../section.js";

interface LoadSample {
  readonly firstFrameMs: number;
  readonly renderWorkMs: number;
  readonly mainThreadMs: number;
  readonly heapBytes: number;
}
interface StreamSample {
  readonly firstTenthMs: number;
  readonly lastTenthMs: number;
  readonly medianMs: number;
  readonly commits: number;
  readonly deltas: number;
}
interface ScrollSample {
  readonly longestTaskMs: number;
  readonly longestFrameMs: number;
}

interface UiResult {
  readonly messages: number;
  readonly small: number;
  readonly chromium: string;
  readonly load: Readonly<Record<string, LoadSample>>;
  readonly stream: Readonly<Record<string, StreamSample>>;
  readonly scroll: Readonly<Record<string, ScrollSample>>;
  readonly divider: { readonly reactMs: number; readonly toFrameMs: number } | null;
  readonly ratios: Readonly<Record<string, unknown>>;
  readonly bundle: {
    readonly core: { readonly jsGzipBytes: number; readonly jsMinifiedBytes: number };
    readonly markdown: { readonly jsGzipBytes: number; readonly jsMinifiedBytes: number };
    readonly adapters: ReadonlyArray<{
      readonly name: string;
      readonly jsGzipBytes: number;
      readonly jsMinifiedBytes: number;
    }>;
  };
}

const uiBench = fileURLToPath(new URL("../ui/run.ts", import.meta.url));

const ms = (value: number | undefined) => (value === undefined ? "" : value.toFixed(2));

/**
 * The UI bench in real Chromium, one run: a 10,000-message chat from the shared conversations, Nacre's
 * MessageList against a naive list, Nacre at 200 messages and assistant-ui's thread; streaming, scrolling,
 * the divider, and the bundle sizes. It runs as its own process, because it drives a browser.
 */
export const uiSection: BenchSection = {
  id: "ui",
  title: "Rendering a 10,000-message chat in Chromium, and the bundle",
  async run({ args, log }) {
    const extra = args.quick ? ["--messages", "2000"] : [];
    const stdout = await new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, ["--conditions=source", "--import", "tsx", uiBench, "--json", ...extra], {
        stdio: ["ignore", "pipe", "pipe"],
      });
      let out = "";
      child.stdout.on("data", (chunk) => {
        out += String(chunk);
      });
      child.stderr.on("data", (chunk) => {
        for (const line of String(chunk).split("\n")) if (line.trim()) log(line.trim());
      });
      child.once("error", reject);
      child.once("exit", (code) => (code === 0 ? resolve(out) : reject(new Error(`the UI bench exited with ${code}`))));
    });
    const result = JSON.parse(stdout) as UiResult;
    const { load, stream, scroll } = result;
    const mb = (bytes: number | undefined) => (bytes === undefined ? "" : (bytes / 1_048_576).toFixed(1));
    // One measure across the opened lists, in the header's order.
    const loadRow = (measure: string, cell: (sample: LoadSample | undefined) => string) => [
      measure,
      ...[load.nacre, load.nacreSmall, load.naive, load.aui].map(cell),
    ];
    return {
      json: { ui: result },
      tables: [
        {
          title: `Opening the chat, Chromium ${result.chromium} (one run)`,
          header: ["measure", `Nacre at ${result.messages}`, `Nacre at ${result.small}`, "naive list", "assistant-ui"],
          rows: [
            loadRow("first frame showing the end (ms)", (sample) => ms(sample?.firstFrameMs)),
            loadRow("render work until idle (ms)", (sample) => ms(sample?.renderWorkMs)),
            loadRow("main-thread work until idle (ms)", (sample) => ms(sample?.mainThreadMs)),
            loadRow("JS heap after load (MB)", (sample) => mb(sample?.heapBytes)),
          ],
        },
        {
          title: "Streaming one reply at the end of the chat: React commit per delta (ms)",
          header: ["reply", "list", "first tenth", "last tenth", "median", "commits / deltas"],
          rows: Object.entries(stream).map(([name, sample]) => {
            const [kind, reply] = name.split(":");
            return [
              reply ?? "",
              kind ?? "",
              ms(sample.firstTenthMs),
              ms(sample.lastTenthMs),
              ms(sample.medianMs),
              `${sample.commits} / ${sample.deltas}`,
            ];
          }),
        },
        {
          title: "Scrolling from the end to the top, and opening the divider there",
          header: ["measure", "Nacre", "naive list"],
          rows: [
            ["longest task (ms)", ms(scroll.nacre?.longestTaskMs), ms(scroll.naive?.longestTaskMs)],
            ["longest frame (ms)", ms(scroll.nacre?.longestFrameMs), ms(scroll.naive?.longestFrameMs)],
            ["opening the divider: React work (ms)", ms(result.divider?.reactMs), ""],
          ],
        },
        {
          title: "Bundles (peers and dependencies external)",
          header: ["entry", "minified", "minified + gzip"],
          rows: [
            ["@conch/nacre", String(result.bundle.core.jsMinifiedBytes), String(result.bundle.core.jsGzipBytes)],
            [
              "@conch/nacre/markdown",
              String(result.bundle.markdown.jsMinifiedBytes),
              String(result.bundle.markdown.jsGzipBytes),
            ],
            // What each further entry adds to a page that has the core already.
            ...result.bundle.adapters.map((entry) => [
              `${entry.name} (beyond the core)`,
              String(entry.jsMinifiedBytes),
              String(entry.jsGzipBytes),
            ]),
          ],
        },
      ],
    };
  },
};
