import type { Usage } from "@conch/engine-client";

/** The four API shapes the fake server speaks. */
export type FakeDialect = "openai" | "anthropic" | "google" | "ollama";

/** The rows the `openai` dialect can play (each lists models and streams as that company does). */
export type FakeOpenAIRow =
  | "openai"
  | "deepseek"
  | "xai"
  | "groq"
  | "together"
  | "mistral"
  | "openrouter"
  | "zhipu"
  | "vllm"
  | "llama.cpp"
  | "lmstudio";

/** A model the fake server knows. */
export interface FakeModel {
  readonly id: string;
  /** The window the server enforces, and lists where its provider lists one. Default: none (never refuses). */
  readonly window?: number;
  /**
   * What the list's less-trusted field says, where the provider has two: OpenRouter `context_length` (the
   * window is `top_provider.context_length`), llama.cpp `n_ctx_train`, LM Studio `max_context_length`, Ollama's
   * trained `context_length` in `/api/show`. Default: the window.
   */
  readonly advertisedWindow?: number;
  readonly displayName?: string;
  /** Loaded in memory (LM Studio). Default true. */
  readonly loaded?: boolean;
}

/** A tool call in a scripted reply. */
export interface FakeToolCall {
  /** Default: `call_<n>` (Gemini and Ollama send none unless given). */
  readonly id?: string;
  readonly name: string;
  /** JSON text or an object. */
  readonly arguments: string | Readonly<Record<string, unknown>>;
}

/** What the fake server answers to one chat request. */
export interface FakeReply {
  readonly text?: string;
  readonly thinking?: string;
  /** A thinking signature (Anthropic `signature_delta`, Gemini `thoughtSignature`). */
  readonly thinkingSignature?: string;
  readonly toolCalls?: readonly FakeToolCall[];
  /** Usage to report. Default: counted with the server's `countTokens`. */
  readonly usage?: Partial<Usage>;
  /**
   * Why the answer ends: `stop`, `length`, `tool-calls`, `content-filter`, or the dialect's own raw value
   * (`model_context_window_exceeded`, `SAFETY`, ...). Default `stop`, or `tool-calls` with tool calls.
   */
  readonly finishReason?: string;
}

/** The base path of each row and dialect (what `baseURL` ends with). */
export function basePath(dialect: FakeDialect, row: FakeOpenAIRow): string {
  switch (dialect) {
    case "anthropic":
      return "/v1";
    case "google":
      return "/v1beta";
    case "ollama":
      return "";
    case "openai":
      switch (row) {
        case "deepseek":
          return "";
        case "groq":
          return "/openai/v1";
        case "openrouter":
          return "/api/v1";
        case "zhipu":
          return "/api/paas/v4";
        default:
          return "/v1";
      }
    default:
      return dialect satisfies never;
  }
}

const created = 1_735_000_000;

function windowOf(model: FakeModel): number | null {
  return model.window ?? null;
}
function advertisedOf(model: FakeModel): number | null {
  return model.advertisedWindow ?? model.window ?? null;
}

/** The `/models` body of an OpenAI-style row, shaped as that company's. */
export function openAIModelList(row: FakeOpenAIRow, models: readonly FakeModel[]): unknown {
  const plain = (model: FakeModel) => ({ id: model.id, object: "model", created, owned_by: row });
  switch (row) {
    case "openai":
    case "xai":
    case "zhipu":
    case "lmstudio":
      return { object: "list", data: models.map(plain) };
    case "deepseek":
      return { object: "list", data: models.map((model) => ({ id: model.id, object: "model", owned_by: "deepseek" })) };
    case "groq":
      return {
        object: "list",
        data: models.map((model) => ({
          ...plain(model),
          active: true,
          context_window: windowOf(model),
          public_apps: null,
          max_completion_tokens: 8192,
        })),
      };
    case "together":
      return models.map((model) => ({
        ...plain(model),
        type: "chat",
        running: false,
        display_name: model.displayName ?? model.id,
        context_length: windowOf(model),
      }));
    case "mistral":
      return {
        object: "list",
        data: models.map((model) => ({
          ...plain(model),
          owned_by: "mistralai",
          capabilities: { completion_chat: true, completion_fim: false, function_calling: true, vision: false },
          name: model.id,
          description: model.displayName ?? model.id,
          max_context_length: windowOf(model),
          aliases: [],
          type: "base",
        })),
      };
    case "openrouter":
      return {
        data: models.map((model) => ({
          id: model.id,
          name: model.displayName ?? model.id,
          created,
          context_length: advertisedOf(model),
          top_provider: { context_length: windowOf(model), max_completion_tokens: null, is_moderated: false },
        })),
      };
    case "vllm":
      return {
        object: "list",
        data: models.map((model) => ({
          ...plain(model),
          owned_by: "vllm",
          root: model.id,
          parent: null,
          max_model_len: windowOf(model),
        })),
      };
    case "llama.cpp":
      // The older shape without meta.n_ctx: the window must come from /props, never n_ctx_train.
      return {
        object: "list",
        data: models.map((model) => ({
          ...plain(model),
          owned_by: "llamacpp",
          meta: { vocab_type: 2, n_vocab: 128256, n_ctx_train: advertisedOf(model), n_embd: 4096 },
        })),
      };
    default:
      return row satisfies never;
  }
}

