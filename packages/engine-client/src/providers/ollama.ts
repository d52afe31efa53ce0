import { z } from "zod";
import { ProviderCallError } from "../errors.js";
import {
  createModelListContext,
  type ModelListContext,
  positiveWindow,
  rememberingRefusals,
  resolveBaseURL,
  resolveLocal,
  resolveWindows,
  toModelInfos,
  withoutV1Path,
} from "./adapter-support.js";
import { convertToOllamaMessages } from "./convert-to-ollama-messages.js";
import { convertToOpenAITools } from "./convert-to-openai-messages.js";
import {
  createTransport,
  generatedCallId,
  joinURL,
  type OpenCall,
  openCall,
  parseJsonOrFail,
  readLines,
} from "./http.js";
import type {
  ChatRequest,
  FinishReason,
  ProviderAdapter,
  ProviderSettings,
  ProviderStreamPart,
} from "./provider-adapter.js";

/** The window asked of Ollama when a model's is not chosen otherwise: ADR 0055's 16K local model. */
export const defaultOllamaContextWindow = 16_384;

/** Settings of the Ollama adapter. */
export interface OllamaSettings extends ProviderSettings {
  /**
   * The window (`num_ctx`) this library asks Ollama to run each model with, given what the model could
   * read (`/api/show`). It is the window `listModels` reports. Default: 16,384, or less when the model
   * reads less. A request's `contextWindow` wins over it.
   */
  readonly contextWindow?: number | ((model: { readonly id: string; readonly trainedWindow?: number }) => number);
}

const tagList = z.object({
  models: z
    .array(z.object({ name: z.string(), model: z.string().nullish(), remote_host: z.string().nullish() }))
    .nullish(),
});
const showSchema = z.object({ model_info: z.record(z.string(), z.unknown()).nullish() });
const lineSchema = z.object({
  message: z
    .object({
      content: z.string().nullish(),
      thinking: z.string().nullish(),
      tool_calls: z
        .array(
          z.object({
            id: z.string().nullish(),
            function: z.object({
              name: z.string(),
              arguments: z.union([z.record(z.string(), z.unknown()), z.string()]).nullish(),
            }),
          }),
        )
        .nullish(),
    })
    .nullish(),
  done: z.boolean().nullish(),
  done_reason: z.string().nullish(),
  prompt_eval_count: z.number().nullish(),
  eval_count: z.number().nullish(),
});

/** What a model could read, from `/api/show`'s `model_info["<architecture>.context_length"]`. */
export function trainedWindowOf(modelInfo: Readonly<Record<string, unknown>> | null | undefined): number | undefined {
  if (!modelInfo) return undefined;
  const architecture = modelInfo["general.architecture"];
  if (typeof architecture === "string") {
    const value = modelInfo[`${architecture}.context_length`];
    if (typeof value === "number") return positiveWindow(value);
  }
  for (const [key, value] of Object.entries(modelInfo)) {
    if (key.endsWith(".context_length") && typeof value === "number") return positiveWindow(value);
  }
  return undefined;
}

function isCloudModel(name: string, remoteHost: string | null | undefined): boolean {
  return Boolean(remoteHost) || /[-:]cloud$/.test(name);
}

function mapOllamaDoneReason(reason: string | null | undefined, sawToolCalls: boolean): FinishReason {
  if (sawToolCalls) return "tool-calls";
  switch (reason) {
    case "stop":
    case undefined:
    case null:
      return "stop";
    case "length":
      return "length";
    default:
      return "other";
  }
}

async function* streamOllamaLines(call: OpenCall): AsyncGenerator<ProviderStreamPart> {
  let afterOutput = false;
  let sawToolCalls = false;
  let final: z.infer<typeof lineSchema> | undefined;
  let lines = 0;
  try {
    for await (const line of readLines(call)) {
      lines += 1;
      const json = parseJsonOrFail(call, line, afterOutput);
      if (typeof json === "object" && json !== null && "error" in json)
        throw call.errorInBody(line, undefined, afterOutput);
      const parsed = lineSchema.safeParse(json);
      if (!parsed.success) throw call.unexpected(line, "ollama sent an unexpected stream line", afterOutput);
      const item = parsed.data;
      if (item.message?.thinking) {
        afterOutput = true;
        yield { type: "thinking-delta", delta: item.message.thinking };
      }
      if (item.message?.content) {
        afterOutput = true;
        yield { type: "text-delta", delta: item.message.content };
      }
      for (const toolCall of item.message?.tool_calls ?? []) {
        sawToolCalls = true;
        afterOutput = true;
        const args = toolCall.function.arguments;
        yield {
          type: "tool-call",
          id: toolCall.id ?? generatedCallId("ollama_call"),
          name: toolCall.function.name,
          arguments: typeof args === "string" ? args : JSON.stringify(args ?? {}),
        };
      }
      if (item.done) {
        final = item;
        break;
      }
    }
    if (!final) {
      throw call.incomplete(
        lines === 0
          ? "ollama ended the answer before it started"
          : "ollama stopped the stream before the answer was complete",
        afterOutput,
      );
    }
  } catch (error) {
    throw call.failure(error, afterOutput);
  } finally {
    call.close();
  }
  if (final.prompt_eval_count != null || final.eval_count != null) {
    yield {
      type: "usage",
      // Ollama counts only the prompt tokens it did not have cached, and does not say how many it had.
      usage: { inputTokens: final.prompt_eval_count ?? 0, outputTokens: final.eval_count ?? 0, cachedInputTokens: 0 },
    };
  }
  yield { type: "finish", reason: mapOllamaDoneReason(final.done_reason, sawToolCalls) };
}

