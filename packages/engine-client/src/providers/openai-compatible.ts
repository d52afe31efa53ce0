import { z } from "zod";
import type { Usage } from "../messages.js";
import {
  createModelListContext,
  rememberingRefusals,
  resolveBaseURL,
  resolveLocal,
  resolveWindows,
  toModelInfos,
  withV1Path,
} from "./adapter-support.js";
import { convertToOpenAIMessages, convertToOpenAITools } from "./convert-to-openai-messages.js";
import { createTransport, joinURL, type OpenCall, openCall, parseJsonOrFail, readSse } from "./http.js";
import { mapOpenAIFinishReason } from "./map-openai-finish-reason.js";
import {
  type OpenAICompatibleRow,
  type OpenAICompatibleRowId,
  openAICompatibleRows,
} from "./openai-compatible-rows.js";
import type { ChatRequest, ProviderAdapter, ProviderSettings, ProviderStreamPart } from "./provider-adapter.js";

const count = z.number().nullish();
const usageSchema = z.object({
  prompt_tokens: count,
  completion_tokens: count,
  prompt_tokens_details: z.object({ cached_tokens: count }).nullish(),
  // DeepSeek reports its disk cache this way.
  prompt_cache_hit_tokens: count,
});
const contentPiece = z.object({
  type: z.string(),
  text: z.string().nullish(),
  thinking: z.array(z.object({ type: z.string(), text: z.string().nullish() })).nullish(),
});
const chunkSchema = z.object({
  choices: z
    .array(
      z.object({
        index: z.number().nullish(),
        delta: z
          .object({
            // Mistral streams an array of pieces (text and thinking) where others stream a string.
            content: z.union([z.string(), z.array(contentPiece)]).nullish(),
            reasoning_content: z.string().nullish(),
            reasoning: z.string().nullish(),
            tool_calls: z
              .array(
                z.object({
                  index: z.number().nullish(),
                  id: z.string().nullish(),
                  function: z.object({ name: z.string().nullish(), arguments: z.string().nullish() }).nullish(),
                }),
              )
              .nullish(),
          })
          .nullish(),
        finish_reason: z.string().nullish(),
      }),
    )
    .nullish(),
  usage: usageSchema.nullish(),
  // Groq puts the usage of a stream here.
  x_groq: z.object({ usage: usageSchema.nullish() }).nullish(),
});

function toUsage(usage: z.infer<typeof usageSchema>): Usage {
  return {
    inputTokens: usage.prompt_tokens ?? 0,
    outputTokens: usage.completion_tokens ?? 0,
    cachedInputTokens: usage.prompt_tokens_details?.cached_tokens ?? usage.prompt_cache_hit_tokens ?? 0,
  };
}

function errorCodeOf(value: unknown): number | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const record = value as Record<string, unknown>;
  const error = record.error;
  const code =
    typeof error === "object" && error !== null
      ? ((error as Record<string, unknown>).code ?? record.code)
      : record.code;
  const number = typeof code === "string" ? Number(code) : code;
  return typeof number === "number" && Number.isFinite(number) ? number : undefined;
}

function hasError(value: unknown): boolean {
  if (typeof value !== "object" || value === null) return false;
  const record = value as Record<string, unknown>;
  return (record.error !== undefined && record.error !== null) || record.object === "error" || record.type === "error";
}