/** llama.cpp `/props`: the per-slot `n_ctx`; in router mode (several models) a bare `/props` says 0. */
export function llamaCppProps(models: readonly FakeModel[], modelId: string | null): unknown {
  const model = modelId === null ? (models.length === 1 ? models[0] : undefined) : models.find((m) => m.id === modelId);
  return {
    default_generation_settings: { params: { temperature: 0.8 }, n_ctx: model?.window ?? 0 },
    total_slots: 1,
    model_alias: model?.id ?? "",
  };
}

/** LM Studio `/api/v1/models` (0.4+): the loaded instance's window and the most it could load. */
export function lmStudioV1List(models: readonly FakeModel[]): unknown {
  return {
    models: models.map((model) => ({
      type: "llm",
      publisher: "fake",
      key: model.id,
      display_name: model.displayName ?? model.id,
      architecture: "llama",
      max_context_length: advertisedOf(model),
      loaded_instances: model.loaded === false ? [] : [{ id: model.id, config: { context_length: windowOf(model) } }],
      format: "gguf",
    })),
  };
}

/** LM Studio `/api/v0/models` (0.3.6+). */
export function lmStudioV0List(models: readonly FakeModel[]): unknown {
  return {
    object: "list",
    data: models.map((model) => ({
      id: model.id,
      object: "model",
      type: "llm",
      publisher: "fake",
      state: model.loaded === false ? "not-loaded" : "loaded",
      max_context_length: advertisedOf(model),
      ...(model.loaded !== false && { loaded_context_length: windowOf(model) }),
    })),
  };
}

/** Anthropic `GET /v1/models`. */
export function anthropicModelList(models: readonly FakeModel[]): unknown {
  return {
    data: models.map((model) => ({
      type: "model",
      id: model.id,
      display_name: model.displayName ?? model.id,
      created_at: "2025-10-01T00:00:00Z",
      max_input_tokens: windowOf(model),
      max_tokens: 64000,
    })),
    has_more: false,
    first_id: models[0]?.id ?? null,
    last_id: models.at(-1)?.id ?? null,
  };
}

/** Gemini `GET /v1beta/models`. */
export function googleModelList(models: readonly FakeModel[]): unknown {
  return {
    models: models.map((model) => ({
      name: `models/${model.id}`,
      version: "001",
      displayName: model.displayName ?? model.id,
      inputTokenLimit: windowOf(model),
      outputTokenLimit: 65536,
      supportedGenerationMethods: ["generateContent", "countTokens"],
    })),
  };
}

/** Ollama `GET /api/tags`. */
export function ollamaTags(models: readonly FakeModel[]): unknown {
  return {
    models: models.map((model) => ({
      name: model.id,
      model: model.id,
      modified_at: "2025-10-01T00:00:00Z",
      size: 4_920_000_000,
      digest: "0".repeat(64),
      details: { format: "gguf", family: "llama", parameter_size: "8B", quantization_level: "Q4_K_M" },
    })),
  };
}

/** Ollama `POST /api/show`: what the model could read (its trained window). */
export function ollamaShow(model: FakeModel): unknown {
  return {
    details: { format: "gguf", family: "llama", parameter_size: "8B" },
    model_info: {
      "general.architecture": "llama",
      "general.parameter_count": 8_030_261_248,
      "llama.context_length": advertisedOf(model),
    },
    capabilities: ["completion", "tools"],
  };
}

/** Splits a text into pieces of `size` characters (at least one piece for a non-empty text). */
function pieces(text: string, size: number): string[] {
  const result: string[] = [];
  for (let start = 0; start < text.length; start += Math.max(1, size)) result.push(text.slice(start, start + size));
  return result;
}

function argumentsText(call: FakeToolCall): string {
  return typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments);
}

function argumentsObject(call: FakeToolCall): Record<string, unknown> {
  if (typeof call.arguments !== "string") return { ...call.arguments };
  try {
    return JSON.parse(call.arguments) as Record<string, unknown>;
  } catch {
    return {};
  }
}

