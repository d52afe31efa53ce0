import type { ServerResponse } from "node:http";
import type { Usage } from "@conch/engine-client";
import { created } from "./fake-model-lists.js";
import type { FakeDialect, FakeOpenAIRow, FakeReply, FakeToolCall } from "./fake-provider-dialects.js";
import type { FakeChatRequest } from "./fake-provider-types.js";

// A reply as each dialect streams it: SSE events or NDJSON lines, each complete.

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

export function sse(data: unknown, event?: string): string {
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

/** The stream a chat request gets, in the dialect (and row) the server plays. */
export function streamScriptFor(
  shape: { readonly dialect: FakeDialect; readonly row: FakeOpenAIRow; readonly chunkSize: number },
  request: FakeChatRequest,
  replyToSend: FakeReply,
  usage: Usage,
): StreamScript {
  const { dialect, row, chunkSize } = shape;
  switch (dialect) {
    case "openai": {
      const streamOptions = request.body.stream_options as { include_usage?: unknown } | undefined;
      return openAIStream(row, request.model, replyToSend, usage, {
        chunkSize,
        includeUsage: streamOptions?.include_usage === true,
      });
    }
    case "anthropic":
      return anthropicStream(request.model, replyToSend, usage, chunkSize);
    case "google":
      return googleStream(request.model, replyToSend, usage, chunkSize);
    case "ollama":
      return ollamaStream(request.model, replyToSend, usage, chunkSize);
    default:
      return dialect satisfies never;
  }
}

/** The content type of a streamed answer: NDJSON for Ollama, SSE otherwise. */
export function streamContentTypeOf(dialect: FakeDialect): string {
  return dialect === "ollama" ? "application/x-ndjson" : "text/event-stream; charset=utf-8";
}

/** A first piece cut off in the middle of its JSON. */
export function malformedStreamPiece(dialect: FakeDialect): string {
  return dialect === "ollama" ? '{"message":{"content":"Hel\n' : 'data: {"choices":[{"delta":{"content":"Hel\n\n';
}

/** Waits `ms` (at least a turn of the event loop), or until `res` closes; the timer is kept in `timers` meanwhile. */
export function waitUnlessClosed(ms: number, res: ServerResponse, timers: Set<ReturnType<typeof setTimeout>>) {
  return new Promise<void>((resolve) => {
    if (ms <= 0) {
      setImmediate(resolve);
      return;
    }
    const onClose = () => {
      clearTimeout(timer);
      timers.delete(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      timers.delete(timer);
      // One listener per wait, removed when the wait ends: a long stream must not pile them up.
      res.off("close", onClose);
      resolve();
    }, ms);
    timers.add(timer);
    res.once("close", onClose);
  });
}
