import type { ChatMessage, ChatSnapshot, Engine, EngineEvent } from "@conch/engine-client";
import { useCallback, useEffect, useRef, useState } from "react";

function textOf(message: ChatMessage): string {
  return message.parts.map((part) => (part.type === "text" ? part.text : "")).join("");
}

/** A plain chat page straight on an engine (the Nacre components replace it piece by piece). */
export function ChatDemo({ engine, chatId }: { engine: Engine; chatId: string }) {
  const [chat, setChat] = useState<ChatSnapshot | null>(null);
  const [streaming, setStreaming] = useState<{ seq: number; text: string } | null>(null);
  const [status, setStatus] = useState<"idle" | "compacting" | "streaming">("idle");
  const [draft, setDraft] = useState("");
  const controller = useRef<AbortController | null>(null);

  const reload = useCallback(async () => setChat(await engine.loadChat(chatId)), [engine, chatId]);

  useEffect(() => {
    void reload();
    return engine.subscribe((event: EngineEvent) => {
      if (event.chatId !== chatId) return;
      switch (event.type) {
        case "compacting":
          setStatus("compacting");
          break;
        case "message-start":
          setStatus("streaming");
          setStreaming({ seq: event.seq, text: "" });
          break;
        case "text-delta":
          setStreaming((current) => (current ? { ...current, text: current.text + event.delta } : current));
          break;
        case "turn-start":
        case "compacted":
        case "message-end":
        case "turn-end":
        case "turn-problem":
        case "health-note":
          if (event.type === "message-end" || event.type === "turn-end") setStreaming(null);
          if (event.type !== "turn-start") setStatus(event.type === "turn-end" ? "idle" : "streaming");
          void reload();
          break;
        default:
          break;
      }
    });
  }, [engine, chatId, reload]);

  const send = () => {
    const text = draft.trim();
    if (!text || !chat) return;
    setDraft("");
    controller.current = new AbortController();
    const seq = (chat.messages.at(-1)?.seq ?? -1) + 1;
    engine.sendTurn({ chatId, seq, text, abortSignal: controller.current.signal });
  };

  const firstKeptSeq = chat?.summary?.firstKeptSeq ?? null;
  return (
    <main style={{ maxWidth: 760, margin: "0 auto", fontFamily: "system-ui, sans-serif" }}>
      <h1 style={{ fontSize: 18 }}>Demo chat on the {engine.displayName}</h1>
      <ol aria-label="Messages" style={{ listStyle: "none", padding: 0 }}>
        {chat?.messages.map((message) => (
          <li key={message.seq}>
            {message.seq === firstKeptSeq && chat.summary ? (
              <details data-testid="summary-line" style={{ color: "#666", margin: "12px 0" }}>
                <summary>Earlier messages are summarised for {chat.model.displayName}</summary>
                <p style={{ whiteSpace: "pre-wrap" }}>{chat.summary.text}</p>
              </details>
            ) : null}
            <p data-role={message.role} style={{ whiteSpace: "pre-wrap" }}>
              <strong>{message.role === "user" ? "You" : "Model"}:</strong> {textOf(message)}
            </p>
          </li>
        ))}
        {streaming ? (
          <li>
            <p data-role="assistant" data-streaming="">
              <strong>Model:</strong> {streaming.text}
            </p>
          </li>
        ) : null}
      </ol>
      {status === "compacting" ? <p role="status">Summarising earlier messages…</p> : null}
      <form
        onSubmit={(event) => {
          event.preventDefault();
          send();
        }}
      >
        <label htmlFor="composer">Message</label>
        <textarea
          id="composer"
          value={draft}
          onChange={(event) => setDraft(event.target.value)}
          rows={3}
          style={{ width: "100%" }}
        />
        <button type="submit" disabled={status !== "idle"}>
          Send
        </button>
      </form>
    </main>
  );
}
