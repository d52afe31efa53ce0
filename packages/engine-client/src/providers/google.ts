import { z } from "zod";
import { ProviderCallError } from "../errors.js";
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
import {
  convertToGoogleContents,
  convertToGoogleTools,
  generatedGoogleCallPrefix,
} from "./convert-to-google-contents.js";
import {
  createTransport,
  generatedCallId,
  joinURL,
  type OpenCall,
  openCall,
  parseJsonOrFail,
  readSse,
} from "./http.js";
import { refusedProblem } from "./map-provider-problem.js";
import type {
  ChatRequest,
  FinishReason,
  ProviderAdapter,
  ProviderSettings,
  ProviderStreamPart,
} from "./provider-adapter.js";

/** Settings of the Gemini adapter. */
export interface GoogleSettings extends ProviderSettings {
  /** Ask thinking models for thought summaries (`thinkingConfig.includeThoughts`). Default false. */
  readonly includeThoughts?: boolean;
}

const count = z.number().nullish();
const chunkSchema = z.object({
  candidates: z
    .array(
      z.object({
        content: z
          .object({
            parts: z
              .array(
                z.object({
                  text: z.string().nullish(),
                  thought: z.boolean().nullish(),
                  thoughtSignature: z.string().nullish(),
                  functionCall: z
                    .object({
                      name: z.string(),
                      args: z.record(z.string(), z.unknown()).nullish(),
                      id: z.string().nullish(),
                    })
                    .nullish(),
                }),
              )
              .nullish(),
          })
          .nullish(),
        finishReason: z.string().nullish(),
      }),
    )
    .nullish(),
  usageMetadata: z
    .object({
      promptTokenCount: count,
      candidatesTokenCount: count,
      cachedContentTokenCount: count,
      thoughtsTokenCount: count,
    })
    .nullish(),
  promptFeedback: z.object({ blockReason: z.string().nullish() }).nullish(),
});
const modelList = z.object({
  models: z
    .array(
      z.object({
        name: z.string(),
        displayName: z.string().nullish(),
        inputTokenLimit: z.number().nullish(),
        supportedGenerationMethods: z.array(z.string()).nullish(),
        supportedActions: z.array(z.string()).nullish(),
      }),
    )
    .nullish(),
  nextPageToken: z.string().nullish(),
});

/** Maps Gemini's `finishReason`. */
export function mapGoogleFinishReason(reason: string | null | undefined, sawToolCalls: boolean): FinishReason {
  switch (reason) {
    case "STOP":
      return sawToolCalls ? "tool-calls" : "stop";
    case "MAX_TOKENS":
      return "length";
    case "SAFETY":
    case "RECITATION":
    case "BLOCKLIST":
    case "PROHIBITED_CONTENT":
    case "SPII":
    case "IMAGE_SAFETY":
    case "LANGUAGE":
      return "content-filter";
    default:
      return sawToolCalls ? "tool-calls" : "other";
  }
}

async function* streamGoogleChunks(call: OpenCall, model: string): AsyncGenerator<ProviderStreamPart> {
  const sse = readSse(call);
  let finishReason: string | undefined;
  let usage: z.infer<typeof chunkSchema>["usageMetadata"];
  let sawToolCalls = false;
  let afterOutput = false;
  try {
    for await (const event of sse.events()) {
      const data = event.data.trim();
      if (data === "") continue;
      const json = parseJsonOrFail(call, data, afterOutput);
      if (typeof json === "object" && json !== null && "error" in json) {
        const code = (json as { error?: { code?: unknown } }).error?.code;
        throw call.errorInBody(data, typeof code === "number" ? code : undefined, afterOutput);
      }
      const parsed = chunkSchema.safeParse(json);
      if (!parsed.success) throw call.unexpected(data, "google sent an unexpected stream piece", afterOutput);
      const chunk = parsed.data;
      if (chunk.usageMetadata) usage = chunk.usageMetadata;
      const blocked = chunk.promptFeedback?.blockReason;
      if (blocked && !chunk.candidates?.length) {
        throw new ProviderCallError({
          provider: "google",
          model,
          problem: refusedProblem(`Gemini blocked the prompt (${blocked})`, call.response.status),
          status: call.response.status,
          responseBody: data,
          afterOutput,
        });
      }
      const candidate = chunk.candidates?.[0];
      for (const part of candidate?.content?.parts ?? []) {
        if (part.thoughtSignature) {
          afterOutput = true;
          yield { type: "thinking-delta", delta: "", signature: part.thoughtSignature };
        }
        if (part.functionCall) {
          sawToolCalls = true;
          afterOutput = true;
          yield {
            type: "tool-call",
            id: part.functionCall.id ?? generatedCallId(generatedGoogleCallPrefix),
            name: part.functionCall.name,
            arguments: JSON.stringify(part.functionCall.args ?? {}),
          };
        } else if (part.text) {
          afterOutput = true;
          yield part.thought ? { type: "thinking-delta", delta: part.text } : { type: "text-delta", delta: part.text };
        }
      }
      if (candidate?.finishReason) finishReason = candidate.finishReason;
    }
    if (sse.eventCount === 0 && sse.rawText.trim() !== "") {
      throw call.unexpected(sse.rawText, "google sent a body that is not a stream", false);
    }
    if (finishReason === undefined) {
      throw call.incomplete("google stopped the stream before the answer was complete", afterOutput);
    }
  } catch (error) {
    throw call.failure(error, afterOutput);
  } finally {
    call.close();
  }
  if (usage) {
    yield {
      type: "usage",
      usage: {
        inputTokens: usage.promptTokenCount ?? 0,
        outputTokens: (usage.candidatesTokenCount ?? 0) + (usage.thoughtsTokenCount ?? 0),
        cachedInputTokens: usage.cachedContentTokenCount ?? 0,
      },
    };
  }
  yield { type: "finish", reason: mapGoogleFinishReason(finishReason, sawToolCalls) };
}

