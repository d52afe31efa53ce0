"use client";
import {
  type ChatMessage,
  type ChatSnapshot,
  type CompactResult,
  type ContextUsage,
  type ConversationActivity,
  type ConversationMessage,
  type ConversationStatus,
  type ConversationStore,
  type Engine,
  type EngineEventOf,
  emptyUsage,
  foldedMessageCount,
  type HealthNote,
  hasBranches,
  hasContext,
  hasSomethingToFold,
  type ModelInfo,
  messageText,
  type SendOptions,
  type StreamingMessageState,
  type SummaryState,
  type ToolResultPart,
  type TurnProblem,
  type Usage,
} from "@conch/engine-client";
import { QueryClient, QueryClientContext, QueryClientProvider, useQuery } from "@tanstack/react-query";
import { createContext, type ReactNode, useContext, useMemo, useState, useSyncExternalStore } from "react";
import { conversationStore } from "./conversation-cache.js";
import { NacreOutsideProviderError } from "./errors.js";
import { type NacreMessages, resolveMessages, type SettingsSection } from "./messages.js";
import { contextUsageQueryOptions, conversationQueryOptions } from "./query.js";

/** What the host does when a problem card's next step is followed: the host owns models and chats. */
export interface ConversationHostActions {
  /** "Switch to {model}": the host moves the chat to that model; `message` is the person's words that failed. */
  onSwitchModel?: (
    model: ModelInfo,
    details: {
      readonly message: string;
      readonly problem: TurnProblem;
      /** The person's message's seq: pass it to `send(message, { retrySeq })` on the new model to answer it there. */
      readonly seq?: number;
    },
  ) => void;
  /** "Start a new chat with this message": the host opens a new chat with `message` in its box. */
  onNewChat?: (message: string) => void;
  /** "Open settings": the host shows the section. */
  onOpenSettings?: (section: SettingsSection) => void;
}

interface ConversationContextValue extends ConversationHostActions {
  readonly engine: Engine;
  readonly chatId: string;
}

const ConversationContext = createContext<ConversationContextValue | null>(null);
const MessagesContext = createContext<NacreMessages>(resolveMessages(undefined));

export interface NacreMessagesProviderProps {
  /** Strings to replace; the rest stay English. */
  messages?: Partial<NacreMessages>;
  children?: ReactNode;
}

/** Replaces Nacre's strings for the parts inside it (ConversationProvider does this through its own `messages`). */
export function NacreMessagesProvider({ messages, children }: NacreMessagesProviderProps) {
  const outer = useContext(MessagesContext);
  const value = useMemo(() => (messages ? { ...outer, ...messages } : outer), [outer, messages]);
  return <MessagesContext.Provider value={value}>{children}</MessagesContext.Provider>;
}
NacreMessagesProvider.displayName = "NacreMessagesProvider";

/** Nacre's strings here: English defaults with the host's replacements. */
export function useNacreMessages(): NacreMessages {
  return useContext(MessagesContext);
}

export interface ConversationProviderProps extends ConversationHostActions {
  /** Any engine; the parts ask whether it declares `context`, never which engine it is. */
  engine: Engine;
  chatId: string;
  /** The QueryClient to cache the chat in. Default: the one from an outer QueryClientProvider, else one of its own. */
  queryClient?: QueryClient;
  /** Strings to replace (English defaults). */
  messages?: Partial<NacreMessages>;
  children?: ReactNode;
}

/** Binds a chat on an engine for the hooks and parts inside it. */
export function ConversationProvider({
  engine,
  chatId,
  queryClient,
  messages,
  onSwitchModel,
  onNewChat,
  onOpenSettings,
  children,
}: ConversationProviderProps) {
  const outerClient = useContext(QueryClientContext);
  const [ownClient] = useState(() => (queryClient || outerClient ? null : new QueryClient()));
  const client = queryClient ?? outerClient ?? (ownClient as QueryClient);
  const value = useMemo<ConversationContextValue>(
    () => ({
      engine,
      chatId,
      ...(onSwitchModel ? { onSwitchModel } : {}),
      ...(onNewChat ? { onNewChat } : {}),
      ...(onOpenSettings ? { onOpenSettings } : {}),
    }),
    [engine, chatId, onSwitchModel, onNewChat, onOpenSettings],
  );
  const inner = (
    <ConversationContext.Provider value={value}>
      <NacreMessagesProvider {...(messages ? { messages } : {})}>{children}</NacreMessagesProvider>
    </ConversationContext.Provider>
  );
  return client === outerClient ? inner : <QueryClientProvider client={client}>{inner}</QueryClientProvider>;
}
ConversationProvider.displayName = "ConversationProvider";

/** Which chat a hook reads: the provider's, or the one named here (then a QueryClientProvider must be above). */
export interface ConversationTarget {
  /** Default: the provider's engine. */
  engine?: Engine;
  /** Default: the provider's chat. */
  chatId?: string;
  /** Default: the QueryClient in context. */
  queryClient?: QueryClient;
}

