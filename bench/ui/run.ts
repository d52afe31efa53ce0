/**
 * The UI bench, one run in Chromium: a 10,000-message chat built from the recorded chats (../shared/data/conversations,
 * or test-fixtures/chats in a clone without it; with their long tool output), Nacre's MessageList against a naive list (one `<li>` per message), against Nacre at 200
 * messages, and against assistant-ui's thread primitives over `useExternalStoreRuntime` on the same chat.
 *
 *   node --conditions=source --import tsx bench/ui/run.ts [--json] [--messages 10000] [--small 200] [--rounds 3]
 *        [--measures load,stream,scroll,divider]
 *
 * Each measure runs on a fresh page; the opening measures take the median of `--rounds` (assistant-ui: one).
 * With --json, exactly one JSON object goes to stdout; diagnostics go to stderr. With NACRE_BENCH_TRACE=<prefix>,
 * each scroll measure also writes a Chromium trace (DevTools' Performance panel opens it) to <prefix>-<list>.json.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import type { ChatMessage } from "@conch/engine-client";
import { loadConversations } from "@conch/fake-provider";
import react from "@vitejs/plugin-react";
import { type Browser, chromium } from "playwright-core";
import { build, defaultClientConditions, preview } from "vite";
import { chromiumArgs, chromiumPath } from "../../scripts/chromium.js";
import { defaultConversations } from "../shared-data.js";
import { round } from "../stats.js";
import { adapterEntrySizes, libraryBundleSize } from "./adapter-sizes.js";
import type { DividerSample, Kind, LoadSample, ReplyKind, ScrollSample, StreamSample } from "./page/main.js";

/** An opening sample with the main thread's whole work from the mount until idle, read over the DevTools protocol. */
type LoadResult = LoadSample & { mainThreadMs: number };

const { values } = parseArgs({
  options: {
    json: { type: "boolean", default: false },
    messages: { type: "string", default: "10000" },
    small: { type: "string", default: "200" },
    // Rounds of the opening measures (each on a fresh page, the lists interleaved); the median is reported.
    rounds: { type: "string", default: "3" },
    // assistant-ui streams over a shorter chat: at 10,000 messages one of its commits takes seconds, and a
    // 400-delta reply would take most of an hour.
    "aui-stream-messages": { type: "string", default: "1000" },
    // Some measures only (comma-separated: load, stream, scroll, divider), to look into one.
    measures: { type: "string", default: "load,stream,scroll,divider" },
  },
});
const measures = new Set(values.measures.split(","));
const count = Number(values.messages);
const small = Number(values.small);
const rounds = Number(values.rounds);
const auiStreamMessages = Number(values["aui-stream-messages"]);
const tracePrefix = process.env.NACRE_BENCH_TRACE;
const log = (...args: unknown[]) => console.error("[bench/ui]", ...args);

const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
const pageRoot = fileURLToPath(new URL("./page", import.meta.url));
const work = mkdtempSync(join(tmpdir(), "nacre-bench-"));

/** `count` messages from the real conversations, one after another, numbered again from 0. */
function chatOf(total: number): { messages: ChatMessage[]; toolCharacters: number; longestToolOutput: number } {
  const conversations = loadConversations(defaultConversations.path);
  const messages: ChatMessage[] = [];
  let toolCharacters = 0;
  let longestToolOutput = 0;
  for (let index = 0; messages.length < total; index += 1) {
    const conversation = conversations[index % conversations.length];
    for (const message of conversation?.messages ?? []) {
      if (messages.length >= total) break;
      for (const part of message.parts) {
        if (part.type === "tool-result") {
          toolCharacters += part.text.length;
          longestToolOutput = Math.max(longestToolOutput, part.text.length);
        }
      }
      messages.push({ ...message, seq: messages.length });
    }
  }
  return { messages, toolCharacters, longestToolOutput };
}

async function bundleSize(entry: string, fileName: string) {
  const outDir = join(work, `bundle-${fileName}`);
  const external = [
    /^react($|\/)/,
    /^react-dom($|\/)/,
    /^@conch\/engine-client($|\/)/,
    /^@conch\/nacre($|\/)/,
    /^@radix-ui\//,
    /^@tanstack\/react-query($|\/)/,
    /^cmdk($|\/)/,
    /^react-markdown($|\/)/,
    /^remark-gfm($|\/)/,
    /^remark-parse($|\/)/,
    /^unified($|\/)/,
  ];
  // The entry itself is bundled; only other packages stay out.
  return libraryBundleSize(
    join(repoRoot, entry),
    outDir,
    (id) => !id.startsWith(".") && !id.startsWith("/") && external.some((re) => re.test(id)),
  );
}

