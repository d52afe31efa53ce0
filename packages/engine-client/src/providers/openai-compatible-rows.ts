import { z } from "zod";
import { type ListedModel, type ModelListContext, positiveWindow } from "./adapter-support.js";
import { joinURL } from "./http.js";
import type { ProviderId } from "./provider-adapter.js";

/** The rows of the OpenAI-style adapter (ADR 0053: one adapter, a row per company). */
export type OpenAICompatibleRowId = Exclude<ProviderId, "anthropic" | "google" | "ollama">;

/** What differs between companies that speak the OpenAI chat-completions API. */
export interface OpenAICompatibleRow {
  readonly id: OpenAICompatibleRowId;
  readonly displayName: string;
  readonly defaultBaseURL: string;
  /** A server on this computer by kind (whatever its host). */
  readonly localKind: boolean;
  /** Where the window is read (documentation; `listModels` does it). */
  readonly windowSource: string;
  /** How its "too long" refusals read (documentation; `recogniseTooLong` does it). */
  readonly tooLongWords: string;
  /** What is still unknown about this row. */
  readonly unknowns: string;
  /** The request field of the answer room. */
  readonly maxTokensField: "max_tokens" | "max_completion_tokens";
  /** Whether to ask for usage in the stream (`stream_options.include_usage`); other rows send it anyway. */
  readonly streamUsage: boolean;
  /** Fields added to every chat request. */
  readonly extraBody?: Readonly<Record<string, unknown>>;
  /** Send thinking back as `reasoning_content` on assistant messages that called tools. */
  readonly echoReasoningWithToolCalls?: boolean;
  readonly cheapestModel?: string;
  readonly smallModel?: string;
  /** Reads the model list and each model's window. */
  readonly listModels: (context: ModelListContext) => Promise<ListedModel[]>;
}

const windowNumber = z.number().nullish();
const idList = z.object({ data: z.array(z.object({ id: z.string() })) });

/** The server root of an OpenAI-style base URL (`http://host:1234/v1` → `http://host:1234`). */
export function serverRoot(baseURL: string): string {
  return baseURL.replace(/\/+$/, "").replace(/\/v1$/, "");
}

async function listIds(context: ModelListContext, keep: (id: string) => boolean = () => true) {
  const list = await context.get(joinURL(context.baseURL, "models"), idList);
  return list.data.filter((model) => keep(model.id)).map((model): ListedModel => ({ id: model.id, ready: true }));
}

// OpenAI's list mixes in embeddings, speech, images and moderation models.
const openAINotChat =
  /^(?:text-embedding|whisper|tts|dall-e|davinci|babbage|omni-moderation|text-moderation|gpt-image|sora)|transcribe|realtime|-tts|audio/i;
// Groq lists speech and guard models beside chat models.
const groqNotChat = /whisper|tts|playai|orpheus|guard/i;

const groqList = z.object({
  data: z.array(z.object({ id: z.string(), context_window: windowNumber, active: z.boolean().nullish() })),
});
const togetherEntry = z.object({
  id: z.string(),
  type: z.string().nullish(),
  display_name: z.string().nullish(),
  context_length: windowNumber,
});
const togetherList = z.union([z.array(togetherEntry), z.object({ data: z.array(togetherEntry) })]);
const mistralList = z.object({
  data: z.array(
    z.object({
      id: z.string(),
      name: z.string().nullish(),
      max_context_length: windowNumber,
      capabilities: z.object({ completion_chat: z.boolean().nullish() }).nullish(),
      deprecation: z.string().nullish(),
    }),
  ),
});
const openRouterList = z.object({
  data: z.array(
    z.object({
      id: z.string(),
      name: z.string().nullish(),
      context_length: windowNumber,
      top_provider: z.object({ context_length: windowNumber }).nullish(),
    }),
  ),
});
const vllmList = z.object({ data: z.array(z.object({ id: z.string(), max_model_len: windowNumber })) });
const llamaCppList = z.object({
  data: z.array(
    z.object({ id: z.string(), meta: z.object({ n_ctx: windowNumber, n_ctx_train: windowNumber }).nullish() }),
  ),
});
const llamaCppProps = z.object({
  default_generation_settings: z.object({ n_ctx: windowNumber }).nullish(),
  model_alias: z.string().nullish(),
});
const lmStudioV1List = z.object({
  models: z.array(
    z.object({
      type: z.string().nullish(),
      key: z.string(),
      display_name: z.string().nullish(),
      max_context_length: windowNumber,
      loaded_instances: z
        .array(z.object({ id: z.string().nullish(), config: z.object({ context_length: windowNumber }).nullish() }))
        .nullish(),
    }),
  ),
});
const lmStudioV0List = z.object({
  data: z.array(
    z.object({
      id: z.string(),
      type: z.string().nullish(),
      state: z.string().nullish(),
      max_context_length: windowNumber,
      loaded_context_length: windowNumber,
    }),
  ),
});

