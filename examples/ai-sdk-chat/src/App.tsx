// A useChat page with AI Elements-style markup, on Nacre's engine behind one route (server.ts). The Nacre lines:
// the transport's request (last message and seq only), the divider, the card and the meter from the data parts,
// how an answer ended from its metadata (cut off: Continue), and the server's chats (`ChatList` over the wire
// protocol's `GET /chats`). Its look is nacre.css's variables, light and dark.
import { useChat } from "@ai-sdk/react";
import type { ChatSnapshot } from "@conch/engine-client";
import {
  answerMessageId,
  type NacreUIMessage,
  nacreChatFetch,
  nacreDivider,
  nacreNextSeq,
  nacreSendMessagesRequest,
  userMessageId,
} from "@conch/engine-client/ai-sdk";
import { createRemoteEngine, type RemoteEngine } from "@conch/engine-client/remote";
import { ContextMeter, MessageCopy, SummaryDivider, TurnProblem } from "@conch/nacre";
import { ChatList, useChats } from "@conch/nacre/chats";
import { DefaultChatTransport } from "ai";
import { type FormEvent, Fragment, useCallback, useEffect, useLayoutEffect, useRef, useState } from "react";

const firstChatId = new URLSearchParams(window.location.search).get("chat") ?? "ai-sdk-chat";

/** The chat as the route loads it, and whether its engine keeps versions (Edit and Regenerate are offered). */
async function loadChat(chatId: string): Promise<{ messages: NacreUIMessage[]; versions: boolean }> {
  // Through `nacreChatFetch`: after a stop, it waits for the turn to end, so the chat read has what it kept.
  const response = await nacreChatFetch(`/api/chat?id=${encodeURIComponent(chatId)}`);
  return (await response.json()) as { messages: NacreUIMessage[]; versions: boolean };
}

async function loadMessages(chatId: string): Promise<NacreUIMessage[]> {
  return (await loadChat(chatId)).messages;
}

export function App() {
  // The server's chat list over the wire protocol (`GET /chats`, `PATCH` and `DELETE /chats/{id}`).
  // The same engine's versions too (`GET /chats/{id}` names each message's, `POST /chats/{id}/branch` picks one).
  const [engine, setEngine] = useState<RemoteEngine | null>(null);
  useEffect(() => {
    void createRemoteEngine({ baseURL: "/api/engine" }).then(setEngine);
  }, []);
  return engine ? <WithChats engine={engine} /> : <p className="loading">Loading the chats…</p>;
}

function WithChats({ engine }: { readonly engine: RemoteEngine }) {
  const chats = useChats({
    directory: engine.directory,
    defaultCurrent: firstChatId,
    // The open chat is in the address, so a reload opens it again.
    onCurrentChange: (chatId) => window.history.replaceState(null, "", `?chat=${encodeURIComponent(chatId)}`),
  });
  return (
    <div className="chat-page">
      <ChatList.Root chats={chats} className="chat-list" />
      <ChatLoader key={chats.current} engine={engine} chatId={chats.current} onTurnEnd={chats.refresh} />
    </div>
  );
}

function ChatLoader({
  engine,
  chatId,
  onTurnEnd,
}: {
  readonly engine: RemoteEngine;
  readonly chatId: string;
  readonly onTurnEnd: () => Promise<void>;
}) {
  const [initial, setInitial] = useState<{ messages: NacreUIMessage[]; versions: boolean } | null>(null);
  useEffect(() => {
    void loadChat(chatId).then(setInitial);
  }, [chatId]);
  return initial ? (
    <Chat
      engine={engine}
      chatId={chatId}
      initial={initial.messages}
      versions={initial.versions}
      onTurnEnd={onTurnEnd}
    />
  ) : (
    <p className="loading">Loading the chat…</p>
  );
}