/**
 * The Ollama native API adapter (`/api/chat`, NDJSON). A model's window is the `num_ctx` this library asks
 * for (see {@link OllamaSettings.contextWindow}), never more than `/api/show` says the model can read;
 * cloud models run at their maximum. Requests send `truncate: false` so that an over-long prompt is
 * refused instead of silently cut at the front.
 */
export function createOllama(settings: OllamaSettings = {}): ProviderAdapter {
  // Its own API is at the server's root; an address copied from its OpenAI-style API (`…/v1`) works too.
  const baseURL = withoutV1Path(resolveBaseURL(settings, "http://127.0.0.1:11434"));
  const local = resolveLocal(settings, true, baseURL);
  const windows = resolveWindows(settings);
  const transport = createTransport(
    "ollama",
    settings,
    settings.apiKey ? { authorization: `Bearer ${settings.apiKey}` } : {},
  );
  const trainedWindows = new Map<string, number | undefined>();
  const cloudModels = new Set<string>();

  function windowFor(id: string): number | undefined {
    const trainedWindow = trainedWindows.get(id);
    if (cloudModels.has(id)) return trainedWindow;
    const choice = settings.contextWindow;
    if (typeof choice === "function") return choice({ id, ...(trainedWindow !== undefined && { trainedWindow }) });
    const wanted = choice ?? defaultOllamaContextWindow;
    return trainedWindow === undefined ? wanted : Math.min(wanted, trainedWindow);
  }

  async function learnTrainedWindow(context: ModelListContext, id: string): Promise<void> {
    if (trainedWindows.has(id)) return;
    let show: z.infer<typeof showSchema> | undefined;
    try {
      show = await context.post(joinURL(baseURL, "api/show"), { model: id }, showSchema);
    } catch (error) {
      if (!ProviderCallError.isInstance(error)) throw error;
    }
    trainedWindows.set(id, trainedWindowOf(show?.model_info));
  }

  async function* stream(request: ChatRequest): AsyncGenerator<ProviderStreamPart> {
    if (request.contextWindow === undefined && !trainedWindows.has(request.model)) {
      const context = createModelListContext(transport, baseURL, {
        abortSignal: request.abortSignal,
        timeoutMs: request.timeoutMs,
      });
      await learnTrainedWindow(context, request.model);
    }
    const numCtx = request.contextWindow ?? windowFor(request.model);
    const options = {
      ...(numCtx !== undefined && !cloudModels.has(request.model) && { num_ctx: numCtx }),
      ...(request.maxOutputTokens !== undefined && { num_predict: request.maxOutputTokens }),
    };
    const body = {
      model: request.model,
      messages: convertToOllamaMessages(request.system, request.messages),
      stream: true,
      truncate: false,
      ...(request.tools && request.tools.length > 0 && { tools: convertToOpenAITools(request.tools) }),
      ...(Object.keys(options).length > 0 && { options }),
    };
    const call = await openCall(transport, {
      url: joinURL(baseURL, "api/chat"),
      body,
      phase: "chat",
      model: request.model,
      abortSignal: request.abortSignal,
      timeoutMs: request.timeoutMs,
    });
    yield* streamOllamaLines(call);
  }

  return {
    provider: "ollama",
    local,
    // `prompt_eval_count` is what it did not have cached (see the stream's usage above).
    inputTokensCountCache: false,
    baseURL,
    windows,
    async listModels(options) {
      const context = createModelListContext(transport, baseURL, options);
      const tags = await context.get(joinURL(baseURL, "api/tags"), tagList);
      const models = tags.models ?? [];
      for (const model of models) if (isCloudModel(model.name, model.remote_host)) cloudModels.add(model.name);
      await Promise.all(models.map((model) => learnTrainedWindow(context, model.name)));
      const listed = models.map((model) => ({ id: model.name, context: windowFor(model.name), ready: true }));
      return toModelInfos("ollama", local, windows, listed);
    },
    streamChat(request) {
      return rememberingRefusals("ollama", request.model, windows, stream(request));
    },
  };
}
