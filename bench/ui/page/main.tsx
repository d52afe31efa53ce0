import "@conch/nacre/nacre.css";
import {
  AssistantRuntimeProvider,
  MessagePrimitive,
  type ThreadMessageLike,
  ThreadPrimitive,
  useExternalStoreRuntime,
} from "@assistant-ui/react";
import type { ChatMessage, Engine, EngineEvent, SummaryState } from "@conch/engine-client";
import { createMockEngine, type MockEngine } from "@conch/engine-client/mock";
import { ConversationProvider, MessageList, RenderTextProvider } from "@conch/nacre";
import { renderMarkdown, renderMarkdownBlock } from "@conch/nacre/markdown";
import { Profiler, type ProfilerOnRenderCallback, useEffect, useLayoutEffect, useRef, useState } from "react";
import { createRoot, type Root } from "react-dom/client";

/** The list under test: Nacre's MessageList, a naive list, or assistant-ui's thread primitives. */
export type Kind = "nacre" | "naive" | "aui";
/** The replies streamed: a 4,000-character Markdown reply with a code block, and a 96 KB reply of short code lines. */
export type ReplyKind = "markdown-4k" | "code-96k";

/** What a message shows as text in the naive list and in assistant-ui (Nacre renders its parts itself). */
function plainText(message: ChatMessage): string {
  return message.parts
    .map((part) => {
      switch (part.type) {
        case "text":
          return part.text;
        case "tool-call":
          return `${part.name}(${part.arguments})`;
        case "tool-result":
          return part.text;
        case "picture":
          return `[${part.name}]`;
        case "thinking":
          return "";
        default:
          return part satisfies never;
      }
    })
    .filter((text) => text !== "")
    .join("\n");
}

/** One state for everything: every row re-rendered whenever anything changes (one `<li>` per message). */
function NaiveList({ engine, initial }: { engine: Engine; initial: readonly ChatMessage[] }) {
  const [state, setState] = useState({ messages: initial, streaming: "" });
  const scroller = useRef<HTMLDivElement | null>(null);
  // Opens at the end, as a chat does.
  useLayoutEffect(() => {
    const node = scroller.current;
    if (node) node.scrollTop = node.scrollHeight;
  }, []);
  useEffect(
    () =>
      engine.subscribe((event: EngineEvent) => {
        if (event.chatId !== "c") return;
        if (event.type === "turn-start") setState((s) => ({ ...s, messages: [...s.messages, event.message] }));
        if (event.type === "text-delta") setState((s) => ({ ...s, streaming: s.streaming + event.delta }));
        if (event.type === "message-end")
          setState((s) => ({ messages: [...s.messages, event.message], streaming: "" }));
      }),
    [engine],
  );
  return (
    <div data-bench-scroller="" ref={scroller} style={{ overflowY: "auto", height: "100%" }}>
      <ol>
        {state.messages.map((message) => (
          <li key={message.seq} data-seq={message.seq} style={{ whiteSpace: "pre-wrap" }}>
            {plainText(message)}
          </li>
        ))}
        {state.streaming ? (
          <li data-streaming="" style={{ whiteSpace: "pre-wrap" }}>
            {state.streaming}
          </li>
        ) : null}
      </ol>
    </div>
  );
}

function toThreadMessage(message: ChatMessage): ThreadMessageLike {
  return {
    id: String(message.seq),
    role: message.role === "user" ? "user" : "assistant",
    content: [{ type: "text", text: plainText(message) }],
  };
}

