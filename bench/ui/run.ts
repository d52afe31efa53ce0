/**
 * The UI bench: a 2,000-message chat in Chromium, Nacre's list against a naive list in the same run
 * (time to first render, React commit time per streamed delta), and Nacre's bundle size.
 *
 *   node --conditions=source --import tsx bench/ui/run.ts [--json] [--messages 2000] [--rounds 5]
 *
 * With --json, exactly one JSON object goes to stdout; diagnostics go to stderr.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { gzipSync } from "node:zlib";
import react from "@vitejs/plugin-react";
import { chromium } from "playwright-core";
import { build, defaultClientConditions, preview } from "vite";
import { chromiumArgs, chromiumPath } from "../../scripts/chromium.js";
import { median, round } from "../stats.js";
import { adapterEntrySizes } from "./adapter-sizes.js";

const { values } = parseArgs({
  options: {
    json: { type: "boolean", default: false },
    messages: { type: "string", default: "2000" },
    rounds: { type: "string", default: "5" },
    "reply-chars": { type: "string", default: "1200" },
  },
});
const count = Number(values.messages);
const rounds = Number(values.rounds);
const replyChars = Number(values["reply-chars"]);
const log = (...args: unknown[]) => console.error("[bench/ui]", ...args);

const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
const pageRoot = fileURLToPath(new URL("./page", import.meta.url));
const work = mkdtempSync(join(tmpdir(), "nacre-bench-"));

interface Sample {
  firstCommitMs: number;
  firstFrameMs: number;
  allRowsMs: number;
  mountRenderMs: number;
  deltaCommitsMs: number[];
  deltas: number;
  rows: number;
}

function percentile(list: readonly number[], p: number): number {
  const sorted = [...list].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

async function bundleSize() {
  const outDir = join(work, "bundle");
  const external = [
    /^react($|\/)/,
    /^react-dom($|\/)/,
    /^@conch\/engine-client($|\/)/,
    /^@radix-ui\//,
    /^@tanstack\/react-query($|\/)/,
    /^cmdk($|\/)/,
  ];
  await build({
    configFile: false,
    logLevel: "silent",
    resolve: { conditions: ["source", ...defaultClientConditions] },
    build: {
      outDir,
      emptyOutDir: true,
      minify: true,
      lib: { entry: join(repoRoot, "packages/nacre/src/index.ts"), formats: ["es"], fileName: "nacre" },
      rolldownOptions: {
        external,
        onwarn(warning, warn) {
          if (warning.code !== "MODULE_LEVEL_DIRECTIVE") warn(warning);
        },
      },
    },
  });
  const js = readFileSync(join(outDir, "nacre.js"));
  const css = readFileSync(join(repoRoot, "packages/nacre/src/nacre.css"));
  return {
    jsMinifiedBytes: js.length,
    jsGzipBytes: gzipSync(js, { level: 9 }).length,
    cssBytes: css.length,
    cssGzipBytes: gzipSync(css, { level: 9 }).length,
  };
}

async function main() {
  log("bundle size of @conch/nacre (peers and dependencies external)…");
  const bundle = await bundleSize();
  const adapters = await adapterEntrySizes(repoRoot, work);

  log("building the bench page…");
  const outDir = join(work, "page");
  await build({
    configFile: false,
    root: pageRoot,
    logLevel: "silent",
    plugins: [react()],
    // The profiling build of React: production speed, and the Profiler still reports.
    resolve: {
      conditions: ["source", ...defaultClientConditions],
      alias: [{ find: /^react-dom\/client$/, replacement: "react-dom/profiling" }],
    },
    build: {
      outDir,
      emptyOutDir: true,
      rolldownOptions: {
        onwarn(warning, warn) {
          if (warning.code !== "MODULE_LEVEL_DIRECTIVE") warn(warning);
        },
      },
    },
  });
  const server = await preview({
    configFile: false,
    root: pageRoot,
    logLevel: "silent",
    build: { outDir },
    preview: { host: "127.0.0.1", port: 0 },
  });
  const url = server.resolvedUrls?.local[0];
  if (!url) throw new Error("vite preview gave no URL");

  const browser = await chromium.launch({ executablePath: chromiumPath, headless: true, args: [...chromiumArgs] });
  const samples: Record<"nacre" | "naive", Sample[]> = { nacre: [], naive: [] };
  try {
    // A fresh page per run, the two lists interleaved, so that neither gets a warmer engine.
    for (let index = 0; index < rounds + 1; index += 1) {
      for (const kind of index % 2 ? (["naive", "nacre"] as const) : (["nacre", "naive"] as const)) {
        const page = await browser.newPage({ viewport: { width: 1000, height: 800 } });
        await page.goto(url);
        await page.waitForFunction(() => "nacreBench" in window);
        const sample = await page.evaluate(
          ([kindArg, countArg, replyArg]) => window.nacreBench.run(kindArg, countArg, replyArg),
          [kind, count, replyChars] as const,
        );
        await page.close();
        // The first round warms the browser's caches and is left out.
        if (index > 0) samples[kind].push(sample);
        log(
          `${kind} round ${index}: first frame ${sample.firstFrameMs.toFixed(1)} ms, ${sample.deltaCommitsMs.length} commits`,
        );
      }
    }
  } finally {
    await browser.close();
    await new Promise<void>((resolve) => server.httpServer.close(() => resolve()));
    rmSync(work, { recursive: true, force: true });
  }

  const summary = (kind: "nacre" | "naive") => {
    const list = samples[kind];
    const deltas = list.flatMap((sample) => sample.deltaCommitsMs);
    return {
      firstCommitMs: round(median(list.map((sample) => sample.firstCommitMs)), 2),
      firstFrameMs: round(median(list.map((sample) => sample.firstFrameMs)), 2),
      allRowsMs: round(median(list.map((sample) => sample.allRowsMs)), 2),
      mountRenderMs: round(median(list.map((sample) => sample.mountRenderMs)), 2),
      deltaCommitMedianMs: round(median(deltas), 3),
      deltaCommitP95Ms: round(percentile(deltas, 95), 3),
      commitsPerRun: round(median(list.map((sample) => sample.deltaCommitsMs.length)), 0),
      deltasPerRun: round(median(list.map((sample) => sample.deltas)), 0),
      rows: list[0]?.rows ?? 0,
    };
  };
  const nacre = summary("nacre");
  const naive = summary("naive");
  const ratio = (a: number, b: number) => round(a / b, 2);
  const result = {
    bench: "ui",
    messages: count,
    rounds,
    replyChars,
    chromium: browser.version(),
    nacre,
    naive,
    ratios: {
      firstFrame: ratio(nacre.firstFrameMs, naive.firstFrameMs),
      allRows: ratio(nacre.allRowsMs, naive.allRowsMs),
      mountRender: ratio(nacre.mountRenderMs, naive.mountRenderMs),
      deltaCommitMedian: ratio(nacre.deltaCommitMedianMs, naive.deltaCommitMedianMs),
      deltaCommitP95: ratio(nacre.deltaCommitP95Ms, naive.deltaCommitP95Ms),
    },
    bundle,
    adapters,
  };

  if (values.json) {
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return;
  }
  const rows: Array<[string, string, string, string]> = [
    ["(medians)", "Nacre MessageList", "naive list", "Nacre / naive"],
    [
      "first commit showing the end (ms)",
      `${nacre.firstCommitMs}`,
      `${naive.firstCommitMs}`,
      `${ratio(nacre.firstCommitMs, naive.firstCommitMs)}`,
    ],
    ["time to first frame (ms)", `${nacre.firstFrameMs}`, `${naive.firstFrameMs}`, `${result.ratios.firstFrame}`],
    ["every message in the page (ms)", `${nacre.allRowsMs}`, `${naive.allRowsMs}`, `${result.ratios.allRows}`],
    [
      "render work until then, Profiler (ms)",
      `${nacre.mountRenderMs}`,
      `${naive.mountRenderMs}`,
      `${result.ratios.mountRender}`,
    ],
    [
      "commit per delta, median (ms)",
      `${nacre.deltaCommitMedianMs}`,
      `${naive.deltaCommitMedianMs}`,
      `${result.ratios.deltaCommitMedian}`,
    ],
    [
      "commit per delta, p95 (ms)",
      `${nacre.deltaCommitP95Ms}`,
      `${naive.deltaCommitP95Ms}`,
      `${result.ratios.deltaCommitP95}`,
    ],
    [
      "commits / deltas per reply",
      `${nacre.commitsPerRun} / ${nacre.deltasPerRun}`,
      `${naive.commitsPerRun} / ${naive.deltasPerRun}`,
      "",
    ],
  ];

  const widths = [0, 1, 2, 3].map((column) => Math.max(...rows.map((row) => row[column]?.length ?? 0)));
  console.log(
    `UI bench: ${count} messages, ${rounds} rounds, ${replyChars}-character reply, Chromium ${result.chromium}`,
  );
  for (const row of rows) console.log(row.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join("  "));
  console.log(
    `@conch/nacre bundle (peers and dependencies external): ${bundle.jsMinifiedBytes} B minified, ${bundle.jsGzipBytes} B gzipped; nacre.css ${bundle.cssBytes} B, ${bundle.cssGzipBytes} B gzipped`,
  );
  for (const adapter of adapters) {
    console.log(
      `${adapter.name} adds (beyond the core): ${adapter.jsMinifiedBytes} B minified, ${adapter.jsGzipBytes} B gzipped`,
    );
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
