import { estimateTokens } from "../context/estimate.js";
import { defaultErrorHandler, type ErrorHandler, isAbortError } from "../errors.js";
import type { HealthNote } from "../events.js";
import type { ModelInfo } from "../messages.js";
import type { ProviderAdapter } from "../providers/provider-adapter.js";
import type { ChatStore } from "../transcript/chat-store.js";
import { type ChatRuntime, healthNotesKept } from "./chat-state.js";
import type { ApiEngineOptions } from "./options.js";
import { createWindowEvidence, type WindowEvidence } from "./window-evidence.js";

/** How long a model list may take before the turn goes on with default windows. */
const modelListTimeoutMs = 20_000;
/** How long after a failed model list it is asked for again. */
const modelListRetryMs = 60_000;

/** What every step of the API engine reads: the engine's options, its model now, the model list, notes. */
export interface EngineParts {
  readonly options: ApiEngineOptions;
  readonly provider: ProviderAdapter;
  readonly store: ChatStore;
  readonly now: () => number;
  /** Where failures a turn survives go (the option, or the console). */
  readonly onError: ErrorHandler;
  /** The chat's model now (`setModel` changes it). */
  model(): string;
  setModel(modelId: string): void;
  /** The provider's models, listed once (a failed list is asked for again after a minute; meanwhile empty). */
  listModels(): Promise<readonly ModelInfo[]>;
  /** The listed model, or a stand-in for one the list does not name. */
  modelInfo(list: readonly ModelInfo[], id: string): ModelInfo;
  /** Adds a health note to the chat (newest first) and returns it; sending it is the caller's. */
  addNote(rt: ChatRuntime, kind: HealthNote["kind"], text: string): HealthNote;
  /** What requests to each model have shown of its window: doubtful refused windows, windows raised by a success. */
  readonly windowEvidence: WindowEvidence;
  /** The system prompt's and the tool list's estimates for a tokenizer family (they never change). */
  fixedTokens(family: string | undefined): { readonly systemTokens: number; readonly toolTokens: number };
}

export function createEngineParts(options: ApiEngineOptions): EngineParts {
  const { provider } = options;
  const now = options.now ?? Date.now;
  let model = options.model;
  let models: readonly ModelInfo[] | null = options.models ?? null;
  let listFailedAt = Number.NEGATIVE_INFINITY;
  let noteCounter = 0;
  const fixedTokensByFamily = new Map<string | undefined, { systemTokens: number; toolTokens: number }>();

  return {
    options,
    provider,
    store: options.store,
    now,
    onError: options.onError ?? defaultErrorHandler,
    windowEvidence: createWindowEvidence(provider),
    model: () => model,
    setModel(modelId) {
      model = modelId;
    },
    async listModels() {
      if (models !== null) return models;
      // A provider that could not list its models is asked again after a minute, not before every turn.
      if (now() - listFailedAt < modelListRetryMs) return [];
      try {
        models = await provider.listModels({ timeoutMs: modelListTimeoutMs });
      } catch (error) {
        if (isAbortError(error)) throw error;
        // Unknown windows fall back to the defaults meanwhile.
        listFailedAt = now();
        return [];
      }
      return models;
    },
    modelInfo(list, id) {
      return (
        list.find((candidate) => candidate.id === id) ?? {
          id,
          displayName: id,
          ready: true,
          local: provider.local,
          provider: provider.provider,
        }
      );
    },
    addNote(rt, kind, text) {
      noteCounter += 1;
      const note: HealthNote = {
        id: `${rt.chatId}-${now()}-${noteCounter}`,
        chatId: rt.chatId,
        kind,
        text,
        at: now(),
        provider: provider.provider,
        model,
      };
      rt.healthNotes = [note, ...rt.healthNotes].slice(0, healthNotesKept);
      return note;
    },
    fixedTokens(family) {
      let fixed = fixedTokensByFamily.get(family);
      if (!fixed) {
        fixed = {
          systemTokens: options.systemPrompt ? estimateTokens(options.systemPrompt, family) : 0,
          toolTokens: options.tools?.length ? estimateTokens(JSON.stringify(options.tools), family) : 0,
        };
        fixedTokensByFamily.set(family, fixed);
      }
      return fixed;
    },
  };
}