async function* streamOpenAIChunks(call: OpenCall, rowId: OpenAICompatibleRowId): AsyncGenerator<ProviderStreamPart> {
  const sse = readSse(call);
  const toolCalls = new Map<number, { id: string; name: string; arguments: string }>();
  let finishReason: string | undefined;
  let usage: Usage | undefined;
  let sawDone = false;
  let afterOutput = false;
  try {
    for await (const event of sse.events()) {
      const data = event.data.trim();
      if (data === "[DONE]") {
        sawDone = true;
        break;
      }
      if (data === "") continue;
      const json = parseJsonOrFail(call, data, afterOutput);
      if (event.event === "error" || hasError(json)) throw call.errorInBody(data, errorCodeOf(json), afterOutput);
      const parsed = chunkSchema.safeParse(json);
      if (!parsed.success) throw call.unexpected(data, `${rowId} sent an unexpected stream piece`, afterOutput);
      const chunk = parsed.data;
      const reported = chunk.usage ?? chunk.x_groq?.usage;
      if (reported) usage = toUsage(reported);
      for (const [position, choice] of (chunk.choices ?? []).entries()) {
        if ((choice.index ?? 0) !== 0) continue;
        const delta = choice.delta;
        const reasoning = delta?.reasoning_content ?? delta?.reasoning;
        if (reasoning) {
          afterOutput = true;
          yield { type: "thinking-delta", delta: reasoning };
        }
        const content = delta?.content;
        if (typeof content === "string" && content !== "") {
          afterOutput = true;
          yield { type: "text-delta", delta: content };
        } else if (Array.isArray(content)) {
          for (const piece of content) {
            if (piece.type === "thinking") {
              const text = (piece.thinking ?? []).map((inner) => inner.text ?? "").join("");
              if (text) {
                afterOutput = true;
                yield { type: "thinking-delta", delta: text };
              }
            } else if (piece.text) {
              afterOutput = true;
              yield { type: "text-delta", delta: piece.text };
            }
          }
        }
        for (const [order, piece] of (delta?.tool_calls ?? []).entries()) {
          // Servers that send whole calls without an index are keyed by their place.
          const index = piece.index ?? order + position * 1000;
          const existing = toolCalls.get(index);
          if (existing) {
            existing.arguments += piece.function?.arguments ?? "";
            if (piece.function?.name && !existing.name) existing.name = piece.function.name;
          } else {
            toolCalls.set(index, {
              id: piece.id ?? "",
              name: piece.function?.name ?? "",
              arguments: piece.function?.arguments ?? "",
            });
          }
        }
        if (choice.finish_reason) {
          // z.ai accepts an oversized prompt and ends at once with this reason: a "too long" refusal.
          if (choice.finish_reason === "model_context_window_exceeded") {
            throw call.errorInBody(JSON.stringify({ finish_reason: choice.finish_reason }), undefined, afterOutput);
          }
          finishReason = choice.finish_reason;
        }
      }
    }
    if (sse.eventCount === 0) {
      if (sse.rawText.trim() === "") {
        throw call.incomplete(`${rowId} ended the answer before it started`, false);
      }
      // A plain body where a stream was expected: an error object (OpenRouter puts some inside a 200).
      throw call.unexpected(sse.rawText, `${rowId} sent a body that is not a stream`, false);
    }
    if (finishReason === undefined && !sawDone) {
      throw call.incomplete(`${rowId} stopped the stream before the answer was complete`, afterOutput);
    }
  } catch (error) {
    throw call.failure(error, afterOutput);
  } finally {
    call.close();
  }
  const calls = [...toolCalls.entries()].sort(([a], [b]) => a - b).map(([, toolCall]) => toolCall);
  for (const [order, toolCall] of calls.entries()) {
    yield {
      type: "tool-call",
      id: toolCall.id || `call_${order}`,
      name: toolCall.name,
      arguments: toolCall.arguments || "{}",
    };
  }
  if (usage) yield { type: "usage", usage };
  yield { type: "finish", reason: mapOpenAIFinishReason(finishReason ?? "stop", calls.length > 0) };
}

/** Settings of the OpenAI-style adapter. */
export interface OpenAICompatibleSettings extends ProviderSettings {
  /** The company row. */
  readonly row: OpenAICompatibleRowId | OpenAICompatibleRow;
}

/** Local servers with endpoints of their own beside the OpenAI-style API under `/v1`: their address works bare. */
const servedUnderV1: ReadonlySet<string> = new Set(["llama.cpp", "lmstudio", "vllm"]);

/**
 * The OpenAI-style adapter: one implementation, a row per company (OpenAI, DeepSeek, xAI, Groq, Together,
 * Mistral, OpenRouter, Zhipu, vLLM, llama.cpp's server, LM Studio). The row says where each model's
 * window is read and which fields the company wants.
 */
