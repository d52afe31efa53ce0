import "@conch/nacre/nacre.css";
import type { ChatMessage, ChatSnapshot, Engine, EngineEvent } from "@conch/engine-client";
import { createMockEngine } from "@conch/engine-client/mock";
import { ConversationProvider, MessageList } from "@conch/nacre";
import { Profiler, type ProfilerOnRenderCallback, useEffect, useState } from "react";
import { createRoot, type Root } from "react-dom/client";

/** A deterministic long chat: varied lengths, some lines, like a real one. */
function longChat(count: number): ChatMessage[] {
  let state = 7;
  const next = () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
  const words =
    "the invoice export reads each month and writes one row per customer with the VAT number and totals".split(" ");
  const text = (length: number) => {
    const out: string[] = [];
    for (let index = 0; index < length; index += 1) {
      out.push(words[Math.floor(next() * words.length)] as string);
      if (next() < 0.04) out.push("\n");
    }
    return out.join(" ");
  };
  const messages: ChatMessage[] = [];
  for (let seq = 0; seq < count; seq += 1) {
    const role = seq % 2 === 0 ? "user" : "assistant";
    messages.push({
      seq,
      role,
      parts: [
        { type: "text", text: text(role === "user" ? 10 + Math.floor(next() * 30) : 30 + Math.floor(next() * 120)) },
      ],
    });
  }
  return messages;
}

/** The naive list: one state for everything, every row re-rendered on every delta. */
function NaiveList({ engine, chatId, initial }: { engine: Engine; chatId: string; initial: ChatSnapshot }) {
  const [state, setState] = useState({ messages: initial.messages, streaming: "" });
  useEffect(
    () =>
      engine.subscribe((event: EngineEvent) => {
        if (event.chatId !== chatId) return;
        if (event.type === "turn-start") setState((s) => ({ ...s, messages: [...s.messages, event.message] }));
        if (event.type === "text-delta") setState((s) => ({ ...s, streaming: s.streaming + event.delta }));
        if (event.type === "message-end")
          setState((s) => ({ messages: [...s.messages, event.message], streaming: "" }));
      }),
    [engine, chatId],
  );
  return (
    <div style={{ overflowY: "auto" }}>
      <ol>
        {state.messages.map((message) => (
          <li key={message.seq} data-seq={message.seq} data-role={message.role}>
            <span>{message.role === "user" ? "You" : "Model"}</span>
            {message.parts.map((part, index) =>
              part.type === "text" ? (
                // biome-ignore lint/suspicious/noArrayIndexKey: parts have no identity but their place
                <div key={index}>{part.text}</div>
              ) : null,
            )}
          </li>
        ))}
        {state.streaming ? <li data-streaming="">{state.streaming}</li> : null}
      </ol>
    </div>
  );
}

interface Sample {
  /** From `render()` to the first commit with rows, and to the frame after it (layout and paint included). */
  firstCommitMs: number;
  firstFrameMs: number;
  /** From `render()` to the frame after every message is in the page. */
  allRowsMs: number;
  /** React Profiler actualDuration of the commits up to the one with every row. */
  mountRenderMs: number;
  /** React Profiler actualDuration of each commit while the reply streamed. */
  deltaCommitsMs: number[];
  deltas: number;
  rows: number;
}

const frame = () => new Promise<void>((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));

async function run(kind: "nacre" | "naive", count: number, replyChars: number): Promise<Sample> {
  const reply = "word ".repeat(Math.ceil(replyChars / 5)).slice(0, replyChars);
  const messages = longChat(count);
  const engine = createMockEngine({ chats: { c: { messages } }, turns: { reply }, chunkSize: 6 });
  // The naive list gets the chat as a prop; Nacre loads it from the (in-memory) engine through its query.
  const snapshot = await engine.loadChat("c");

  const container = document.getElementById("root") as HTMLElement;
  const commits: Array<{ phase: string; actual: number; at: number }> = [];
  // The first commit that shows the end of the chat, and the one after which every message is in the page.
  let rowsCommit = -1;
  let allRowsCommit = -1;
  const onRender: ProfilerOnRenderCallback = (_id, phase, actualDuration) => {
    commits.push({ phase, actual: actualDuration, at: performance.now() });
    if (rowsCommit === -1 && container.querySelector(`li[data-seq="${count - 1}"]`)) rowsCommit = commits.length - 1;
    if (allRowsCommit === -1 && container.querySelectorAll("li[data-seq]").length >= count) {
      allRowsCommit = commits.length - 1;
    }
  };
  const root: Root = createRoot(container);
  const started = performance.now();
  root.render(
    <Profiler id={kind} onRender={onRender}>
      {kind === "nacre" ? (
        <ConversationProvider engine={engine} chatId="c">
          <MessageList.Root />
        </ConversationProvider>
      ) : (
        <NaiveList engine={engine} chatId="c" initial={snapshot} />
      )}
    </Profiler>,
  );
  while (rowsCommit === -1) await new Promise((resolve) => setTimeout(resolve, 0));
  const firstCommit = commits[rowsCommit];
  await frame();
  const firstFrame = performance.now();
  while (allRowsCommit === -1) await new Promise((resolve) => setTimeout(resolve, 0));
  await frame();
  const allRows = performance.now();
  const mountCommits = commits.length;

  let deltas = 0;
  engine.subscribe((event) => {
    if (event.type === "text-delta") deltas += 1;
  });
  await engine.sendTurn({ chatId: "c", seq: count, text: "and now?" }).done;
  await frame();
  const streamCommits = commits.slice(mountCommits);
  const rows = container.querySelectorAll("li").length;
  root.unmount();
  return {
    firstCommitMs: (firstCommit?.at ?? firstFrame) - started,
    firstFrameMs: firstFrame - started,
    allRowsMs: allRows - started,
    mountRenderMs: commits.slice(0, mountCommits).reduce((sum, commit) => sum + commit.actual, 0),
    deltaCommitsMs: streamCommits.map((commit) => commit.actual),
    deltas,
    rows,
  };
}

declare global {
  interface Window {
    nacreBench: { run: typeof run };
  }
}
window.nacreBench = { run };