/** assistant-ui's thread primitives over `useExternalStoreRuntime`, fed by the same engine's events. */
function AuiThread({ engine, initial }: { engine: Engine; initial: readonly ChatMessage[] }) {
  const [state, setState] = useState({ messages: initial, streaming: null as ChatMessage | null });
  useEffect(
    () =>
      engine.subscribe((event: EngineEvent) => {
        if (event.chatId !== "c") return;
        if (event.type === "turn-start") setState((s) => ({ ...s, messages: [...s.messages, event.message] }));
        if (event.type === "message-start")
          setState((s) => ({ ...s, streaming: { seq: event.seq, role: "assistant", parts: [] } }));
        if (event.type === "text-delta")
          setState((s) => {
            const before = s.streaming?.parts[0]?.type === "text" ? s.streaming.parts[0].text : "";
            return {
              ...s,
              streaming: { seq: event.seq, role: "assistant", parts: [{ type: "text", text: before + event.delta }] },
            };
          });
        if (event.type === "message-end")
          setState((s) => ({ messages: [...s.messages, event.message], streaming: null }));
      }),
    [engine],
  );
  const messages = state.streaming ? [...state.messages, state.streaming] : state.messages;
  const runtime = useExternalStoreRuntime<ChatMessage>({
    messages,
    isRunning: state.streaming !== null,
    convertMessage: toThreadMessage,
    onNew: async () => {},
  });
  return (
    <AssistantRuntimeProvider runtime={runtime}>
      <ThreadPrimitive.Root style={{ height: "100%" }}>
        <ThreadPrimitive.Viewport data-bench-scroller="" style={{ overflowY: "auto", height: "100%" }}>
          <ThreadPrimitive.Messages>
            {({ message }) => (
              <MessagePrimitive.Root data-seq={message.id} style={{ whiteSpace: "pre-wrap" }}>
                <MessagePrimitive.Parts />
              </MessagePrimitive.Root>
            )}
          </ThreadPrimitive.Messages>
        </ThreadPrimitive.Viewport>
      </ThreadPrimitive.Root>
    </AssistantRuntimeProvider>
  );
}

function reply(kind: ReplyKind): { text: string; chunkSize: number } {
  switch (kind) {
    case "markdown-4k": {
      const prose = "The export reads each month and writes one row per customer, with the VAT number and the totals. ";
      const code = Array.from({ length: 40 }, (_, index) => `  const row${index} = toRow(customers[${index}]);`);
      const parts = [
        "## What changed",
        "",
        prose.repeat(3),
        "",
        "- the **date format** is ISO 8601",
        "- totals are `Decimal`, never floats",
        "- one file per month",
        "",
        "```ts",
        ...code,
        "```",
        "",
        "| step | who | when |",
        "| --- | --- | --- |",
        "| build | ana | May |",
        "| check | bo | June |",
        "",
        prose.repeat(40),
      ];
      return { text: parts.join("\n").slice(0, 4_000), chunkSize: 20 };
    }
    case "code-96k": {
      const lines: string[] = [];
      let length = 0;
      for (let index = 0; length < 96_000; index += 1) {
        const line = `  const line_${index} = ${index};`;
        lines.push(line);
        length += line.length + 1;
      }
      return { text: `\`\`\`ts\n${lines.join("\n")}\n\`\`\`\n`, chunkSize: 240 };
    }
    default:
      return kind satisfies never;
  }
}

interface Commit {
  readonly actual: number;
  readonly at: number;
}

