import { z } from "zod";
import type { Usage } from "../messages.js";
import {
  createModelListContext,
  type ListedModel,
  positiveWindow,
  rememberingRefusals,
  resolveBaseURL,
  resolveLocal,
  resolveWindows,
  toModelInfos,
} from "./adapter-support.js";
import { convertToAnthropicMessages, convertToAnthropicTools } from "./convert-to-anthropic-messages.js";
import { createTransport, joinURL, type OpenCall, openCall, parseJsonOrFail, readSse } from "./http.js";
import type {
  ChatRequest,
  FinishReason,
  ProviderAdapter,
  ProviderSettings,
  ProviderStreamPart,
} from "./provider-adapter.js";

/** Settings of the Anthropic adapter. */
export interface AnthropicSettings extends ProviderSettings {
  /** `anthropic-version` header. Default `2023-06-01`. */
  readonly version?: string;
  /** `max_tokens` when a request gives no answer room (Anthropic requires one). Default 4,096. */
  readonly defaultMaxOutputTokens?: number;
}

const count = z.number().nullish();
const usageSchema = z.object({
  input_tokens: count,
  output_tokens: count,
  cache_creation_input_tokens: count,
  cache_read_input_tokens: count,
});
const eventSchema = z.object({
  type: z.string(),
  index: z.number().nullish(),
  message: z.object({ usage: usageSchema.nullish() }).nullish(),
  content_block: z
    .object({
      type: z.string(),
      id: z.string().nullish(),
      name: z.string().nullish(),
      input: z.record(z.string(), z.unknown()).nullish(),
      data: z.string().nullish(),
      text: z.string().nullish(),
      thinking: z.string().nullish(),
      signature: z.string().nullish(),
    })
    .nullish(),
  delta: z
    .object({
      type: z.string().nullish(),
      text: z.string().nullish(),
      thinking: z.string().nullish(),
      signature: z.string().nullish(),
      partial_json: z.string().nullish(),
      stop_reason: z.string().nullish(),
    })
    .nullish(),
  usage: usageSchema.nullish(),
});
const modelList = z.object({
  data: z.array(
    z.object({ id: z.string(), display_name: z.string().nullish(), max_input_tokens: z.number().nullish() }),
  ),
  has_more: z.boolean().nullish(),
  last_id: z.string().nullish(),
});

/** Maps Anthropic's `stop_reason`. */
export function mapAnthropicStopReason(reason: string | null | undefined): FinishReason {
  switch (reason) {
    case "end_turn":
    case "stop_sequence":
      return "stop";
    case "max_tokens":
    // The answer reached the window while being written: it is cut, like `length`.
    case "model_context_window_exceeded":
      return "length";
    case "tool_use":
      return "tool-calls";
    case "refusal":
      return "content-filter";
    default:
      return "other";
  }
}

async function* streamAnthropicEvents(call: OpenCall): AsyncGenerator<ProviderStreamPart> {
  const sse = readSse(call);
  const toolUses = new Map<number, { id: string; name: string; json: string; input: string }>();
  let usage = { input: 0, output: 0, cacheWrite: 0, cacheRead: 0 };
  let sawUsage = false;
  let stopReason: string | undefined;
  let stopped = false;
  let afterOutput = false;
  const pending: ProviderStreamPart[] = [];
  try {
    for await (const event of sse.events()) {
      const data = event.data.trim();
      if (data === "") continue;
      const json = parseJsonOrFail(call, data, afterOutput);
      if (event.event === "error" || (json as { type?: unknown } | null)?.type === "error") {
        throw call.errorInBody(data, undefined, afterOutput);
      }
      const parsed = eventSchema.safeParse(json);
      if (!parsed.success) throw call.unexpected(data, "anthropic sent an unexpected stream event", afterOutput);
      const item = parsed.data;
      const index = item.index ?? 0;
      switch (item.type) {
        case "message_start": {
          const reported = item.message?.usage;
          if (reported) {
            sawUsage = true;
            usage = {
              input: reported.input_tokens ?? 0,
              output: reported.output_tokens ?? 0,
              cacheWrite: reported.cache_creation_input_tokens ?? 0,
              cacheRead: reported.cache_read_input_tokens ?? 0,
            };
          }
          break;
        }
        case "content_block_start": {
          const block = item.content_block;
          if (block?.type === "tool_use") {
            const input = block.input && Object.keys(block.input).length > 0 ? JSON.stringify(block.input) : "";
            toolUses.set(index, { id: block.id ?? "", name: block.name ?? "", json: "", input });
          } else if (block?.type === "redacted_thinking" && block.data) {
            pending.push({ type: "thinking-delta", delta: block.data, redacted: true });
          } else if (block?.type === "text" && block.text) {
            pending.push({ type: "text-delta", delta: block.text });
          } else if (block?.type === "thinking" && block.thinking) {
            pending.push({ type: "thinking-delta", delta: block.thinking });
          }
          break;
        }
        case "content_block_delta": {
          const delta = item.delta;
          if (delta?.type === "text_delta" && delta.text) pending.push({ type: "text-delta", delta: delta.text });
          else if (delta?.type === "thinking_delta" && delta.thinking) {
            pending.push({ type: "thinking-delta", delta: delta.thinking });
          } else if (delta?.type === "signature_delta" && delta.signature) {
            pending.push({ type: "thinking-delta", delta: "", signature: delta.signature });
          } else if (delta?.type === "input_json_delta") {
            const tool = toolUses.get(index);
            if (tool) tool.json += delta.partial_json ?? "";
          }
          break;
        }
        case "content_block_stop": {
          const tool = toolUses.get(index);
          if (tool) {
            toolUses.delete(index);
            pending.push({
              type: "tool-call",
              id: tool.id,
              name: tool.name,
              arguments: tool.json || tool.input || "{}",
            });
          }
          break;
        }
        case "message_delta": {
          if (item.delta?.stop_reason) stopReason = item.delta.stop_reason;
          const reported = item.usage;
          if (reported) {
            sawUsage = true;
            // Counts here are cumulative; input counts appear only in newer API versions.
            usage = {
              input: reported.input_tokens ?? usage.input,
              output: reported.output_tokens ?? usage.output,
              cacheWrite: reported.cache_creation_input_tokens ?? usage.cacheWrite,
              cacheRead: reported.cache_read_input_tokens ?? usage.cacheRead,
            };
          }
          break;
        }
        case "message_stop":
          stopped = true;
          break;
        default:
          // ping and event types added later
          break;
      }
      while (pending.length > 0) {
        afterOutput = true;
        yield pending.shift() as ProviderStreamPart;
      }
      if (stopped) break;
    }
    if (sse.eventCount === 0 && sse.rawText.trim() !== "") {
      throw call.unexpected(sse.rawText, "anthropic sent a body that is not a stream", false);
    }
    if (!stopped && stopReason === undefined) {
      throw call.incomplete("anthropic stopped the stream before the answer was complete", afterOutput);
    }
  } catch (error) {
    throw call.failure(error, afterOutput);
  } finally {
    call.close();
  }
  if (sawUsage) {
    const total: Usage = {
      // Anthropic's input_tokens leaves out what was written to and read from the cache.
      inputTokens: usage.input + usage.cacheWrite + usage.cacheRead,
      outputTokens: usage.output,
      cachedInputTokens: usage.cacheRead,
    };
    yield { type: "usage", usage: total };
  }
  yield { type: "finish", reason: mapAnthropicStopReason(stopReason) };
}