async function onFreshPage<T>(
  browser: Browser,
  url: string,
  run: (page: import("playwright-core").Page) => Promise<T>,
) {
  const page = await browser.newPage({ viewport: { width: 1000, height: 800 } });
  try {
    await page.goto(url);
    await page.waitForFunction(() => "nacreBench" in window);
    return await run(page);
  } finally {
    await page.close();
  }
}

async function main() {
  log("bundle sizes…");
  const core = await bundleSize("packages/nacre/src/index.ts", "nacre");
  const markdown = await bundleSize("packages/nacre/src/markdown/index.ts", "markdown");
  const adapters = await adapterEntrySizes(repoRoot, work);

  log(`building a ${count}-message chat from ${defaultConversations.path}…`);
  const chat = chatOf(count);
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
  writeFileSync(join(outDir, "chat.json"), JSON.stringify({ messages: chat.messages }));
  const server = await preview({
    configFile: false,
    root: pageRoot,
    logLevel: "silent",
    build: { outDir },
    // Cross-origin isolated, so that the page's clock (and React's Profiler) reads in microseconds, not 0.1 ms
    // steps: a delta's commit takes a few tenths of a millisecond.
    preview: {
      host: "127.0.0.1",
      port: 0,
      headers: { "Cross-Origin-Opener-Policy": "same-origin", "Cross-Origin-Embedder-Policy": "require-corp" },
    },
  });
  const url = server.resolvedUrls?.local[0];
  if (!url) throw new Error("vite preview gave no URL");

  const browser = await chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    // gc() before reading the heap, and the heap's real size (not bucketed).
    args: [...chromiumArgs, "--js-flags=--expose-gc", "--enable-precise-memory-info"],
  });
  const load: Record<string, LoadResult> = {};
  const stream: Record<string, StreamSample> = {};
  const scroll: Record<string, ScrollSample> = {};
  let divider: DividerSample | null = null;
  let crossOriginIsolated = false;
  try {
    // A warm-up page (the browser's caches), left out; and whether the clock is fine-grained.
    await onFreshPage(browser, url, (page) => page.evaluate((n) => window.nacreBench.load("nacre", n), small));
    crossOriginIsolated = await onFreshPage(browser, url, (page) => page.evaluate(() => window.crossOriginIsolated));
    log(`cross-origin isolated (a fine-grained clock): ${crossOriginIsolated}`);
    const loads: Array<[string, Kind, number]> = [
      ["nacre", "nacre", count],
      ["naive", "naive", count],
      ["aui", "aui", count],
      ["nacreSmall", "nacre", small],
    ];
    const loadRounds: Record<string, LoadResult[]> = {};
    for (let index = 0; index < (measures.has("load") ? rounds : 0); index += 1) {
      for (const [name, kind, messages] of loads) {
        // assistant-ui takes tens of seconds at 10,000 messages: one round of it.
        if (kind === "aui" && index > 0) continue;
        const sample = await onFreshPage(browser, url, async (page) => {
          // All the main thread's work (script, style, layout, paint), not only React's: work a list moves out of
          // React (DOM made by hand) still counts here.
          const cdp = await page.context().newCDPSession(page);
          await cdp.send("Performance.enable");
          const taskSeconds = async () =>
            (await cdp.send("Performance.getMetrics")).metrics.find((metric) => metric.name === "TaskDuration")
              ?.value ?? Number.NaN;
          const before = await taskSeconds();
          const loaded = await page.evaluate(([k, n]) => window.nacreBench.load(k, n), [kind, messages] as const);
          return { ...loaded, mainThreadMs: ((await taskSeconds()) - before) * 1000 };
        });
        const samples = loadRounds[name] ?? [];
        samples.push(sample);
        loadRounds[name] = samples;
        log(
          `load ${name} round ${index}: first frame ${round(sample.firstFrameMs, 1)} ms, render work ${round(sample.renderWorkMs, 1)} ms, main thread ${round(sample.mainThreadMs, 1)} ms, heap ${round(sample.heapBytes / 1_048_576, 2)} MB`,
        );
      }
    }
    const medianOf = (list: readonly number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)] ?? 0;
    for (const [name, samples] of Object.entries(loadRounds)) {
      load[name] = {
        firstFrameMs: medianOf(samples.map((sample) => sample.firstFrameMs)),
        renderWorkMs: medianOf(samples.map((sample) => sample.renderWorkMs)),
        mainThreadMs: medianOf(samples.map((sample) => sample.mainThreadMs)),
        commits: medianOf(samples.map((sample) => sample.commits)),
        heapBytes: medianOf(samples.map((sample) => sample.heapBytes)),
        rowsInPage: samples[0]?.rowsInPage ?? 0,
      };
    }
    for (const replyKind of measures.has("stream") ? (["markdown-4k", "code-96k"] as const) : []) {
      for (const kind of ["nacre", "naive", "aui"] as const) {
        const name = `${kind}:${replyKind}`;
        const messages = kind === "aui" ? Math.min(count, auiStreamMessages) : count;
        stream[name] = await onFreshPage(browser, url, (page) =>
          page.evaluate(([k, n, r]) => window.nacreBench.stream(k, n, r), [kind, messages, replyKind] as const),
        );
        log(`stream ${name}: median ${round(stream[name]?.medianMs ?? 0, 2)} ms over ${stream[name]?.commits} commits`);
      }
    }
    for (const kind of measures.has("scroll") ? (["nacre", "naive"] as const) : []) {
      scroll[kind] = await onFreshPage(browser, url, async (page) => {
        if (tracePrefix) await browser.startTracing(page, { path: `${tracePrefix}-${kind}.json` });
        const sample = await page.evaluate(([k, n]) => window.nacreBench.scroll(k, n), [kind, count] as const);
        if (tracePrefix) await browser.stopTracing();
        return sample;
      });
      log(`scroll ${kind}: ${JSON.stringify(scroll[kind])}`);
    }
    if (measures.has("divider")) {
      divider = await onFreshPage(browser, url, (page) => page.evaluate((n) => window.nacreBench.divider(n), count));
      log(`divider: ${round(divider.reactMs, 2)} ms of React work`);
    }
  } finally {
    await browser.close();
    await new Promise<void>((resolve) => server.httpServer.close(() => resolve()));
    rmSync(work, { recursive: true, force: true });
  }

  const ratio = (a: number | undefined, b: number | undefined) => round((a ?? Number.NaN) / (b ?? Number.NaN), 2);
  const streamRatios = (replyKind: ReplyKind) => {
    const nacre = stream[`nacre:${replyKind}`];
    const naive = stream[`naive:${replyKind}`];
    const aui = stream[`aui:${replyKind}`];
    return {
      lastTenthOverFirstTenth: ratio(nacre?.lastTenthMs, nacre?.firstTenthMs),
      lastTenthVsNaive: ratio(nacre?.lastTenthMs, naive?.lastTenthMs),
      medianVsNaive: ratio(nacre?.medianMs, naive?.medianMs),
      medianVsAui: ratio(nacre?.medianMs, aui?.medianMs),
    };
  };
  const result = {
    bench: "ui",
    messages: count,
    small,
    rounds,
    auiStreamMessages: Math.min(count, auiStreamMessages),
    chromium: browser.version(),
    crossOriginIsolated,
    chat: {
      messages: chat.messages.length,
      toolCharacters: chat.toolCharacters,
      longestToolOutput: chat.longestToolOutput,
    },
    load,
    stream,
    scroll,
    divider,
    ratios: {
      firstFrameVsSmall: ratio(load.nacre?.firstFrameMs, load.nacreSmall?.firstFrameMs),
      firstFrameVsNaive: ratio(load.nacre?.firstFrameMs, load.naive?.firstFrameMs),
      firstFrameVsAui: ratio(load.nacre?.firstFrameMs, load.aui?.firstFrameMs),
      renderWorkVsNaive: ratio(load.nacre?.renderWorkMs, load.naive?.renderWorkMs),
      renderWorkVsAui: ratio(load.nacre?.renderWorkMs, load.aui?.renderWorkMs),
      mainThreadVsNaive: ratio(load.nacre?.mainThreadMs, load.naive?.mainThreadMs),
      heapVsNaive: ratio(load.nacre?.heapBytes, load.naive?.heapBytes),
      heapVsAui: ratio(load.nacre?.heapBytes, load.aui?.heapBytes),
      markdown4k: streamRatios("markdown-4k"),
      code96k: streamRatios("code-96k"),
      scrollLongestTaskVsNaive: ratio(scroll.nacre?.longestTaskMs, scroll.naive?.longestTaskMs),
      scrollLongestFrameVsNaive: ratio(scroll.nacre?.longestFrameMs, scroll.naive?.longestFrameMs),
      dividerVsFrame: ratio(divider?.reactMs, 16),
    },
    bundle: { core, markdown, adapters },
  };

  if (values.json) {
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return;
  }
  console.log(JSON.stringify(result, null, 2));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