function minimum(values: readonly (number | undefined)[]): number | undefined {
  const known = values.filter((value): value is number => value !== undefined);
  return known.length > 0 ? Math.min(...known) : undefined;
}

async function listLlamaCpp(context: ModelListContext): Promise<ListedModel[]> {
  const root = serverRoot(context.baseURL);
  const list = await context.get(joinURL(context.baseURL, "models"), llamaCppList);
  // /props holds the per-slot n_ctx the server allocated (what refusals use); in router mode a bare
  // /props says 0, so each model is asked for by name.
  const bare = await context.tryGet(joinURL(root, "props"), llamaCppProps);
  const bareWindow = positiveWindow(bare?.default_generation_settings?.n_ctx);
  return Promise.all(
    list.data.map(async (model): Promise<ListedModel> => {
      let window = list.data.length === 1 ? bareWindow : undefined;
      if (window === undefined) {
        const props = await context.tryGet(
          `${joinURL(root, "props")}?model=${encodeURIComponent(model.id)}`,
          llamaCppProps,
        );
        window = positiveWindow(props?.default_generation_settings?.n_ctx) ?? bareWindow;
      }
      // Never n_ctx_train: that is what the model was trained on, not what the server allocated.
      return { id: model.id, context: window ?? positiveWindow(model.meta?.n_ctx), ready: true };
    }),
  );
}

async function listLmStudio(context: ModelListContext): Promise<ListedModel[]> {
  const root = serverRoot(context.baseURL);
  const v1 = await context.tryGet(joinURL(root, "api/v1/models"), lmStudioV1List);
  if (v1) {
    return v1.models
      .filter((model) => model.type !== "embedding")
      .map((model): ListedModel => {
        // The loaded instance's window, not max_context_length (what it could be loaded with).
        const loaded = model.loaded_instances ?? [];
        return {
          id: model.key,
          displayName: model.display_name ?? undefined,
          context: minimum(loaded.map((instance) => positiveWindow(instance.config?.context_length))),
          ready: loaded.length > 0,
        };
      });
  }
  const v0 = await context.tryGet(joinURL(root, "api/v0/models"), lmStudioV0List);
  if (v0) {
    // LM Studio can list one id twice (a loaded row and a loading one): keep the loaded row.
    const byId = new Map<string, ListedModel>();
    for (const model of v0.data) {
      if (model.type === "embeddings" || model.type === "embedding") continue;
      const loaded = model.state === "loaded";
      const listed: ListedModel = {
        id: model.id,
        context: loaded ? positiveWindow(model.loaded_context_length) : undefined,
        ready: loaded,
      };
      const before = byId.get(model.id);
      if (!before || (!before.ready && listed.ready)) byId.set(model.id, listed);
    }
    return [...byId.values()];
  }
  return listIds(context);
}