function useTarget(target: ConversationTarget | undefined) {
  const context = useContext(ConversationContext);
  const outerClient = useContext(QueryClientContext);
  const engine = target?.engine ?? context?.engine;
  const chatId = target?.chatId ?? context?.chatId;
  const queryClient = target?.queryClient ?? outerClient;
  if (!engine || chatId === undefined) {
    throw new NacreOutsideProviderError("this hook", "<ConversationProvider>, or be passed { engine, chatId }");
  }
  if (!queryClient) {
    throw new NacreOutsideProviderError(
      "this hook",
      "<ConversationProvider> or a QueryClientProvider (it found no QueryClient), or be passed queryClient",
    );
  }
  const store = conversationStore(queryClient, engine, chatId);
  return { engine, chatId, queryClient, store, host: context };
}

/**
 * The chat's store, without subscribing to what it shows: for parts that act on the chat (edit, regenerate,
 * move between versions) and render nothing of it, so that they do not re-render with every turn.
 */
export function useConversationStore(target?: ConversationTarget): ConversationStore {
  return useTarget(target).store;
}

/** The turn problem of the chat, with the person's words it belongs to. */
export interface ConversationProblem {
  /** The person's message the problem belongs to. */
  readonly seq: number;
  readonly problem: TurnProblem;
  /** The text of that message (what a new chat or another model would be given). */
  readonly message: string;
}

/**
 * Why a fold on request cannot run now: `all-folded` when a summary already stands for everything before the
 * newest turn (a heal folded it all), `nothing-to-fold` when the chat is too short to have anything to fold.
 */
export type CompactUnavailableReason = "no-context" | "nothing-to-fold" | "all-folded" | "busy" | "loading";

/** A chat, live: what `useConversation()` returns. */
export interface Conversation {
  readonly engine: Engine;
  readonly chatId: string;
  /** True until the chat's snapshot has loaded. */
  readonly isLoading: boolean;
  /** The error of loading the chat, if it failed. */
  readonly loadError: unknown;
  readonly status: ConversationStatus;
  /**
   * The active branch's messages (every message of a log that never branched), folded ones too, in `seq`
   * order (the message being written is not here yet); each with its versions (`siblings`) when it has others.
   */
  readonly messages: readonly ConversationMessage[];
  /** The chat's model (null until loaded). */
  readonly model: ModelInfo | null;
  /** The latest summary, or null when nothing is folded. */
  readonly summary: SummaryState | null;
  /** Where the model's word-for-word memory starts (the divider goes before this message), or null. */
  readonly firstKeptSeq: number | null;
  /** How many messages of the log the summary stands for. */
  readonly foldedMessages: number;
  /** The fold that runs now, in a turn or on request. */
  readonly compacting: ConversationActivity["compacting"];
  /** The `seq` of the message being written; read its text with `useStreamingMessage()`. */
  readonly streamingSeq: number | null;
  readonly problem: ConversationProblem | null;
  /** All turns' usage. */
  readonly usage: Usage;
  /** Quiet retries and summariser failures, newest first. */
  readonly healthNotes: readonly HealthNote[];
  /** The last error of sending (not a turn problem). */
  readonly error: unknown;
  /** Whether `send` would start a turn now. */
  readonly canSend: boolean;
  /** Null when a fold on request can run now; else why not. */
  readonly compactUnavailable: CompactUnavailableReason | null;
  /** Sends the person's message; settles with the turn's end (null when no turn started). */
  send(text: string, options?: SendOptions): Promise<EngineEventOf<"turn-end"> | null>;
  /**
   * Hands the results of the tools the model called back to the engine, so the same turn goes on; busy like
   * `send` (null when a turn already runs).
   */
  sendToolResults(results: readonly ToolResultPart[]): Promise<EngineEventOf<"turn-end"> | null>;
  /** Stops the running turn or fold. */
  abort(): void;
  /** Sends the problem's message again, as a new turn. */
  retry(): Promise<EngineEventOf<"turn-end"> | null>;
  /** Folds all but the newest turn now (`/compact [keep]`). Present only when the engine declares `context`. */
  readonly compact?: (keep?: string) => Promise<CompactResult>;
  /**
   * Replaces the person's message at `seq` with `text` (a new version beside it) and answers it. Present only
   * when the engine declares `branches`; busy like `send`.
   */
  readonly edit?: (seq: number, text: string) => Promise<EngineEventOf<"turn-end"> | null>;
  /** Another answer to the person's message at `seq` (or to the one the answer at `seq` replies to). As `edit`. */
  readonly regenerate?: (seq: number) => Promise<EngineEventOf<"turn-end"> | null>;
  /** The host's handlers for problem cards (from the provider). */
  readonly host: ConversationHostActions;
}

const noHost: ConversationHostActions = {};

/**
 * The chat: its log, the streaming state, the summary and where it sits, the problem, usage and health notes,
 * with `send`, `abort` and (when the engine declares `context`) `compact`. Re-renders when the log or the
 * activity changes, never per streamed delta.
 */