function Chat({
  engine,
  chatId,
  initial,
  versions,
  onTurnEnd,
}: {
  readonly engine: RemoteEngine;
  readonly chatId: string;
  readonly initial: NacreUIMessage[];
  /** Whether the engine keeps versions: then Edit and Regenerate are offered (elsewhere they would cut the log). */
  readonly versions: boolean;
  readonly onTurnEnd: () => Promise<void>;
}) {
  const [input, setInput] = useState("");
  const [note, setNote] = useState<string | null>(null);
  // The person's message being edited in place, and its new words.
  const [editing, setEditing] = useState<{ readonly id: string; readonly text: string } | null>(null);
  // Each message's versions, by its UI id, from the engine's snapshot of the active branch.
  const [siblings, setSiblings] = useState<ReadonlyMap<string, Versions>>(new Map());
  // A version is being chosen, or the log read back after one was made: nothing is sent meanwhile.
  const [switching, setSwitching] = useState(false);
  // The turn running is an edit or a regenerate: the page shows its message under the id of the one it replaced.
  const versionTurn = useRef(false);
  const readVersions = useCallback(async () => {
    if (versions) setSiblings(versionsOf(await engine.loadChat(chatId)));
  }, [versions, engine, chatId]);
  useEffect(() => {
    void readVersions();
  }, [readVersions]);
  const { messages, sendMessage, regenerate, setMessages, status, stop, error } = useChat<NacreUIMessage>({
    id: chatId,
    messages: initial,
    transport: new DefaultChatTransport({
      api: "/api/chat",
      prepareSendMessagesRequest: nacreSendMessagesRequest,
      // Stop ends the server's turn; a reload does not, and `resume` picks the running turn up again.
      fetch: nacreChatFetch,
    }),
    resume: true,
    // Health notes (a quiet heal, a summary that failed) come as transient parts: shown, never kept in a message.
    onData: (part) => {
      if (part.type === "data-nacre-health") setNote(part.data.text);
    },
    // A stopped answer keeps what the engine wrote: read the chat back, so the next seq follows it.
    // A new version (an edit, another answer) is read back too: the log names it by its own seq, and the picker
    // counts it.
    onFinish: ({ isAbort }) => {
      if (versionTurn.current) void showLog();
      else {
        if (isAbort) void loadMessages(chatId).then(setMessages);
        void readVersions();
      }
      versionTurn.current = false;
      // The list reads the chat's title (its first words) and its new place.
      void onTurnEnd();
    },
  });
  const divider = nacreDivider(messages);
  // The last answer's, live or loaded: the meter keeps its figure across a reload.
  const usage = messages.findLast((message) => message.metadata?.contextUsage)?.metadata?.contextUsage ?? null;
  const busy = status === "submitted" || status === "streaming";
  const waiting = busy || switching;
  const { scroller, atEnd, toEnd } = useFollow(messages);
  const last = messages.at(-1);
  const cutOff = status === "ready" && last?.role === "assistant" && last.metadata?.finishReason === "length";

  /** The chat as the log keeps it, its versions counted: after a new version, or a switch to one. */
  async function showLog(select?: number) {
    setSwitching(true);
    try {
      const branches = engine.capabilities.branches;
      if (select !== undefined && branches) setSiblings(versionsOf(await branches.selectBranch(chatId, select)));
      // The route's messages of the active branch: the same ids and metadata (the next seq) as a turn's.
      const [loaded] = await Promise.all([loadMessages(chatId), select === undefined ? readVersions() : null]);
      setMessages(loaded);
    } finally {
      setSwitching(false);
    }
  }

  function submit(event: FormEvent) {
    event.preventDefault();
    if (!input.trim() || waiting) return;
    // The person's own message brings them to the end, to read the answer as it comes.
    toEnd();
    void sendMessage({ text: input });
    setInput("");
  }

  return (
    <main className="chat">
      <header className="chat-header">
        <h1>useChat on Nacre</h1>
        <ContextMeter.Root usage={usage} />
      </header>
      <div className="conversation" role="log" ref={scroller}>
        <div className="conversation-content">
          {messages.map((message) => (
            <Fragment key={message.id}>
              {divider?.beforeMessageId === message.id ? (
                <SummaryDivider.Root summary={divider.summary} model="the model" />
              ) : null}
              <div
                className={`message is-${message.role}`}
                data-message-role={message.role}
                {...(message.metadata?.finishReason === "length" ? { "data-nacre-cut-off": "" } : {})}
              >
                {editing?.id === message.id ? (
                  // An edit sends the id of the message it replaces: on an engine that keeps versions (`branches`)
                  // the new words are a new version beside the old; on one that does not, it is refused.
                  <form
                    className="message-editor"
                    data-nacre-message-editor=""
                    onSubmit={(event) => {
                      event.preventDefault();
                      if (!editing.text.trim() || waiting) return;
                      setEditing(null);
                      versionTurn.current = true;
                      void sendMessage({ text: editing.text, messageId: message.id });
                    }}
                  >
                    <textarea
                      aria-label="Edit message"
                      value={editing.text}
                      onChange={(event) => setEditing({ id: message.id, text: event.target.value })}
                      onKeyDown={(event) => {
                        if (event.key === "Escape") setEditing(null);
                      }}
                    />
                    <button type="submit">Send</button>
                    <button type="button" onClick={() => setEditing(null)}>
                      Cancel
                    </button>
                  </form>
                ) : null}
                <div className="message-content" hidden={editing?.id === message.id}>
                  {message.parts.map((part, index) => {
                    const key = `${message.id}-${index}`;
                    switch (part.type) {
                      case "text":
                        // Model text is text: React escapes it, nothing is read as HTML.
                        return (
                          <div key={key} className="response">
                            {part.text}
                          </div>
                        );
                      case "data-nacre-problem":
                        return (
                          <TurnProblem.Root
                            key={key}
                            problem={part.data.problem}
                            message={textOfUser(messages, part.data.seq)}
                            onRetry={() => void regenerate()}
                            // Answers the same message again on the bigger model: a retry in place, no copy.
                            onSwitchModel={(model) => void regenerate({ headers: { "x-nacre-model": model.id } })}
                          />
                        );
                      default:
                        return null;
                    }
                  })}
                  <Ending message={message} />
                </div>
                {textOf(message) ? (
                  // Under the bubble, in the page always: shown on hover and focus (chat.css), nacre.css's buttons.
                  <div className="message-actions" data-nacre-message-actions="">
                    <MessageCopy text={textOf(message)} />
                    {!versions ? null : message.role === "user" ? (
                      <button
                        type="button"
                        data-nacre-message-edit=""
                        disabled={waiting}
                        onClick={() => setEditing({ id: message.id, text: textOf(message) })}
                      >
                        Edit
                      </button>
                    ) : (
                      // Another answer to the person's message, beside this one (where the engine keeps versions).
                      <button
                        type="button"
                        data-nacre-message-regenerate=""
                        disabled={waiting}
                        onClick={() => {
                          versionTurn.current = true;
                          void regenerate({ messageId: message.id });
                        }}
                      >
                        Regenerate
                      </button>
                    )}
                    <VersionPicker
                      versions={siblings.get(message.id)}
                      disabled={waiting}
                      onChoose={(seq) => showLog(seq)}
                    />
                  </div>
                ) : null}
              </div>
            </Fragment>
          ))}
          {busy && !(last?.role === "assistant" && textOf(last)) ? (
            <p data-nacre-pending="" role="status">
              Working…
            </p>
          ) : null}
          {cutOff ? (
            <div data-nacre-turn-end-row="">
              <button
                type="button"
                data-nacre-continue=""
                // A fixed prompt, kept as a continuation: the engine never learns from it.
                onClick={() => {
                  toEnd();
                  void sendMessage({ text: "Continue", metadata: { seq: nacreNextSeq(messages), continuation: true } });
                }}
              >
                Continue
              </button>
            </div>
          ) : null}
        </div>
        {atEnd ? null : (
          // Floats over the list's bottom edge (nacre.css) while the reader is away from the end.
          <button type="button" data-nacre-jump-to-latest="" data-state="visible" onClick={toEnd}>
            Jump to latest
          </button>
        )}
      </div>
      {note ? (
        <p className="chat-note" role="status">
          {note}
        </p>
      ) : null}
      {error ? <p className="chat-error">{error.message}</p> : null}
      <form className="prompt-input" data-nacre-composer="" onSubmit={submit}>
        <textarea
          data-nacre-composer-input=""
          aria-label="Message"
          value={input}
          onChange={(event) => setInput(event.target.value)}
          onKeyDown={(event) => {
            if (event.key === "Enter" && !event.shiftKey) submit(event);
          }}
        />
        {busy ? (
          <button type="button" data-nacre-composer-submit="" onClick={() => void stop()}>
            Stop
          </button>
        ) : (
          <button type="submit" data-nacre-composer-submit="" disabled={switching}>
            Send
          </button>
        )}
      </form>
    </main>
  );
}