const frame = () => new Promise<void>((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let chat: { messages: ChatMessage[] } | null = null;
async function loadChatFile(): Promise<ChatMessage[]> {
  chat ??= (await (await fetch("./chat.json")).json()) as { messages: ChatMessage[] };
  return chat.messages;
}

/** A mounted list and what its commits cost. */
interface Mounted {
  readonly engine: MockEngine;
  readonly commits: Commit[];
  readonly root: Root;
  readonly count: number;
  readonly firstFrameMs: number;
}

function heapBytes(): number {
  (window as { gc?: () => void }).gc?.();
  return (performance as { memory?: { usedJSHeapSize: number } }).memory?.usedJSHeapSize ?? Number.NaN;
}

/** Mounts `kind` over the last `count` messages; the clock starts once the snapshot is in memory. */
async function mount(kind: Kind, count: number, replyKind?: ReplyKind): Promise<Mounted> {
  const all = await loadChatFile();
  // The chat settled before the clock, for every list alike: V8 hands a string to the page without copying it
  // only once it has left the young generation, so text put in the page while young lives in the JS heap twice.
  (window as { gc?: () => void }).gc?.();
  const messages = all.slice(all.length - count).map((message, seq) => ({ ...message, seq }));
  const firstKeptSeq = Math.max(1, count - 1_000);
  const summary: SummaryState = {
    text: "The person and the model set up the export; still open: the date format.",
    model: "mock-small",
    firstKeptSeq,
    reason: "budget",
    before: { messages: count, tokens: 400_000 },
    after: { messages: count - firstKeptSeq, tokens: 30_000 },
    at: 0,
  };
  const streamed = replyKind ? reply(replyKind) : null;
  // The reply's deltas a task apart (1 ms), so that none are coalesced into one commit.
  const engine = createMockEngine({
    chats: { c: { messages, summary } },
    ...(streamed ? { turns: { reply: streamed.text, delayMs: 1 }, chunkSize: streamed.chunkSize } : {}),
  });
  const container = document.getElementById("root") as HTMLElement;
  const commits: Commit[] = [];
  const onRender: ProfilerOnRenderCallback = (_id, _phase, actualDuration) => {
    commits.push({ actual: actualDuration, at: performance.now() });
  };
  const root = createRoot(container);
  const last = `[data-seq="${count - 1}"]`;
  const started = performance.now();
  root.render(
    <Profiler id={kind} onRender={onRender}>
      {kind === "nacre" ? (
        <RenderTextProvider renderText={renderMarkdown} renderBlock={renderMarkdownBlock}>
          <ConversationProvider engine={engine} chatId="c">
            <MessageList.Root style={{ height: "100%", overflowY: "auto" }} data-bench-scroller="" />
          </ConversationProvider>
        </RenderTextProvider>
      ) : kind === "naive" ? (
        <NaiveList engine={engine} initial={messages} />
      ) : (
        <AuiThread engine={engine} initial={messages} />
      )}
    </Profiler>,
  );
  while (!container.querySelector(last)) await new Promise((resolve) => setTimeout(resolve, 0));
  await frame();
  const firstFrameMs = performance.now() - started;
  return { engine, commits, root, count, firstFrameMs };
}

/** Waits until no commit came for `quietMs` (and Nacre's list has mounted every row). */
async function idle(mounted: Mounted, quietMs = 400) {
  for (;;) {
    const before = mounted.commits.length;
    await sleep(quietMs);
    const rendering = document.querySelector("[data-nacre-message-items][data-rendering]");
    if (mounted.commits.length === before && !rendering) return;
  }
}

const sum = (list: readonly Commit[]) => list.reduce((total, commit) => total + commit.actual, 0);
function median(list: readonly number[]): number {
  const sorted = [...list].sort((a, b) => a - b);
  return sorted.length ? (sorted[Math.floor(sorted.length / 2)] as number) : Number.NaN;
}

export interface LoadSample {
  firstFrameMs: number;
  renderWorkMs: number;
  commits: number;
  heapBytes: number;
  rowsInPage: number;
}

async function load(kind: Kind, count: number): Promise<LoadSample> {
  const mounted = await mount(kind, count);
  await idle(mounted);
  const sample = {
    firstFrameMs: mounted.firstFrameMs,
    renderWorkMs: sum(mounted.commits),
    commits: mounted.commits.length,
    heapBytes: heapBytes(),
    rowsInPage: document.querySelectorAll("[data-seq]").length,
  };
  mounted.root.unmount();
  return sample;
}

export interface StreamSample {
  deltas: number;
  commits: number;
  firstTenthMs: number;
  lastTenthMs: number;
  medianMs: number;
}

async function stream(kind: Kind, count: number, replyKind: ReplyKind): Promise<StreamSample> {
  const mounted = await mount(kind, count, replyKind);
  await idle(mounted);
  const { engine } = mounted;
  let deltas = 0;
  const deltaTimes: number[] = [];
  engine.subscribe((event) => {
    if (event.type === "text-delta") {
      deltas += 1;
      deltaTimes.push(performance.now());
    }
  });
  const before = mounted.commits.length;
  await engine.sendTurn({ chatId: "c", seq: count, text: "And now?" }).done;
  await frame();
  const during = mounted.commits.slice(before).filter((commit) => commit.at <= (deltaTimes.at(-1) ?? 0) + 50);
  const durations = during.map((commit) => commit.actual);
  const tenth = Math.max(1, Math.floor(durations.length / 10));
  mounted.root.unmount();
  return {
    deltas,
    commits: durations.length,
    firstTenthMs: median(durations.slice(0, tenth)),
    lastTenthMs: median(durations.slice(-tenth)),
    medianMs: median(durations),
  };
}

export interface ScrollSample {
  longestTaskMs: number;
  longestFrameMs: number;
  frames: number;
  reachedTop: boolean;
  /** React's share: the longest commit while scrolling, and all of them. */
  longestCommitMs: number;
  commitMs: number;
}

async function scroll(kind: Kind, count: number): Promise<ScrollSample> {
  const mounted = await mount(kind, count);
  await idle(mounted);
  const scroller = document.querySelector("[data-bench-scroller]") as HTMLElement;
  let longestTask = 0;
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) longestTask = Math.max(longestTask, entry.duration);
  });
  observer.observe({ type: "longtask", buffered: false });
  let longestFrame = 0;
  let frames = 0;
  const commitsBefore = mounted.commits.length;
  let previous = performance.now();
  // Five screens a frame, from the end to the top (at most 3,000 frames or 90 s: a list that kept pulling the
  // reader back would never get there, and that shows as `reachedTop: false`).
  const began = performance.now();
  while (scroller.scrollTop > 0 && frames < 3_000 && performance.now() - began < 90_000) {
    scroller.scrollTop = Math.max(0, scroller.scrollTop - scroller.clientHeight * 5);
    await new Promise((resolve) => requestAnimationFrame(resolve));
    const now = performance.now();
    longestFrame = Math.max(longestFrame, now - previous);
    previous = now;
    frames += 1;
  }
  await sleep(200);
  observer.disconnect();
  mounted.root.unmount();
  const during = mounted.commits.slice(commitsBefore).map((commit) => commit.actual);
  return {
    longestTaskMs: longestTask,
    longestFrameMs: longestFrame,
    frames,
    reachedTop: scroller.scrollTop === 0,
    longestCommitMs: Math.max(0, ...during),
    commitMs: during.reduce((total, each) => total + each, 0),
  };
}

export interface DividerSample {
  reactMs: number;
  toFrameMs: number;
  commits: number;
}

/** Opens the divider of a long chat (scrolled to it first): the React work of that, against one 16 ms frame. */
async function divider(count: number): Promise<DividerSample> {
  const mounted = await mount("nacre", count);
  await idle(mounted);
  const row = document.querySelector("[data-nacre-divider-row]") as HTMLElement;
  row.scrollIntoView({ block: "center" });
  while (!document.querySelector("[data-nacre-summary-divider-trigger]")) await frame();
  await idle(mounted, 300);
  const trigger = document.querySelector("[data-nacre-summary-divider-trigger]") as HTMLElement;
  const before = mounted.commits.length;
  const clicked = performance.now();
  trigger.click();
  await new Promise((resolve) => requestAnimationFrame(resolve));
  const toFrameMs = performance.now() - clicked;
  await sleep(300);
  const after = mounted.commits.slice(before);
  mounted.root.unmount();
  return { reactMs: sum(after), toFrameMs, commits: after.length };
}

declare global {
  interface Window {
    nacreBench: {
      load: typeof load;
      stream: typeof stream;
      scroll: typeof scroll;
      divider: typeof divider;
    };
  }
}
window.nacreBench = { load, stream, scroll, divider };
