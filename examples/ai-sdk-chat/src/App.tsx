// A useChat page with AI Elements-style markup, on Nacre's engine behind one route (server.ts). The Nacre lines:
// the transport's request (last message and seq only), the divider, the card and the meter from the data parts.
import { useChat } from "@ai-sdk/react";
import {
  type NacreUIMessage,
  nacreChatFetch,
  nacreDivider,
  nacreSendMessagesRequest,
  userMessageId,
} from "@conch/engine-client/ai-sdk";
import { ContextMeter, SummaryDivider, TurnProblem } from "@conch/nacre";
import { DefaultChatTransport } from "ai";
import { type FormEvent, Fragment, useEffect, useState } from "react";

const chatId = new URLSearchParams(window.location.search).get("chat") ?? "ai-sdk-chat";

/** useChat's first messages: the chat as the engine's log keeps it. */
async function loadMessages(): Promise<NacreUIMessage[]> {
  // Through `nacreChatFetch`: after a stop, it waits for the turn to end, so the chat read has what it kept.
  const response = await nacreChatFetch(`/api/chat?id=${encodeURIComponent(chatId)}`);
  return ((await response.json()) as { messages: NacreUIMessage[] }).messages;
}

export function App() {
  const [initial, setInitial] = useState<NacreUIMessage[] | null>(null);
  useEffect(() => {
    void loadMessages().then(setInitial);
  }, []);
  return initial ? <Chat initial={initial} /> : <p className="loading">Loading the chat…</p>;
}

function Chat({ initial }: { readonly initial: NacreUIMessage[] }) {
  const [input, setInput] = useState("");
  const [note, setNote] = useState<string | null>(null);
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
    onFinish: ({ isAbort }) => {
      if (isAbort) void loadMessages().then(setMessages);
    },
  });
  const divider = nacreDivider(messages);
  const usage = messages.findLast((message) => message.metadata?.contextUsage)?.metadata?.contextUsage ?? null;
  const busy = status === "submitted" || status === "streaming";

  function submit(event: FormEvent) {
    event.preventDefault();
    if (!input.trim() || busy) return;
    void sendMessage({ text: input });
    setInput("");
  }

  return (
    <main className="chat">
      <header className="chat-header">
        <h1>useChat on Nacre</h1>
        <ContextMeter.Root usage={usage} />
      </header>
      <div className="conversation" role="log">
        <div className="conversation-content">
          {messages.map((message) => (
            <Fragment key={message.id}>
              {divider?.beforeMessageId === message.id ? (
                <SummaryDivider.Root summary={divider.summary} model="the model" />
              ) : null}
              <div className={`message is-${message.role}`} data-message-role={message.role}>
                <div className="message-content">
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
                </div>
              </div>
            </Fragment>
          ))}
        </div>
      </div>
      {note ? (
        <p className="chat-note" role="status">
          {note}
        </p>
      ) : null}
      {error ? <p className="chat-error">{error.message}</p> : null}
      <form className="prompt-input" onSubmit={submit}>
        <textarea
          aria-label="Message"
          value={input}
          onChange={(event) => setInput(event.target.value)}
          onKeyDown={(event) => {
            if (event.key === "Enter" && !event.shiftKey) submit(event);
          }}
        />
        {busy ? (
          <button type="button" onClick={() => void stop()}>
            Stop
          </button>
        ) : (
          <button type="submit">Send</button>
        )}
      </form>
    </main>
  );
}

/** The person's words a problem belongs to: the message at that seq (or the last one, sent just now). */
function textOfUser(messages: readonly NacreUIMessage[], seq: number): string {
  const message =
    messages.find((candidate) => candidate.id === userMessageId(seq)) ??
    messages.findLast((candidate) => candidate.role === "user");
  return (message?.parts ?? []).flatMap((part) => (part.type === "text" ? [part.text] : [])).join("\n");
}