/** A message's versions: the seqs of each (itself included, in seq order) and which one is shown. */
interface Versions {
  readonly seqs: readonly number[];
  readonly index: number;
}

/**
 * The versions of each message of the active branch, by the UI id the route gives it: a person's message by its
 * seq, an answer by the seq of the person's message it answers (its first message's versions are the answer's).
 */
function versionsOf(snapshot: ChatSnapshot): ReadonlyMap<string, Versions> {
  const versions = new Map<string, Versions>();
  let answering: number | null = null;
  for (const message of snapshot.messages) {
    const id =
      message.role === "user" ? userMessageId(message.seq) : answering === null ? null : answerMessageId(answering);
    answering = message.role === "user" ? message.seq : null;
    const seqs = message.siblings;
    if (id && seqs && seqs.length > 1) versions.set(id, { seqs, index: seqs.indexOf(message.seq) });
  }
  return versions;
}

/** ‹ 2 / 3 ›: moves to the version before or after the one shown (nacre.css styles its attributes). */
function VersionPicker({
  versions,
  disabled,
  onChoose,
}: {
  readonly versions: Versions | undefined;
  readonly disabled: boolean;
  readonly onChoose: (seq: number) => Promise<void>;
}) {
  if (!versions) return null;
  const { seqs, index } = versions;
  const step = (by: -1 | 1) => {
    const seq = seqs[index + by];
    if (seq !== undefined) void onChoose(seq);
  };
  return (
    // biome-ignore lint/a11y/useSemanticElements: a group of two buttons and a count, as Nacre's BranchPicker; no form
    <div role="group" aria-label="Versions" data-nacre-branch-picker="">
      <button
        type="button"
        aria-label="Previous version"
        data-nacre-branch-previous=""
        disabled={disabled || index <= 0}
        onClick={() => step(-1)}
      >
        ‹
      </button>
      <span data-nacre-branch-count="">
        <span aria-hidden="true">
          {index + 1} / {seqs.length}
        </span>
        <span data-nacre-visually-hidden="">
          Version {index + 1} of {seqs.length}
        </span>
      </span>
      <button
        type="button"
        aria-label="Next version"
        data-nacre-branch-next=""
        disabled={disabled || index >= seqs.length - 1}
        onClick={() => step(1)}
      >
        ›
      </button>
    </div>
  );
}

