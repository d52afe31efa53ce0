import type { Engine, ModelInfo, TurnProblem } from "@conch/engine-client";
import type { ChatDirectory } from "@conch/engine-client/remote";
import {
  Composer,
  ContextMeter,
  ConversationProvider,
  HealthNotes,
  MessageList,
  RenderTextProvider,
  useContextUsage,
  useConversation,
} from "@conch/nacre";
import { renderBranchMessage } from "@conch/nacre/branches";
import { ChatList, NewChatGreeting, useChats } from "@conch/nacre/chats";
import { CommandMenu, CommandMenuShortcut } from "@conch/nacre/command";
import { renderMarkdown, renderMarkdownBlock } from "@conch/nacre/markdown";
import { type ReactNode, useCallback, useEffect, useRef, useState } from "react";

export interface AppProps {
  /** Any engine: the page asks whether it declares `context`, never which engine it is. */
  engine: Engine;
  /** The models the person can move the chat to. */
  models: readonly ModelInfo[];
  /** The person's chats: the store's directory, or the server's over HTTP. */
  directory: ChatDirectory;
  /** The chat to open first (the one open before a reload). Default: a new chat. */
  initialChatId?: string;
  /** Moves every chat to another model (the host owns model choice); settles when `engine` has changed. */
  onSwitchModel: (model: ModelInfo, chatIds: readonly string[]) => Promise<void>;
  /** Extra lines for the side panel (the mock wiring says what its script does next). */
  aside?: ReactNode;
  /** Called when another chat opens (to open it again after a reload). Default: none. */
  onOpenChatChange?: (chatId: string) => void;
  /** Forces a theme. Default: the page's `?theme=light|dark`, else the system's. */
  theme?: "light" | "dark";
}

/** The theme the page asks for with `?theme=light|dark`, else none (follow the system). */
function themeFromLocation(): "light" | "dark" | undefined {
  if (typeof location === "undefined") return undefined;
  const asked = new URLSearchParams(location.search).get("theme");
  return asked === "light" || asked === "dark" ? asked : undefined;
}

type Panel = "chats" | "aside";

/**
 * A window for the model menu, the figure the meter shows for the same model ("8,192 tokens"): never rounded to
 * "8K", so that one model has one window on every page; "window unknown" when neither the engine nor the provider
 * says.
 */
function windowLabel(context: number | undefined): string {
  return context ? `${context.toLocaleString("en")} tokens` : "window unknown";
}

/**
 * Answers the person's message once the conversation has loaded on the new model (after a switch): the same
 * message is answered again (`retrySeq`), not added a second time.
 */
function SendWhenReady({ text, retrySeq, onSent }: { text: string; retrySeq?: number; onSent: () => void }) {
  const conversation = useConversation();
  const sent = useRef(false);
  useEffect(() => {
    if (sent.current || conversation.isLoading || !conversation.canSend) return;
    sent.current = true;
    onSent();
    void conversation.send(text, retrySeq !== undefined ? { retrySeq } : {});
  }, [conversation, text, retrySeq, onSent]);
  return null;
}

function ChatHeader({ models, onSwitch }: { models: readonly ModelInfo[]; onSwitch: (model: ModelInfo) => void }) {
  const conversation = useConversation();
  // The chat's own model: the window the engine works with (the meter's), which a refusal may have lowered.
  const engineWindow = useContextUsage()?.window;
  return (
    <div className="demo-chat-header">
      <label>
        Model{" "}
        <select
          value={conversation.model?.id ?? ""}
          onChange={(event) => {
            const model = models.find((candidate) => candidate.id === event.target.value);
            if (model) onSwitch(model);
          }}
        >
          {models.map((model) => (
            <option key={model.id} value={model.id}>
              {model.displayName} (
              {windowLabel(model.id === conversation.model?.id ? (engineWindow ?? model.context) : model.context)})
            </option>
          ))}
        </select>
      </label>
      <span className="demo-engine">
        {conversation.engine.capabilities.context ? "summarises long chats" : "does not summarise"}
      </span>
    </div>
  );
}

/**
 * The demo chat page: Nacre's parts on any engine. The mock wiring (`main.tsx`) and the API engine
 * (`api/ApiDemo.tsx`, `pnpm dev`) mount this same component.
 */