/**
 * The Anthropic Messages API adapter. Model windows come from `max_input_tokens`; the system prompt and
 * the end of the stable prefix (`cacheBreakpointIndex`) are marked with `cache_control`, and
 * `cache_read_input_tokens` is reported as cached input.
 */
export function createAnthropic(settings: AnthropicSettings = {}): ProviderAdapter {
  const baseURL = resolveBaseURL(settings, "https://api.anthropic.com/v1");
  const local = resolveLocal(settings, false, baseURL);
  const windows = resolveWindows(settings);
  const transport = createTransport("anthropic", settings, {
    "anthropic-version": settings.version ?? "2023-06-01",
    // Lets a browser page call the API directly; harmless elsewhere.
    "anthropic-dangerous-direct-browser-access": "true",
    ...(settings.apiKey && { "x-api-key": settings.apiKey }),
  });
  const cheapestModel = settings.cheapestModel ?? "claude-haiku-4-5";
  const smallModel = settings.smallModel ?? "claude-haiku-4-5";

  async function* stream(request: ChatRequest): AsyncGenerator<ProviderStreamPart> {
    const body = {
      model: request.model,
      max_tokens: request.maxOutputTokens ?? settings.defaultMaxOutputTokens ?? 4096,
      ...(request.system && {
        system: [{ type: "text", text: request.system, cache_control: { type: "ephemeral" } }],
      }),
      messages: convertToAnthropicMessages(request.messages, request.cacheBreakpointIndex),
      ...(request.tools && request.tools.length > 0 && { tools: convertToAnthropicTools(request.tools) }),
      stream: true,
    };
    const call = await openCall(transport, {
      url: joinURL(baseURL, "messages"),
      body,
      headers: { accept: "text/event-stream" },
      phase: "chat",
      model: request.model,
      abortSignal: request.abortSignal,
      timeoutMs: request.timeoutMs,
    });
    yield* streamAnthropicEvents(call);
  }

  return {
    provider: "anthropic",
    local,
    baseURL,
    windows,
    cheapestModel,
    smallModel,
    async listModels(options) {
      const context = createModelListContext(transport, baseURL, options);
      const listed: ListedModel[] = [];
      let after: string | undefined;
      // Paginated; ten pages of a thousand is far more than Anthropic lists.
      for (let page = 0; page < 10; page += 1) {
        const query = `limit=1000${after ? `&after_id=${encodeURIComponent(after)}` : ""}`;
        const list = await context.get(`${joinURL(baseURL, "models")}?${query}`, modelList);
        for (const model of list.data) {
          listed.push({
            id: model.id,
            displayName: model.display_name ?? undefined,
            context: positiveWindow(model.max_input_tokens),
            ready: true,
          });
        }
        if (!list.has_more || !list.last_id) break;
        after = list.last_id;
      }
      return toModelInfos("anthropic", local, windows, listed);
    },
    streamChat(request) {
      return rememberingRefusals("anthropic", request.model, windows, stream(request));
    },
  };
}
