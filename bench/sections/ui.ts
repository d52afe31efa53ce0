import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { BenchSection } from "../section.js";

interface UiSide {
  readonly firstFrameMs: number;
  readonly allRowsMs: number;
  readonly mountRenderMs: number;
  readonly deltaCommitMedianMs: number;
  readonly deltaCommitP95Ms: number;
}

interface UiResult {
  readonly messages: number;
  readonly rounds: number;
  readonly chromium: string;
  readonly nacre: UiSide;
  readonly naive: UiSide;
  readonly ratios: Readonly<Record<string, number>>;
  readonly bundle: { readonly jsMinifiedBytes: number; readonly jsGzipBytes: number; readonly cssGzipBytes: number };
}

const uiBench = fileURLToPath(new URL("../ui/run.ts", import.meta.url));

/**
 * The UI bench in real Chromium (a 2,000-message chat: Nacre's MessageList against a naive list, React Profiler
 * commits per streamed delta, and the bundle size). It runs as its own process, because it drives a browser.
 */
export const uiSection: BenchSection = {
  id: "ui",
  title: "Rendering a 2,000-message chat in Chromium, and the bundle",
  async run({ args, log }) {
    const extra = args.quick ? ["--rounds", "2"] : [];
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
    const row = (name: string, key: keyof UiSide, ratio: string) => [
      name,
      String(result.nacre[key]),
      String(result.naive[key]),
      String(result.ratios[ratio]),
    ];
    return {
      json: { ui: result },
      tables: [
        {
          title: `${result.messages} messages, ${result.rounds} rounds, Chromium ${result.chromium} (medians, ms)`,
          header: ["measure", "Nacre", "naive list", "Nacre / naive"],
          rows: [
            row("time to first frame", "firstFrameMs", "firstFrame"),
            row("every message in the page", "allRowsMs", "allRows"),
            row("render work until then (Profiler)", "mountRenderMs", "mountRender"),
            row("commit per streamed delta, median", "deltaCommitMedianMs", "deltaCommitMedian"),
            row("commit per streamed delta, p95", "deltaCommitP95Ms", "deltaCommitP95"),
          ],
        },
        {
          title: "@conch/nacre, peers and dependencies external",
          header: ["bundle", "bytes"],
          rows: [
            ["JS minified", String(result.bundle.jsMinifiedBytes)],
            ["JS minified + gzip", String(result.bundle.jsGzipBytes)],
            ["nacre.css gzip", String(result.bundle.cssGzipBytes)],
          ],
        },
      ],
    };
  },
};
