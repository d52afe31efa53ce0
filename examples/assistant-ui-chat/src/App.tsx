import {
  ActionBarPrimitive,
  AssistantRuntimeProvider,
  ComposerPrimitive,
  MessagePrimitive,
  ThreadPrimitive,
} from "@assistant-ui/react";
import type { RemoteEngine } from "@conch/engine-client/remote";
import { ContextMeter, type ConversationHostActions, ConversationProvider, useConversation } from "@conch/nacre";
import { NacreSummaryDivider, NacreTurnProblem, useNacreRuntime } from "@conch/nacre/assistant-ui";
import { useEffect, useState } from "react";

/** A message the card's "Switch to …" sends again, on the new model, in place. */
interface Retry {
  readonly message: string;
  readonly seq: number;
}

export function App({ engine, chatId }: { engine: RemoteEngine; chatId: string }) {
  const [model, setModel] = useState<string | null>(null);
  const [retry, setRetry] = useState<Retry | null>(null);
  const onSwitchModel: ConversationHostActions["onSwitchModel"] = (next, { message, seq }) => {
    setModel(next.id);
    if (seq !== undefined) setRetry({ message, seq });
  };
  const onNewChat: ConversationHostActions["onNewChat"] = () => {
    location.search = `?chat=${crypto.randomUUID()}`;
  };
  return (
    <ConversationProvider
      engine={model ? engine.withModel(model) : engine}
      chatId={chatId}
      onSwitchModel={onSwitchModel}
      onNewChat={onNewChat}
    >
      <Chat retry={retry} onRetried={() => setRetry(null)} />
    </ConversationProvider>
  );
}

function Chat({ retry, onRetried }: { retry: Retry | null; onRetried: () => void }) {
  const runtime = useNacreRuntime();
  const conversation = useConversation();
  useEffect(() => {
    if (!retry) return;
    onRetried();
    void conversation.send(retry.message, { retrySeq: retry.seq });
  }, [retry, onRetried, conversation]);
  return (
    <AssistantRuntimeProvider runtime={runtime}>
      <ThreadPrimitive.Root className="thread">
        <header className="thread-header" data-status={conversation.isLoading ? "loading" : conversation.status}>
          <h1>assistant-ui on Nacre</h1>
          <ContextMeter.Root />
        </header>
        <ThreadPrimitive.Viewport className="thread-viewport">
          <ThreadPrimitive.Messages>
            {({ message }) => (
              <MessagePrimitive.Root className="message" data-role={message.role}>
                <NacreSummaryDivider />
                <div className="message-body">
                  <MessagePrimitive.Parts />
                </div>
                {/* Offered only where honest: the runtime leaves edit and regenerate disabled (they would cut the log). */}
                <ActionBarPrimitive.Root className="actions">
                  <ActionBarPrimitive.Copy>Copy</ActionBarPrimitive.Copy>
                  {message.role === "user" ? (
                    <ActionBarPrimitive.Edit>Edit</ActionBarPrimitive.Edit>
                  ) : (
                    <ActionBarPrimitive.Reload>Regenerate</ActionBarPrimitive.Reload>
                  )}
                </ActionBarPrimitive.Root>
                {message.role === "user" ? <NacreTurnProblem /> : null}
              </MessagePrimitive.Root>
            )}
          </ThreadPrimitive.Messages>
        </ThreadPrimitive.Viewport>
        <ComposerPrimitive.Root className="composer">
          <ComposerPrimitive.Input aria-label="Message" placeholder="Write a message, or /compact" />
          <ComposerPrimitive.Send>Send</ComposerPrimitive.Send>
          <ComposerPrimitive.Cancel>Stop</ComposerPrimitive.Cancel>
        </ComposerPrimitive.Root>
      </ThreadPrimitive.Root>
    </AssistantRuntimeProvider>
  );
}