export function App({
  engine,
  models,
  directory,
  initialChatId,
  onSwitchModel,
  aside,
  onOpenChatChange,
  theme = themeFromLocation(),
}: AppProps) {
  // On narrow screens the side panels fold into the header; one opens at a time.
  const [panel, setPanel] = useState<Panel | null>(null);
  const togglePanel = (which: Panel) => setPanel((current) => (current === which ? null : which));
  const chats = useChats({
    directory,
    engine,
    ...(initialChatId !== undefined ? { defaultCurrent: initialChatId } : {}),
    onCurrentChange: (chatId) => {
      // On a phone the list folds away once a chat is chosen.
      setPanel(null);
      onOpenChatChange?.(chatId);
    },
  });
  const chatId = chats.current;
  const [drafts, setDrafts] = useState<Record<string, string>>({});
  const [pending, setPending] = useState<{ chatId: string; text: string; retrySeq?: number } | null>(null);
  const [commandsOpen, setCommandsOpen] = useState(false);
  const chatIdsRef = useRef<string[]>([]);
  chatIdsRef.current = chats.chats.map((chat) => chat.id);

  const switchModel = useCallback(
    async (model: ModelInfo, resend?: { text: string; seq?: number }) => {
      await onSwitchModel(model, chatIdsRef.current);
      if (resend)
        setPending({ chatId, text: resend.text, ...(resend.seq !== undefined ? { retrySeq: resend.seq } : {}) });
    },
    [onSwitchModel, chatId],
  );

  const { newChat } = chats;
  const onNewChat = useCallback(
    (message: string) => {
      const id = newChat();
      setDrafts((current) => ({ ...current, [id]: message }));
    },
    [newChat],
  );

  const onProblemSwitch = useCallback(
    (model: ModelInfo, details: { message: string; problem: TurnProblem; seq?: number }) =>
      void switchModel(model, { text: details.message, ...(details.seq !== undefined ? { seq: details.seq } : {}) }),
    [switchModel],
  );
  const clearPending = useCallback(() => setPending(null), []);

  return (
    <div className="demo" {...(theme ? { "data-nacre-theme": theme } : {})}>
      <header className="demo-header">
        <button
          type="button"
          className="demo-panel-toggle"
          aria-expanded={panel === "chats"}
          aria-controls="demo-chats"
          onClick={() => togglePanel("chats")}
        >
          Chats
        </button>
        <h1>Nacre demo</h1>
        <div className="demo-header-actions">
          <button
            type="button"
            className="demo-panel-toggle"
            aria-expanded={panel === "aside"}
            aria-controls="demo-aside"
            onClick={() => togglePanel("aside")}
          >
            Context
          </button>
          <button type="button" className="demo-commands" onClick={() => setCommandsOpen(true)}>
            Commands <CommandMenuShortcut />
          </button>
        </div>
      </header>
      <RenderTextProvider renderText={renderMarkdown} renderBlock={renderMarkdownBlock}>
        <ConversationProvider
          key={`${engine.id}:${chatId}`}
          engine={engine}
          chatId={chatId}
          onNewChat={onNewChat}
          onSwitchModel={onProblemSwitch}
          onOpenSettings={() => document.getElementById("health")?.scrollIntoView()}
        >
          <ChatList.Root
            chats={chats}
            id="demo-chats"
            className="demo-chats"
            {...(panel === "chats" ? { "data-open": "" } : {})}
          >
            <h2>Chats</h2>
            <ChatList.NewChat />
            <ChatList.List />
            <ChatList.More />
          </ChatList.Root>
          <main className="demo-main">
            <ChatHeader models={models} onSwitch={(model) => void switchModel(model)} />
            <NewChatGreeting className="demo-greeting">
              <p>A new chat. Write your first message below; the chat takes its title from it.</p>
            </NewChatGreeting>
            <MessageList.Root className="demo-messages" renderMessage={renderBranchMessage} />
            <Composer.Root key={chatId} className="demo-composer" defaultValue={drafts[chatId] ?? ""} />
          </main>
          <aside
            id="demo-aside"
            className="demo-aside"
            aria-label="This chat"
            {...(panel === "aside" ? { "data-open": "" } : {})}
          >
            <section aria-labelledby="context-heading">
              <h2 id="context-heading">Context</h2>
              <ContextMeter.Root />
            </section>
            <HealthNotes.Root id="health" />
            {aside}
          </aside>
          <CommandMenu open={commandsOpen} onOpenChange={setCommandsOpen} />
          {pending && pending.chatId === chatId ? (
            <SendWhenReady
              text={pending.text}
              {...(pending.retrySeq !== undefined ? { retrySeq: pending.retrySeq } : {})}
              onSent={clearPending}
            />
          ) : null}
        </ConversationProvider>
      </RenderTextProvider>
    </div>
  );
}