export function createOpenAICompatible(settings: OpenAICompatibleSettings): ProviderAdapter {
  const row = typeof settings.row === "string" ? openAICompatibleRows[settings.row] : settings.row;
  const given = resolveBaseURL(settings, row.defaultBaseURL);
  const baseURL = servedUnderV1.has(row.id) ? withV1Path(given) : given;
  const local = resolveLocal(settings, row.localKind, baseURL);
  const windows = resolveWindows(settings);
  const transport = createTransport(
    row.id,
    settings,
    settings.apiKey ? { authorization: `Bearer ${settings.apiKey}` } : {},
  );
  const cheapestModel = settings.cheapestModel ?? row.cheapestModel;
  const smallModel = settings.smallModel ?? row.smallModel;

  async function* stream(request: ChatRequest): AsyncGenerator<ProviderStreamPart> {
    const body = {
      model: request.model,
      messages: convertToOpenAIMessages(request.system, request.messages, {
        echoReasoningWithToolCalls: row.echoReasoningWithToolCalls ?? false,
      }),
      stream: true,
      ...(row.streamUsage && { stream_options: { include_usage: true } }),
      ...(request.maxOutputTokens !== undefined && { [row.maxTokensField]: request.maxOutputTokens }),
      ...(request.tools && request.tools.length > 0 && { tools: convertToOpenAITools(request.tools) }),
      ...row.extraBody,
    };
    const call = await openCall(transport, {
      url: joinURL(baseURL, "chat/completions"),
      body,
      headers: { accept: "text/event-stream" },
      phase: "chat",
      model: request.model,
      abortSignal: request.abortSignal,
      timeoutMs: request.timeoutMs,
    });
    yield* streamOpenAIChunks(call, row.id);
  }

  return {
    provider: row.id,
    local,
    baseURL,
    windows,
    ...(cheapestModel !== undefined && { cheapestModel }),
    ...(smallModel !== undefined && { smallModel }),
    async listModels(options) {
      const listed = await row.listModels(createModelListContext(transport, baseURL, options));
      return toModelInfos(row.id, local, windows, listed);
    },
    streamChat(request) {
      return rememberingRefusals(row.id, request.model, windows, stream(request));
    },
  };
}

/** The OpenAI adapter (`https://api.openai.com/v1`). */
export const createOpenAI = (settings: ProviderSettings = {}) => createOpenAICompatible({ ...settings, row: "openai" });
/** The DeepSeek adapter (`https://api.deepseek.com`). */
export const createDeepSeek = (settings: ProviderSettings = {}) =>
  createOpenAICompatible({ ...settings, row: "deepseek" });
/** The xAI (Grok) adapter (`https://api.x.ai/v1`). */
export const createXai = (settings: ProviderSettings = {}) => createOpenAICompatible({ ...settings, row: "xai" });
/** The Groq adapter (`https://api.groq.com/openai/v1`). */
export const createGroq = (settings: ProviderSettings = {}) => createOpenAICompatible({ ...settings, row: "groq" });
/** The Together AI adapter (`https://api.together.xyz/v1`). */
export const createTogether = (settings: ProviderSettings = {}) =>
  createOpenAICompatible({ ...settings, row: "together" });
/** The Mistral adapter (`https://api.mistral.ai/v1`). */
export const createMistral = (settings: ProviderSettings = {}) =>
  createOpenAICompatible({ ...settings, row: "mistral" });
/** The OpenRouter adapter (`https://openrouter.ai/api/v1`). */
export const createOpenRouter = (settings: ProviderSettings = {}) =>
  createOpenAICompatible({ ...settings, row: "openrouter" });
/** The Zhipu / z.ai adapter (`https://open.bigmodel.cn/api/paas/v4`; z.ai: `https://api.z.ai/api/paas/v4`). */
export const createZhipu = (settings: ProviderSettings = {}) => createOpenAICompatible({ ...settings, row: "zhipu" });
/** The vLLM server adapter (default `http://127.0.0.1:8000/v1`). */
export const createVllm = (settings: ProviderSettings = {}) => createOpenAICompatible({ ...settings, row: "vllm" });
/** The llama.cpp server (llama-server) adapter (default `http://127.0.0.1:8080/v1`). */
export const createLlamaCpp = (settings: ProviderSettings = {}) =>
  createOpenAICompatible({ ...settings, row: "llama.cpp" });
/** The LM Studio server adapter (default `http://127.0.0.1:1234/v1`). */
export const createLmStudio = (settings: ProviderSettings = {}) =>
  createOpenAICompatible({ ...settings, row: "lmstudio" });