/** The rows, by id. */
export const openAICompatibleRows: Readonly<Record<OpenAICompatibleRowId, OpenAICompatibleRow>> = {
  openai: {
    id: "openai",
    displayName: "OpenAI",
    defaultBaseURL: "https://api.openai.com/v1",
    localKind: false,
    windowSource: "Not in `GET /v1/models` (id, object, created, owned_by only): the refusal, else the 128K default.",
    tooLongWords:
      "`This model's maximum context length is N tokens` (window; the `(A in the messages, B in the completion)` split gives the cause); Responses API `Your input exceeds the context window` (no number); code `context_length_exceeded`.",
    unknowns: "No window in the list; the Responses API refusal names none, so a static table may still be needed.",
    maxTokensField: "max_completion_tokens",
    streamUsage: true,
    cheapestModel: "gpt-5-nano",
    smallModel: "gpt-5-mini",
    listModels: (context) => listIds(context, (id) => !openAINotChat.test(id)),
  },
  deepseek: {
    id: "deepseek",
    displayName: "DeepSeek",
    defaultBaseURL: "https://api.deepseek.com",
    localKind: false,
    windowSource: "Not in `GET /models` (ids only): the refusal, else the 128K default.",
    tooLongWords:
      "OpenAI's wording `maximum context length is N tokens ... (A in the messages, B in the completion)`, with code `invalid_request_error`.",
    unknowns: "No window in the list. `Invalid max_tokens value, the valid range ...` is an output cap (not too long).",
    maxTokensField: "max_tokens",
    streamUsage: true,
    echoReasoningWithToolCalls: true,
    cheapestModel: "deepseek-chat",
    smallModel: "deepseek-chat",
    listModels: (context) => listIds(context),
  },
  xai: {
    id: "xai",
    displayName: "xAI",
    defaultBaseURL: "https://api.x.ai/v1",
    localKind: false,
    windowSource: "Not in `GET /v1/models` nor `/v1/language-models`: the refusal, else the 128K default.",
    tooLongWords:
      "`This model's maximum prompt length is N but the request contains M tokens` (N is the prompt limit); gRPC-style `Current message (M tokens) exceeds budget (N tokens)`.",
    unknowns: "No window in either list.",
    maxTokensField: "max_tokens",
    streamUsage: true,
    cheapestModel: "grok-3-mini",
    smallModel: "grok-3-mini",
    listModels: (context) => listIds(context),
  },
  groq: {
    id: "groq",
    displayName: "Groq",
    defaultBaseURL: "https://api.groq.com/openai/v1",
    localKind: false,
    windowSource:
      "`GET /openai/v1/models` → `context_window`; `active: false` is not ready; speech and guard models left out.",
    tooLongWords:
      "`Please reduce the length of the messages or completion.` (no number), older code `context_length_exceeded`. A 413 `tokens per minute (TPM)` is a rate limit, not too long.",
    unknowns: "The refusal names no window; the per-minute token limit can be below the window.",
    maxTokensField: "max_tokens",
    streamUsage: true,
    cheapestModel: "llama-3.1-8b-instant",
    smallModel: "llama-3.1-8b-instant",
    async listModels(context) {
      const list = await context.get(joinURL(context.baseURL, "models"), groqList);
      return list.data
        .filter((model) => !groqNotChat.test(model.id))
        .map((model) => ({
          id: model.id,
          context: positiveWindow(model.context_window),
          ready: model.active !== false,
        }));
    },
  },
  together: {
    id: "together",
    displayName: "Together AI",
    defaultBaseURL: "https://api.together.xyz/v1",
    localKind: false,
    windowSource: "`GET /v1/models` (a bare JSON array) → `context_length`; only `type: chat` models.",
    tooLongWords:
      "TGI-style `inputs tokens + max_new_tokens must be <= N. Given: A inputs tokens and B max_new_tokens`; SGLang-style `The input (A tokens) is longer than the model's context length (N tokens)`.",
    unknowns: "No verbatim modern refusal was found; the SGLang wording is an assumption.",
    maxTokensField: "max_tokens",
    streamUsage: false,
    cheapestModel: "meta-llama/Llama-3.2-3B-Instruct-Turbo",
    smallModel: "meta-llama/Meta-Llama-3.1-8B-Instruct-Turbo",
    async listModels(context) {
      const list = await context.get(joinURL(context.baseURL, "models"), togetherList);
      const entries = Array.isArray(list) ? list : list.data;
      return entries
        .filter((model) => !model.type || model.type === "chat")
        .map((model) => ({
          id: model.id,
          displayName: model.display_name ?? undefined,
          context: positiveWindow(model.context_length),
          ready: true,
        }));
    },
  },
  mistral: {
    id: "mistral",
    displayName: "Mistral",
    defaultBaseURL: "https://api.mistral.ai/v1",
    localKind: false,
    windowSource:
      "`GET /v1/models` → `max_context_length`; only `capabilities.completion_chat` models; a past `deprecation` is not ready.",
    tooLongWords:
      "`Prompt contains A tokens and 0 draft tokens, too large for model with N maximum context length` (code `3051`).",
    unknowns: "A negative `max_tokens` validation error (422) can hide an overflow; it is not recognised.",
    maxTokensField: "max_tokens",
    streamUsage: false,
    cheapestModel: "ministral-8b-latest",
    smallModel: "mistral-small-latest",
    async listModels(context) {
      const list = await context.get(joinURL(context.baseURL, "models"), mistralList);
      const now = Date.now();
      return list.data
        .filter((model) => model.capabilities?.completion_chat !== false)
        .map((model) => {
          const deprecated = model.deprecation ? Date.parse(model.deprecation) <= now : false;
          return { id: model.id, context: positiveWindow(model.max_context_length), ready: !deprecated };
        });
    },
  },
  openrouter: {
    id: "openrouter",
    displayName: "OpenRouter",
    defaultBaseURL: "https://openrouter.ai/api/v1",
    localKind: false,
    windowSource:
      "`GET /api/v1/models` → `top_provider.context_length` (the routed endpoint, what refusals use) before `context_length`.",
    tooLongWords:
      "`This endpoint's maximum context length is N tokens ... (A of text input, B of tool input, C in the output)`; relayed upstream wordings (vLLM, SGLang); errors inside HTTP 200 bodies and SSE events.",
    unknowns: "The upstream provider can change per request; the window of one endpoint may not hold for the next.",
    maxTokensField: "max_tokens",
    streamUsage: true,
    // Without this, small endpoints silently cut the middle of the prompt instead of refusing.
    extraBody: { transforms: [] },
    async listModels(context) {
      const list = await context.get(joinURL(context.baseURL, "models"), openRouterList);
      return list.data.map((model) => ({
        id: model.id,
        displayName: model.name ?? undefined,
        context: positiveWindow(model.top_provider?.context_length) ?? positiveWindow(model.context_length),
        ready: true,
      }));
    },
  },
  zhipu: {
    id: "zhipu",
    displayName: "Zhipu (BigModel / z.ai)",
    defaultBaseURL: "https://open.bigmodel.cn/api/paas/v4",
    localKind: false,
    windowSource: "Not in `GET /api/paas/v4/models` (ids only): the refusal, else the 128K default.",
    tooLongWords:
      "Business code `1261`, `Prompt exceeds max length` (no number); z.ai may accept and end with `finish_reason: model_context_window_exceeded` (HTTP 200).",
    unknowns: "No window anywhere: neither list nor refusal names one.",
    maxTokensField: "max_tokens",
    streamUsage: false,
    cheapestModel: "glm-4.5-flash",
    smallModel: "glm-4.5-air",
    listModels: (context) => listIds(context),
  },
  vllm: {
    id: "vllm",
    displayName: "vLLM",
    defaultBaseURL: "http://127.0.0.1:8000/v1",
    // Often a GPU server elsewhere: local only when its host is loopback (as context's isLocalServer says).
    localKind: false,
    windowSource: "`GET /v1/models` → `max_model_len` (prompt + output).",
    tooLongWords:
      "`This model's maximum context length is N tokens. However, you requested ... (A in the messages, B in the completion)` or `your request has A input tokens`; old `max_tokens must be at least 1, got -K` (a disguised overflow).",
    unknowns:
      "Wording changes between releases; 0.15 dev printed `max_model_len - max_tokens` as the window (a 3-token window is not remembered).",
    maxTokensField: "max_tokens",
    streamUsage: true,
    async listModels(context) {
      const list = await context.get(joinURL(context.baseURL, "models"), vllmList);
      return list.data.map((model) => ({ id: model.id, context: positiveWindow(model.max_model_len), ready: true }));
    },
  },
  "llama.cpp": {
    id: "llama.cpp",
    displayName: "llama.cpp server",
    defaultBaseURL: "http://127.0.0.1:8080/v1",
    localKind: true,
    windowSource:
      "`GET /props` → `default_generation_settings.n_ctx` (per slot; `/props?model=` in router mode), else `/v1/models` `meta.n_ctx`; never `n_ctx_train`.",
    tooLongWords:
      "`type: exceed_context_size_error` with the fields `n_ctx` (window) and `n_prompt_tokens` (status 400, or 500 in older builds).",
    unknowns: "With `--parallel` the per-slot window is `-c / parallel`; a server without `/props` gives no window.",
    maxTokensField: "max_tokens",
    streamUsage: true,
    listModels: listLlamaCpp,
  },
  lmstudio: {
    id: "lmstudio",
    displayName: "LM Studio",
    defaultBaseURL: "http://127.0.0.1:1234/v1",
    localKind: true,
    windowSource:
      "`GET /api/v1/models` → `loaded_instances[].config.context_length` (the loaded window, not `max_context_length`), else `/api/v0/models` `loaded_context_length`; a model not loaded has no window and is not ready.",
    tooLongWords:
      "`n_keep: A >= n_ctx: N`, `loaded with context length of only N tokens`, `Reached context length of N tokens` (mid-answer); `error` is a plain string.",
    unknowns: "With JIT loading a model has no window until first use; streamed usage is not always sent.",
    maxTokensField: "max_tokens",
    streamUsage: true,
    listModels: listLmStudio,
  },
};

/** The row ids, in table order. */
export const openAICompatibleRowIds = Object.keys(openAICompatibleRows) as OpenAICompatibleRowId[];