const finishReasons: Readonly<Record<FakeDialect, Readonly<Record<string, string>>>> = {
  openai: { stop: "stop", length: "length", "tool-calls": "tool_calls", "content-filter": "content_filter" },
  anthropic: { stop: "end_turn", length: "max_tokens", "tool-calls": "tool_use", "content-filter": "refusal" },
  google: { stop: "STOP", length: "MAX_TOKENS", "tool-calls": "STOP", "content-filter": "SAFETY" },
  ollama: { stop: "stop", length: "length", "tool-calls": "stop", "content-filter": "stop" },
};

/** The finish value in a dialect's own words. */
function dialectFinishReason(dialect: FakeDialect, reply: FakeReply): string {
  const hasTools = (reply.toolCalls?.length ?? 0) > 0;
  const reason = reply.finishReason ?? (hasTools ? "tool-calls" : "stop");
  return finishReasons[dialect][reason] ?? reason;
}

/** A stream as the chunks to write, in order (SSE events or NDJSON lines, each complete). */
export type StreamScript = readonly string[];

function sse(data: unknown, event?: string): string {
  return `${event ? `event: ${event}\n` : ""}data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`;
}

/** An OpenAI-style stream of a reply, as the row streams it (reasoning field, usage placement). */
export function openAIStream(
  row: FakeOpenAIRow,
  model: string,
  reply: FakeReply,
  usage: Usage,
  options: { readonly chunkSize: number; readonly includeUsage: boolean },
): StreamScript {
  const chunk = (delta: unknown, finish: string | null = null, extra: Record<string, unknown> = {}) =>
    sse({
      id: "chatcmpl-fake",
      object: "chat.completion.chunk",
      created,
      model,
      choices: [{ index: 0, delta, finish_reason: finish }],
      ...extra,
    });
  const out: string[] = [chunk({ role: "assistant", content: "" })];
  for (const piece of pieces(reply.thinking ?? "", options.chunkSize)) {
    if (row === "mistral")
      out.push(chunk({ content: [{ type: "thinking", thinking: [{ type: "text", text: piece }] }] }));
    else if (row === "openrouter" || row === "groq") out.push(chunk({ reasoning: piece }));
    else out.push(chunk({ reasoning_content: piece }));
  }
  for (const piece of pieces(reply.text ?? "", options.chunkSize)) out.push(chunk({ content: piece }));
  for (const [index, call] of (reply.toolCalls ?? []).entries()) {
    const text = argumentsText(call);
    const half = Math.ceil(text.length / 2);
    out.push(
      chunk({
        tool_calls: [
          { index, id: call.id ?? `call_${index}`, type: "function", function: { name: call.name, arguments: "" } },
        ],
      }),
    );
    out.push(chunk({ tool_calls: [{ index, function: { arguments: text.slice(0, half) } }] }));
    out.push(chunk({ tool_calls: [{ index, function: { arguments: text.slice(half) } }] }));
  }
  const usageBody =
    row === "deepseek"
      ? {
          prompt_tokens: usage.inputTokens,
          completion_tokens: usage.outputTokens,
          total_tokens: usage.inputTokens + usage.outputTokens,
          prompt_cache_hit_tokens: usage.cachedInputTokens,
          prompt_cache_miss_tokens: usage.inputTokens - usage.cachedInputTokens,
        }
      : {
          prompt_tokens: usage.inputTokens,
          completion_tokens: usage.outputTokens,
          total_tokens: usage.inputTokens + usage.outputTokens,
          prompt_tokens_details: { cached_tokens: usage.cachedInputTokens },
        };
  const finish = dialectFinishReason("openai", reply);
  // Groq reports a stream's usage in x_groq; Mistral, Zhipu and Together send it with the last chunk anyway.
  if (row === "groq") out.push(chunk({}, finish, { x_groq: { usage: usageBody } }));
  else if (row === "mistral" || row === "zhipu" || row === "together")
    out.push(chunk({}, finish, { usage: usageBody }));
  else {
    out.push(chunk({}, finish));
    if (options.includeUsage) {
      out.push(
        sse({ id: "chatcmpl-fake", object: "chat.completion.chunk", created, model, choices: [], usage: usageBody }),
      );
    }
  }
  out.push(sse("[DONE]"));
  return out;
}