/** The person's words a problem belongs to: the message at that seq (or the last one, sent just now). */
function textOfUser(messages: readonly NacreUIMessage[], seq: number): string {
  const message =
    messages.find((candidate) => candidate.id === userMessageId(seq)) ??
    messages.findLast((candidate) => candidate.role === "user");
  return (message?.parts ?? []).flatMap((part) => (part.type === "text" ? [part.text] : [])).join("\n");
}

/** A message's text, as written (Markdown for a model's answer). */
function textOf(message: NacreUIMessage): string {
  return message.parts.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("\n\n");
}

/** How an answer ended when it did not finish, from its metadata: cut off (at the output limit) or stopped. */
function Ending({ message }: { readonly message: NacreUIMessage }) {
  const reason = message.role === "assistant" ? message.metadata?.finishReason : undefined;
  const words = reason === "length" ? "Cut off" : reason === "aborted" ? "Stopped" : null;
  return words ? <p data-nacre-message-ending="">{words}</p> : null;
}

/**
 * Follows the stream while the reader is at the end (an answer grows in view), and leaves them where they are
 * once they scroll up; the chat opens at its end. `atEnd` drives the floating "Jump to latest".
 */
function useFollow(messages: readonly NacreUIMessage[]) {
  const scroller = useRef<HTMLDivElement>(null);
  const following = useRef(true);
  const [atEnd, setAtEnd] = useState(true);
  useEffect(() => {
    const node = scroller.current;
    if (!node) return;
    const onScroll = () => {
      // A few pixels of slack: zoom and fractional pixels leave the end a little short.
      following.current = node.scrollHeight - node.scrollTop - node.clientHeight < 32;
      setAtEnd(following.current);
    };
    // Reading up lets go at once, before the scroll lands, so that a delta in between does not pull back.
    const onWheel = (event: WheelEvent) => {
      if (event.deltaY < 0) following.current = false;
    };
    node.addEventListener("scroll", onScroll, { passive: true });
    node.addEventListener("wheel", onWheel, { passive: true });
    // Rows far off screen are laid out late (nacre.css's content-visibility), and the divider opens: whatever
    // grows, the end stays in view while following.
    const resized = new ResizeObserver(() => {
      if (following.current) node.scrollTop = node.scrollHeight;
    });
    for (const child of node.children) resized.observe(child);
    return () => {
      node.removeEventListener("scroll", onScroll);
      node.removeEventListener("wheel", onWheel);
      resized.disconnect();
    };
  }, []);
  // Before paint, after each change of the messages (each delta): no frame shows the answer off screen.
  useLayoutEffect(() => {
    const node = scroller.current;
    if (node && following.current && messages) node.scrollTop = node.scrollHeight;
  }, [messages]);
  const toEnd = () => {
    const node = scroller.current;
    if (!node) return;
    following.current = true;
    setAtEnd(true);
    node.scrollTo({ top: node.scrollHeight });
  };
  return { scroller, atEnd, toEnd };
}