/** The model id without Gemini's `models/` prefix. */
function modelId(name: string): string {
  return name.startsWith("models/") ? name.slice("models/".length) : name;
}

/**
 * The Google Gemini API adapter (`generativelanguage.googleapis.com/v1beta`). Model windows come from
 * `inputTokenLimit`; only models that can `generateContent` are listed. Answers stream over
 * `streamGenerateContent?alt=sse`.
 */
export function createGoogle(settings: GoogleSettings = {}): ProviderAdapter {
  const baseURL = resolveBaseURL(settings, "https://generativelanguage.googleapis.com/v1beta");
  const local = resolveLocal(settings, false, baseURL);
  const windows = resolveWindows(settings);
  const transport = createTransport("google", settings, settings.apiKey ? { "x-goog-api-key": settings.apiKey } : {});
  const cheapestModel = settings.cheapestModel ?? "gemini-2.5-flash-lite";
  const smallModel = settings.smallModel ?? "gemini-2.5-flash";

  async function* stream(request: ChatRequest): AsyncGenerator<ProviderStreamPart> {
    const generationConfig = {
      ...(request.maxOutputTokens !== undefined && { maxOutputTokens: request.maxOutputTokens }),
      ...(settings.includeThoughts && { thinkingConfig: { includeThoughts: true } }),
    };
    const body = {
      contents: convertToGoogleContents(request.messages),
      ...(request.system && { systemInstruction: { parts: [{ text: request.system }] } }),
      ...(request.tools && request.tools.length > 0 && { tools: convertToGoogleTools(request.tools) }),
      ...(Object.keys(generationConfig).length > 0 && { generationConfig }),
    };
    const call = await openCall(transport, {
      url: `${joinURL(baseURL, `models/${encodeURIComponent(modelId(request.model))}`)}:streamGenerateContent?alt=sse`,
      body,
      headers: { accept: "text/event-stream" },
      phase: "chat",
      model: request.model,
      abortSignal: request.abortSignal,
      timeoutMs: request.timeoutMs,
    });
    yield* streamGoogleChunks(call, request.model);
  }

  return {
    provider: "google",
    local,
    baseURL,
    windows,
    cheapestModel,
    smallModel,
    async listModels(options) {
      const context = createModelListContext(transport, baseURL, options);
      const listed: ListedModel[] = [];
      let pageToken: string | undefined;
      for (let page = 0; page < 10; page += 1) {
        const query = `pageSize=1000${pageToken ? `&pageToken=${encodeURIComponent(pageToken)}` : ""}`;
        const list = await context.get(`${joinURL(baseURL, "models")}?${query}`, modelList);
        for (const model of list.models ?? []) {
          const methods = model.supportedGenerationMethods ?? model.supportedActions;
          if (methods && !methods.includes("generateContent")) continue;
          listed.push({
            id: modelId(model.name),
            displayName: model.displayName ?? undefined,
            context: positiveWindow(model.inputTokenLimit),
            ready: true,
          });
        }
        if (!list.nextPageToken) break;
        pageToken = list.nextPageToken;
      }
      return toModelInfos("google", local, windows, listed);
    },
    streamChat(request) {
      return rememberingRefusals("google", request.model, windows, stream(request));
    },
  };
}