export function useConversation(target?: ConversationTarget): Conversation {
  const { engine, chatId, queryClient, store, host } = useTarget(target);
  const query = useQuery(conversationQueryOptions(engine, chatId), queryClient);
  const activity = useSyncExternalStore(store.subscribe, store.getActivity, store.getActivity);
  const chat: ChatSnapshot | undefined = query.data;
  return useMemo<Conversation>(() => {
    const derived = chat ? deriveFromChat(chat) : null;
    const problem = derived?.problem ?? null;
    const canCompact = hasContext(engine);
    const compactUnavailable: CompactUnavailableReason | null = !canCompact
      ? "no-context"
      : !derived
        ? "loading"
        : activity.turnRunning || activity.compacting
          ? "busy"
          : derived.somethingToFold
            ? null
            : chat?.summary
              ? "all-folded"
              : "nothing-to-fold";
    const send = (text: string, options?: SendOptions) => store.send(text, options);
    return {
      engine,
      chatId,
      isLoading: chat === undefined && query.error === null,
      loadError: query.error,
      status: activity.status,
      messages: chat ? store.messagesOf(chat) : noMessages,
      model: chat?.model ?? null,
      summary: chat?.summary ?? null,
      firstKeptSeq: chat?.summary?.firstKeptSeq ?? null,
      foldedMessages: derived?.foldedMessages ?? 0,
      compacting: activity.compacting,
      streamingSeq: activity.streamingSeq,
      problem,
      usage: chat?.usage ?? emptyUsage,
      healthNotes: chat?.healthNotes ?? [],
      error: activity.error,
      canSend: chat !== undefined && !activity.turnRunning && !activity.compacting,
      compactUnavailable,
      send,
      sendToolResults: (results: readonly ToolResultPart[]) => store.sendToolResults(results),
      abort: () => store.abort(),
      retry: () => (problem ? send(problem.message, { retrySeq: problem.seq }) : Promise.resolve(null)),
      ...(canCompact ? { compact: (keep?: string) => store.compact(keep) } : {}),
      ...(hasBranches(engine)
        ? {
            edit: (seq: number, text: string) => store.edit(seq, text),
            regenerate: (seq: number) => store.regenerate(seq),
          }
        : {}),
      host: host ?? noHost,
    };
  }, [engine, chatId, store, chat, activity, query.error, host]);
}

const noMessages: readonly ConversationMessage[] = [];

/** What a snapshot alone decides (each a scan of the log). */
interface ChatDerived {
  readonly problem: ConversationProblem | null;
  readonly foldedMessages: number;
  readonly somethingToFold: boolean;
}

const derivedByChat = new WeakMap<ChatSnapshot, ChatDerived>();

/**
 * Worked out once per snapshot, for every hook of the chat: not again per reader, nor when only the activity
 * changes (the problem keeps its identity until the snapshot changes).
 */
function deriveFromChat(chat: ChatSnapshot): ChatDerived {
  let derived = derivedByChat.get(chat);
  if (!derived) {
    derived = {
      problem: chat.problem
        ? { seq: chat.problem.seq, problem: chat.problem.problem, message: messageAt(chat.messages, chat.problem.seq) }
        : null,
      foldedMessages: foldedMessageCount(chat),
      somethingToFold: hasSomethingToFold(chat),
    };
    derivedByChat.set(chat, derived);
  }
  return derived;
}

function messageAt(messages: readonly ChatMessage[], seq: number): string {
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    const message = messages[index];
    if (message?.seq === seq) return messageText(message);
    if (message && message.seq < seq) break;
  }
  return "";
}

/**
 * The message being written, as it streams (null when none). Only the component that calls this
 * re-renders per delta.
 */
export function useStreamingMessage(target?: ConversationTarget): StreamingMessageState | null {
  const { store } = useTarget(target);
  return useSyncExternalStore(store.subscribe, store.getStreaming, store.getStreaming);
}

/** How full the window is, for a meter. */
export type ContextLevel = "low" | "medium" | "high" | "full";

export interface ContextUsageState extends ContextUsage {
  /** `low` under half the window, `medium` under three quarters, `high` under 90%, else `full`. */
  readonly level: ContextLevel;
}

/** The level of a share of the window (0 to 1 and past). */
export function contextLevel(share: number): ContextLevel {
  if (share < 0.5) return "low";
  if (share < 0.75) return "medium";
  if (share < 0.9) return "high";
  return "full";
}

/**
 * How much of the model's window the next request will use (the engine's estimate × the chat's factor),
 * or null while unknown or when the engine cannot tell.
 */
export function useContextUsage(target?: ConversationTarget): ContextUsageState | null {
  const { engine, chatId, queryClient, store } = useTarget(target);
  // Subscribing keeps the engine's events flowing into the cache, which refreshes this query.
  useSyncExternalStore(store.subscribe, store.getActivity, store.getActivity);
  const query = useQuery(contextUsageQueryOptions(engine, chatId), queryClient);
  const usage = query.data;
  return useMemo(() => (usage ? { ...usage, level: contextLevel(usage.share) } : null), [usage]);
}

/** Whether a ConversationProvider is above (parts that also work from props alone ask this). */
export function useInConversation(): boolean {
  return useContext(ConversationContext) !== null;
}