/** An Anthropic Messages stream of a reply. */
export function anthropicStream(model: string, reply: FakeReply, usage: Usage, chunkSize: number): StreamScript {
  const out: string[] = [
    sse(
      {
        type: "message_start",
        message: {
          id: "msg_fake",
          type: "message",
          role: "assistant",
          model,
          content: [],
          stop_reason: null,
          usage: {
            input_tokens: usage.inputTokens - usage.cachedInputTokens,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: usage.cachedInputTokens,
            output_tokens: 1,
          },
        },
      },
      "message_start",
    ),
    sse({ type: "ping" }, "ping"),
  ];
  let index = 0;
  if (reply.thinking) {
    out.push(
      sse(
        { type: "content_block_start", index, content_block: { type: "thinking", thinking: "" } },
        "content_block_start",
      ),
    );
    for (const piece of pieces(reply.thinking, chunkSize)) {
      out.push(
        sse(
          { type: "content_block_delta", index, delta: { type: "thinking_delta", thinking: piece } },
          "content_block_delta",
        ),
      );
    }
    out.push(
      sse(
        {
          type: "content_block_delta",
          index,
          delta: { type: "signature_delta", signature: reply.thinkingSignature ?? "fake-signature" },
        },
        "content_block_delta",
      ),
    );
    out.push(sse({ type: "content_block_stop", index }, "content_block_stop"));
    index += 1;
  }
  if (reply.text) {
    out.push(
      sse({ type: "content_block_start", index, content_block: { type: "text", text: "" } }, "content_block_start"),
    );
    for (const piece of pieces(reply.text, chunkSize)) {
      out.push(
        sse({ type: "content_block_delta", index, delta: { type: "text_delta", text: piece } }, "content_block_delta"),
      );
    }
    out.push(sse({ type: "content_block_stop", index }, "content_block_stop"));
    index += 1;
  }
  for (const [order, call] of (reply.toolCalls ?? []).entries()) {
    const text = argumentsText(call);
    const half = Math.ceil(text.length / 2);
    out.push(
      sse(
        {
          type: "content_block_start",
          index,
          content_block: { type: "tool_use", id: call.id ?? `toolu_${order}`, name: call.name, input: {} },
        },
        "content_block_start",
      ),
    );
    for (const part of [text.slice(0, half), text.slice(half)]) {
      out.push(
        sse(
          { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: part } },
          "content_block_delta",
        ),
      );
    }
    out.push(sse({ type: "content_block_stop", index }, "content_block_stop"));
    index += 1;
  }
  out.push(
    sse(
      {
        type: "message_delta",
        delta: { stop_reason: dialectFinishReason("anthropic", reply), stop_sequence: null },
        usage: { output_tokens: usage.outputTokens },
      },
      "message_delta",
    ),
  );
  out.push(sse({ type: "message_stop" }, "message_stop"));
  return out;
}

/** A Gemini `streamGenerateContent?alt=sse` stream of a reply. */
export function googleStream(model: string, reply: FakeReply, usage: Usage, chunkSize: number): StreamScript {
  const candidate = (parts: unknown[], finishReason?: string) => ({
    candidates: [{ content: { role: "model", parts }, index: 0, ...(finishReason && { finishReason }) }],
    modelVersion: model,
  });
  const out: string[] = [];
  for (const piece of pieces(reply.thinking ?? "", chunkSize))
    out.push(sse(candidate([{ text: piece, thought: true }])));
  const calls = reply.toolCalls ?? [];
  let signature = reply.thinkingSignature;
  const textPieces = pieces(reply.text ?? "", chunkSize);
  for (const [order, piece] of textPieces.entries()) {
    // Gemini puts the thought signature on the first function call, or else on the text.
    const withSignature = order === 0 && calls.length === 0 && signature !== undefined;
    out.push(sse(candidate([{ text: piece, ...(withSignature && { thoughtSignature: signature }) }])));
    if (withSignature) signature = undefined;
  }
  if (calls.length > 0) {
    out.push(
      sse(
        candidate(
          calls.map((call, order) => ({
            functionCall: { name: call.name, args: argumentsObject(call), ...(call.id && { id: call.id }) },
            ...(order === 0 && signature !== undefined && { thoughtSignature: signature }),
          })),
        ),
      ),
    );
  }
  out.push(
    sse({
      ...candidate([{ text: "" }], dialectFinishReason("google", reply)),
      usageMetadata: {
        promptTokenCount: usage.inputTokens,
        candidatesTokenCount: usage.outputTokens,
        totalTokenCount: usage.inputTokens + usage.outputTokens,
        cachedContentTokenCount: usage.cachedInputTokens,
      },
    }),
  );
  return out;
}

