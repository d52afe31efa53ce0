import type { IncomingMessage } from "node:http";
import type { FakeDialect, FakeOpenAIRow } from "./fake-provider-dialects.js";
import type { FakeChatRequest, FakeRecordedRequest } from "./fake-provider-types.js";

// How the fake server reads a request: its route, its model, its prompt and what it asks for.

const pictureTokens = 1600;
const ignoredKeys = new Set([
  "model",
  "stream",
  "stream_options",
  "max_tokens",
  "max_completion_tokens",
  "options",
  "generationConfig",
  "truncate",
  "transforms",
  "role",
  "type",
  "id",
  "tool_call_id",
  "tool_use_id",
  "media_type",
  "mimeType",
  "signature",
  "thoughtSignature",
  "cache_control",
]);

export function defaultCountTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** The prompt's text and picture count, from any dialect's request body. */
export function readPrompt(body: unknown): { text: string; pictures: number } {
  const texts: string[] = [];
  let pictures = 0;
  const walk = (value: unknown, key: string | undefined): void => {
    if (key !== undefined && ignoredKeys.has(key)) return;
    if (typeof value === "string") {
      texts.push(value);
      return;
    }
    if (Array.isArray(value)) {
      if (key === "images") {
        pictures += value.length;
        return;
      }
      for (const item of value) walk(item, undefined);
      return;
    }
    if (typeof value !== "object" || value === null) return;
    const record = value as Record<string, unknown>;
    if (
      key === "image_url" ||
      key === "inlineData" ||
      key === "fileData" ||
      (key === "source" && ("data" in record || "url" in record))
    ) {
      pictures += 1;
      return;
    }
    for (const [inner, innerValue] of Object.entries(record)) walk(innerValue, inner);
  };
  walk(body, undefined);
  return { text: texts.join("\n"), pictures };
}

function lastUserTextOf(body: Record<string, unknown>): string {
  const list = (
    Array.isArray(body.messages) ? body.messages : Array.isArray(body.contents) ? body.contents : []
  ) as unknown[];
  for (let index = list.length - 1; index >= 0; index -= 1) {
    const message = list[index] as Record<string, unknown> | undefined;
    if (message?.role !== "user") continue;
    const { text } = readPrompt(message.content ?? message.parts);
    if (text) return text;
  }
  return "";
}

export function numberField(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

/** Which route a request takes on a server playing `dialect` (and `row`) under `prefix`. */
export function classifyRequest(
  shape: { readonly dialect: FakeDialect; readonly row: FakeOpenAIRow; readonly prefix: string },
  method: string,
  path: string,
): { kind: FakeRecordedRequest["kind"]; route: string } {
  const { dialect, row, prefix } = shape;
  const local = path.startsWith(prefix) ? path.slice(prefix.length) || "/" : path;
  switch (dialect) {
    case "openai":
      if (method === "GET" && local === "/models") return { kind: "models", route: "models" };
      if (method === "POST" && local === "/chat/completions") return { kind: "chat", route: "chat" };
      if (row === "llama.cpp" && method === "GET" && path === "/props") return { kind: "models", route: "props" };
      if (row === "lmstudio" && method === "GET" && path === "/api/v1/models")
        return { kind: "models", route: "lm-v1" };
      if (row === "lmstudio" && method === "GET" && path === "/api/v0/models")
        return { kind: "models", route: "lm-v0" };
      return { kind: "other", route: "unknown" };
    case "anthropic":
      if (method === "GET" && local === "/models") return { kind: "models", route: "models" };
      if (method === "POST" && local === "/messages") return { kind: "chat", route: "chat" };
      return { kind: "other", route: "unknown" };
    case "google":
      if (method === "GET" && local === "/models") return { kind: "models", route: "models" };
      if (method === "POST" && /^\/models\/[^/]+:streamGenerateContent$/.test(local))
        return { kind: "chat", route: "chat" };
      return { kind: "other", route: "unknown" };
    case "ollama":
      if (method === "GET" && path === "/api/tags") return { kind: "models", route: "models" };
      if (method === "POST" && path === "/api/show") return { kind: "models", route: "show" };
      if (method === "GET" && path === "/api/ps") return { kind: "models", route: "ps" };
      if (method === "POST" && path === "/api/chat") return { kind: "chat", route: "chat" };
      return { kind: "other", route: "unknown" };
    default:
      return dialect satisfies never;
  }
}

/** The model a chat request names: in the path for Gemini, in the body otherwise. */
export function chatModelOf(dialect: FakeDialect, body: Record<string, unknown>, path: string): string {
  if (dialect === "google") {
    const match = /\/models\/([^/:]+):/.exec(path);
    return decodeURIComponent(match?.[1] ?? "");
  }
  return typeof body.model === "string" ? body.model : "";
}

/** A chat request as the server understands it: its prompt, counted, and what it asks for. */
export function chatRequestOf(
  shape: { readonly dialect: FakeDialect; readonly provider: string; readonly countTokens: (text: string) => number },
  body: Record<string, unknown>,
  model: string,
): FakeChatRequest {
  const { dialect, provider, countTokens } = shape;
  const prompt = readPrompt(body);
  const generation = body.generationConfig as Record<string, unknown> | undefined;
  const ollamaOptions = body.options as Record<string, unknown> | undefined;
  const maxOutputTokens =
    numberField(body.max_tokens) ??
    numberField(body.max_completion_tokens) ??
    numberField(generation?.maxOutputTokens) ??
    numberField(ollamaOptions?.num_predict);
  const contextWindow = numberField(ollamaOptions?.num_ctx);
  return {
    dialect,
    provider,
    model,
    body,
    promptText: prompt.text,
    lastUserText: lastUserTextOf(body),
    pictures: prompt.pictures,
    inputTokens: countTokens(prompt.text) + prompt.pictures * pictureTokens,
    ...(maxOutputTokens !== undefined && { maxOutputTokens }),
    ...(contextWindow !== undefined && { contextWindow }),
  };
}

/** The CORS headers of a response to `req` (none when `cors` is off), so that a browser page can call it. */
export function corsHeadersFor(cors: boolean, req: IncomingMessage): Record<string, string> {
  if (!cors) return {};
  return {
    "access-control-allow-origin": "*",
    "access-control-allow-methods": "GET, POST, OPTIONS",
    // `*` does not cover Authorization, so the asked-for headers are echoed.
    "access-control-allow-headers": String(req.headers["access-control-request-headers"] ?? "*"),
    "access-control-expose-headers": "retry-after, retry-after-ms, x-request-id",
    "access-control-max-age": "600",
    ...(req.headers["access-control-request-private-network"] && { "access-control-allow-private-network": "true" }),
  };
}

/** Whether the text parses as JSON. */
export function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
