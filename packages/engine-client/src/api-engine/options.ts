import type { BranchCapability, ContextCapability, Engine } from "../engine.js";
import type { ErrorHandler } from "../errors.js";
import type { Learner } from "../learning/learner.js";
import type { ModelInfo } from "../messages.js";
import type { ProviderAdapter, ToolDefinition } from "../providers/provider-adapter.js";
import type { ChatStore } from "../transcript/chat-store.js";

/** Options of {@link createApiEngine}. */
export interface ApiEngineOptions {
  /** The provider adapter the chat talks to (`createOpenAI(...)`, `createAnthropic(...)`, ...). */
  readonly provider: ProviderAdapter;
  /** The chat's model id. Change it later with `setModel`. */
  readonly model: string;
  /** Where the chat's log and the engine's transcript live. */
  readonly store: ChatStore;
  /** Learns the person's words before they are folded (ADR 0055 §4). Default: none. */
  readonly learner?: Learner;
  /** The real system prompt. Default: none. */
  readonly systemPrompt?: string;
  /** The real tool list. Default: none. */
  readonly tools?: readonly ToolDefinition[];
  /** Remember things automatically; when false, whatever is learned waits for an OK. Default true. */
  readonly autoRemember?: boolean;
  /** The provider's model list, when the host has it. Default: `provider.listModels()`, once. */
  readonly models?: readonly ModelInfo[];
  /** A provider with its own compaction (Claude Code's /compact) takes manual folds over. Default: none. */
  readonly handOverCompaction?: (chatId: string, keep: string | undefined) => Promise<boolean>;
  /** Default `api`. */
  readonly id?: string;
  /** Default: the provider's name. */
  readonly displayName?: string;
  /**
   * How long a turn may go without content from the provider (words, reasoning, a tool call, usage) before it
   * ends with an `offline` problem, the chat free again; keep-alive comments do not count, and a turn still
   * streaming content is never cut. Default 300,000 (5 minutes: a local model may think that long over a big
   * prompt before its first word).
   */
  readonly turnIdleMs?: number;
  /**
   * How long a fold (automatic, on a refusal, or on request) may take in all; past it the fold ends as when no
   * model gives a summary. Default 300,000 (5 minutes).
   */
  readonly foldTimeLimitMs?: number;
  /**
   * Fold ahead of the need: after a turn answered, when the next would have to fold (what is kept plus a message
   * of the chat's usual size passes the budget), fold then, in the background, so that the next turn does not
   * wait for the summariser (docs/engine.md, "Folding ahead"). Default true.
   */
  readonly foldAhead?: boolean;
  /** The clock. Default `Date.now`. */
  readonly now?: () => number;
  /**
   * Told of failures a turn survives: a save, the learner, a listener that threw. The turn goes on (the log
   * has every message). Default: `defaultErrorHandler`, which logs it.
   */
  readonly onError?: ErrorHandler;
}

/** The API engine: an {@link Engine} that keeps the transcript and declares the `context` capability. */
export interface ApiEngine extends Engine {
  readonly capabilities: { readonly context: ContextCapability; readonly branches: BranchCapability };
  /** The chat's model now. */
  readonly model: string;
  /** Talks to another model from the next turn on (a too-long card's "Switch to …"). */
  setModel(modelId: string): void;
  /** The provider's models as last listed (empty until listed). */
  listModels(): Promise<readonly ModelInfo[]>;
}
