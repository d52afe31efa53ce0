// assistant-ui's thread primitives on Nacre's runtime. Nacre's lines: the runtime, the divider and the card in
// the message, the meter; how a reply ended (cut off: Continue) from the message's status. Its look is
// nacre.css's variables and controls, light or dark as the system is.
import {
  ActionBarPrimitive,
  AssistantRuntimeProvider,
  AuiIf,
  BranchPickerPrimitive,
  ComposerPrimitive,
  MessagePrimitive,
  ThreadPrimitive,
  useAuiState,
  useThreadViewport,
} from "@assistant-ui/react";
import type { RemoteEngine } from "@conch/engine-client/remote";
import { ContextMeter, type ConversationHostActions, ConversationProvider, useConversation } from "@conch/nacre";
import {
  type NacreMessageCustom,
  NacreSummaryDivider,
  NacreTurnProblem,
  useNacreRuntime,
} from "@conch/nacre/assistant-ui";
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
        {/* Follows the answer while the reader is at the end, and leaves them where they are once they scroll up. */}
        <ThreadPrimitive.Viewport className="thread-viewport">
          <ThreadPrimitive.Messages>
            {({ message }) => (
              <MessagePrimitive.Root className="message" data-role={message.role}>
                <NacreSummaryDivider />
                <AuiIf condition={(state) => !state.message.composer.isEditing}>
                  <div className="message-body">
                    <MessagePrimitive.Parts />
                  </div>
                </AuiIf>
                {/* Edit opens assistant-ui's edit composer in place: its Send makes a new version of the message. */}
                <AuiIf condition={(state) => state.message.composer.isEditing}>
                  <ComposerPrimitive.Root className="edit-composer" data-nacre-message-editor="">
                    <ComposerPrimitive.Input aria-label="Edit message" />
                    <ComposerPrimitive.Send>Send</ComposerPrimitive.Send>
                    <ComposerPrimitive.Cancel>Cancel</ComposerPrimitive.Cancel>
                  </ComposerPrimitive.Root>
                </AuiIf>
                <Ending />
                {/* Offered only where honest: on an engine without versions (`branches`) the runtime leaves edit and
                    regenerate disabled (they would cut the log); with them, each makes a new version. */}
                <ActionBarPrimitive.Root className="actions" data-nacre-message-actions="">
                  <ActionBarPrimitive.Copy data-nacre-message-copy="">Copy</ActionBarPrimitive.Copy>
                  {message.role === "user" ? (
                    <ActionBarPrimitive.Edit>Edit</ActionBarPrimitive.Edit>
                  ) : (
                    <ActionBarPrimitive.Reload>Regenerate</ActionBarPrimitive.Reload>
                  )}
                </ActionBarPrimitive.Root>
                <VersionPicker />
                {message.role === "user" ? <NacreTurnProblem /> : null}
              </MessagePrimitive.Root>
            )}
          </ThreadPrimitive.Messages>
          <TurnEnd />
          <JumpToLatest />
        </ThreadPrimitive.Viewport>
        <ComposerPrimitive.Root className="composer" data-nacre-composer="">
          <ComposerPrimitive.Input
            data-nacre-composer-input=""
            aria-label="Message"
            placeholder="Write a message, or /compact"
          />
          {/* Send, or Stop while an answer is written: one button in its place. */}
          <AuiIf condition={(state) => !state.thread.isRunning}>
            <ComposerPrimitive.Send data-nacre-composer-submit="">Send</ComposerPrimitive.Send>
          </AuiIf>
          <AuiIf condition={(state) => state.thread.isRunning}>
            <ComposerPrimitive.Cancel data-nacre-composer-submit="">Stop</ComposerPrimitive.Cancel>
          </AuiIf>
        </ComposerPrimitive.Root>
      </ThreadPrimitive.Root>
    </AssistantRuntimeProvider>
  );
}

/**
 * ‹ 2 / 3 ›: every version the engine keeps, after a reload too; its active branch follows the choice. Until the
 * engine has made the chosen branch active the runtime keeps this version shown (`nacreSwitchingTo`): the picker
 * says it is busy meanwhile, and never shows a version before its words have arrived.
 */
function VersionPicker() {
  const switching = useAuiState(
    (state) => (state.message.metadata.custom as Partial<NacreMessageCustom>).nacreSwitchingTo !== undefined,
  );
  return (
    <BranchPickerPrimitive.Root
      hideWhenSingleBranch
      className="branches"
      data-nacre-branch-picker=""
      aria-busy={switching}
    >
      <BranchPickerPrimitive.Previous aria-label="Previous version" data-nacre-branch-previous="">
        ‹
      </BranchPickerPrimitive.Previous>
      <span data-nacre-branch-count="">
        <BranchPickerPrimitive.Number /> / <BranchPickerPrimitive.Count />
      </span>
      <BranchPickerPrimitive.Next aria-label="Next version" data-nacre-branch-next="">
        ›
      </BranchPickerPrimitive.Next>
    </BranchPickerPrimitive.Root>
  );
}

/** How a reply ended when it did not finish: the runtime marks a cut-off reply incomplete for `length`. */
function Ending() {
  const status = useAuiState((state) => state.message.status);
  const reason = status?.type === "incomplete" ? status.reason : null;
  const words = reason === "length" ? "Cut off" : reason === "cancelled" ? "Stopped" : null;
  return words ? <p data-nacre-message-ending="">{words}</p> : null;
}

/**
 * After the last message: a sign of work until the reply's first word; Continue under a reply cut off at the
 * output limit (a fixed prompt, kept as a continuation, never learned from).
 */
function TurnEnd() {
  const { status, messages, streamingSeq, problem, send } = useConversation();
  const last = messages.at(-1);
  if ((status === "submitted" || status === "compacting") && streamingSeq === null) {
    return (
      <p data-nacre-pending="" role="status">
        Working…
      </p>
    );
  }
  if (status !== "ready" || problem || last?.finishReason !== "length") return null;
  return (
    <div data-nacre-turn-end-row="">
      <button type="button" data-nacre-continue="" onClick={() => void send("Continue", { continuation: true })}>
        Continue
      </button>
    </div>
  );
}

/** Floats over the list's bottom edge (nacre.css) while the reader is away from the end. */
function JumpToLatest() {
  const atBottom = useThreadViewport((state) => state.isAtBottom);
  if (atBottom) return null;
  return (
    <ThreadPrimitive.ScrollToBottom data-nacre-jump-to-latest="" data-state="visible">
      Jump to latest
    </ThreadPrimitive.ScrollToBottom>
  );
}