/** An Ollama `/api/chat` NDJSON stream of a reply. */
export function ollamaStream(model: string, reply: FakeReply, usage: Usage, chunkSize: number): StreamScript {
  const line = (value: unknown) => `${JSON.stringify(value)}\n`;
  const at = "2025-10-01T00:00:00Z";
  const out: string[] = [];
  for (const piece of pieces(reply.thinking ?? "", chunkSize)) {
    out.push(
      line({ model, created_at: at, message: { role: "assistant", content: "", thinking: piece }, done: false }),
    );
  }
  for (const piece of pieces(reply.text ?? "", chunkSize)) {
    out.push(line({ model, created_at: at, message: { role: "assistant", content: piece }, done: false }));
  }
  const calls = reply.toolCalls ?? [];
  if (calls.length > 0) {
    out.push(
      line({
        model,
        created_at: at,
        message: {
          role: "assistant",
          content: "",
          tool_calls: calls.map((call, index) => ({
            ...(call.id && { id: call.id }),
            function: { index, name: call.name, arguments: argumentsObject(call) },
          })),
        },
        done: false,
      }),
    );
  }
  out.push(
    line({
      model,
      created_at: at,
      message: { role: "assistant", content: "" },
      done: true,
      done_reason: dialectFinishReason("ollama", reply),
      total_duration: 1_000_000,
      prompt_eval_count: usage.inputTokens,
      eval_count: usage.outputTokens,
    }),
  );
  return out;
}

/** A 404 for an unknown model, in the dialect's words. */
export function unknownModelBody(dialect: FakeDialect, model: string): string {
  switch (dialect) {
    case "openai":
      return JSON.stringify({
        error: {
          message: `The model \`${model}\` does not exist or you do not have access to it.`,
          type: "invalid_request_error",
          param: null,
          code: "model_not_found",
        },
      });
    case "anthropic":
      return JSON.stringify({ type: "error", error: { type: "not_found_error", message: `model: ${model}` } });
    case "google":
      return JSON.stringify({
        error: {
          code: 404,
          message: `models/${model} is not found for API version v1beta, or is not supported for generateContent.`,
          status: "NOT_FOUND",
        },
      });
    case "ollama":
      return JSON.stringify({ error: `model '${model}' not found` });
    default:
      return dialect satisfies never;
  }
}

/** A 401 for a wrong key, in the dialect's words. */
export function unauthorisedBody(dialect: FakeDialect): string {
  switch (dialect) {
    case "openai":
      return JSON.stringify({
        error: {
          message: "Incorrect API key provided.",
          type: "invalid_request_error",
          param: null,
          code: "invalid_api_key",
        },
      });
    case "anthropic":
      return JSON.stringify({ type: "error", error: { type: "authentication_error", message: "invalid x-api-key" } });
    case "google":
      return JSON.stringify({
        error: { code: 400, message: "API key not valid. Please pass a valid API key.", status: "INVALID_ARGUMENT" },
      });
    case "ollama":
      return JSON.stringify({ error: "unauthorized" });
    default:
      return dialect satisfies never;
  }
}

/** A 500 in the dialect's words. */
export function serverErrorBody(dialect: FakeDialect): string {
  switch (dialect) {
    case "openai":
      return JSON.stringify({
        error: { message: "The server had an error while processing your request.", type: "server_error", code: null },
      });
    case "anthropic":
      return JSON.stringify({ type: "error", error: { type: "api_error", message: "Internal server error" } });
    case "google":
      return JSON.stringify({ error: { code: 500, message: "Internal error encountered.", status: "INTERNAL" } });
    case "ollama":
      return JSON.stringify({ error: "llama runner process has terminated: exit status 2" });
    default:
      return dialect satisfies never;
  }
}

/** An error sent inside an OK stream (an SSE `error` event, or an NDJSON `error` line) carrying `body`. */
export function inStreamError(dialect: FakeDialect, body: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    parsed = undefined;
  }
  switch (dialect) {
    case "openai":
      return sse(
        typeof parsed === "object" && parsed !== null && "error" in parsed
          ? parsed
          : { error: { message: body, code: 400 } },
      );
    case "anthropic":
      return sse(
        typeof parsed === "object" && parsed !== null && (parsed as { type?: unknown }).type === "error"
          ? parsed
          : { type: "error", error: { type: "invalid_request_error", message: body } },
        "error",
      );
    case "google":
      return sse(
        typeof parsed === "object" && parsed !== null && "error" in parsed
          ? parsed
          : { error: { code: 400, message: body } },
      );
    case "ollama": {
      const message =
        typeof parsed === "object" && parsed !== null && typeof (parsed as { error?: unknown }).error === "string"
          ? (parsed as { error: string }).error
          : body;
      return `${JSON.stringify({ error: message })}\n`;
    }
    default:
      return dialect satisfies never;
  }
}
