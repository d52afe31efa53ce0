// The fake provider `pnpm dev` talks to (Node only): several chat models with different windows, a cheap model
// that writes summaries, streamed replies, and real "too long" refusals, all over loopback HTTP.

import { unframeSummary } from "@conch/engine-client/context";
import { recogniseTooLong } from "@conch/engine-client/providers";
import {
  type Conversation,
  type FakeChatRequest,
  type FakeDialect,
  type FakeModel,
  type FakeOpenAIRow,
  type FakeProvider,
  type FakeReply,
  loadConversations,
  recordedTurns,
  scriptedSummaryReply,
  startFakeProvider,
  tooLongBodyFor,
} from "@conch/fake-provider";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import type { FakeModelSummary, LastRequest, RecordedTranscript, RefusalWording } from "./setup.js";

/** The fake provider's models: three chat models with windows far apart, and the cheap summariser. */
export const fakeModels: readonly (FakeModel & FakeModelSummary)[] = [
  { id: "chat-8k", displayName: "Chat 8K", window: 8_192 },
  { id: "chat-32k", displayName: "Chat 32K", window: 32_768 },
  { id: "chat-200k", displayName: "Chat 200K", window: 200_000 },
  { id: "cheap", displayName: "Cheap", window: 32_768 },
];
export const summariserModel = "cheap";
export const firstChatModel = "chat-8k";

/**
 * The real chat whose turns the page offers to send one by one: on Chat 8K its fourth or fifth turn folds.
 * (The fake chat models answer a turn of any chat in `test-fixtures/chats` with its recorded reply.)
 */
export const recordedConversation = {
  file: "minsky-specstory.jsonl",
  id: "minsky/2025-04-27_21-51-project-initialization-task-for-minsky",
} as const;

/** Milliseconds between streamed pieces: slow enough to watch the answer arrive. */
export const demoChunkDelayMs = 12;

/** The dialects the fake server can play for `pnpm dev` and for `start-fake-provider.ts`. */
export type DemoDialect = "openrouter" | "openai" | "anthropic" | "ollama";

function dialectOf(name: DemoDialect): { dialect: FakeDialect; row?: FakeOpenAIRow } {
  switch (name) {
    case "openrouter":
    case "openai":
      return { dialect: "openai", row: name };
    case "anthropic":
    case "ollama":
      return { dialect: name };
    default:
      return name satisfies never;
  }
}

const providerNames: Readonly<Record<string, string>> = {
  openai: "OpenAI",
  anthropic: "Anthropic",
  google: "Google Gemini",
  mistral: "Mistral",
  deepseek: "DeepSeek",
  xai: "xAI",
  together: "Together",
  vllm: "vLLM",
  "llama.cpp": "llama.cpp",
  lmstudio: "LM Studio",
  openrouter: "OpenRouter",
  ollama: "Ollama",
  zhipu: "Zhipu",
};

/** Whitespace-insensitive key of a person's message (a textarea may change line ends). */
function messageKey(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/** The start of `text` that fits `maxTokens`, cut where a paragraph, a line or a sentence ends. */
export function fitReply(text: string, maxTokens: number): string {
  if (countTokens(text) <= maxTokens) return text;
  for (const separator of ["\n\n", "\n", ". "]) {
    let kept = "";
    let tokens = 0;
    for (const piece of text.split(separator)) {
      // Counted piece by piece (a whole long reply is counted once, not once per piece).
      const added = kept === "" ? piece : `${separator}${piece}`;
      tokens += countTokens(added);
      if (tokens > maxTokens) break;
      kept += added;
    }
    if (kept.trim() !== "") return separator === ". " ? `${kept}.` : kept;
  }
  let low = 0;
  let high = text.length;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (countTokens(text.slice(0, middle)) <= maxTokens) low = middle;
    else high = middle - 1;
  }
  return text.slice(0, low);
}

/** The person's own words in the last user message, without the summary framed in front of them. */
export function personWords(lastUserText: string): string {
  return (unframeSummary(lastUserText)?.rest ?? lastUserText).trim();
}

/** A deterministic answer that reads the person's message back: what it asks, its files and numbers. */
export function readBackReply(words: string, request: FakeChatRequest, window: number | undefined): string {
  const flat = words.replace(/\s+/g, " ").trim();
  const sentence = /^(.{1,200}?[.?!])(?:\s|$)/.exec(flat)?.[1] ?? (flat.length > 200 ? `${flat.slice(0, 199)}…` : flat);
  const wordCount = flat === "" ? 0 : flat.split(" ").length;
  const lines = words.split("\n").length;
  const files = [...new Set(words.match(/\b[\w./-]+\.(?:ts|tsx|js|json|md|mdc|py|toml|yaml|yml)\b/g) ?? [])].slice(
    0,
    6,
  );
  const numbers = [...new Set(words.match(/\b\d[\d,.]*\d\b|\b\d\b/g) ?? [])].slice(0, 6);
  return [
    sentence ? `You asked: “${sentence}”` : "You sent an empty message.",
    `Your message has ${wordCount} ${wordCount === 1 ? "word" : "words"}${lines > 1 ? ` on ${lines} lines` : ""}.` +
      (files.length > 0 ? ` It names ${files.join(", ")}.` : "") +
      (numbers.length > 0 ? ` Its numbers: ${numbers.join(", ")}.` : ""),
    `I am ${request.model}, a scripted model of the fake provider: I read your message back instead of thinking. ` +
      `This request was ${request.inputTokens.toLocaleString("en")} tokens as the provider counted them (o200k)` +
      (window ? `, in a window of ${window.toLocaleString("en")}.` : "."),
  ].join("\n\n");
}

/** Every recorded conversation in `directory`, or none when it is not there. */
export function loadSharedConversations(directory: string): Conversation[] {
  try {
    return loadConversations(directory);
  } catch {
    return [];
  }
}

/** What the page needs to know of the recorded conversation: its title and its person's turns. */
export function describeTranscript(conversations: readonly Conversation[]): RecordedTranscript | null {
  const conversation = conversations.find((candidate) => candidate.id === recordedConversation.id);
  if (!conversation) return null;
  return {
    id: conversation.id,
    title: conversation.title ?? conversation.id,
    source: "edobry/minsky, .specstory/history (SpecStory export of Cursor agent chats)",
    licence: "MIT",
    turns: recordedTurns(conversation.messages)
      .map((turn) => turn.person)
      .filter((person) => person.trim() !== ""),
  };
}

/** Providers whose real "too long" words can be replayed with numbers and are recognised by `adapter`'s row. */
export function refusalWordings(adapter: string): RefusalWording[] {
  const wordings: RefusalWording[] = [];
  for (const provider of Object.keys(providerNames)) {
    try {
      const body = tooLongBodyFor(provider, { window: 8_192, inputTokens: 8_704, outputTokens: 0 });
      if (body && recogniseTooLong(adapter, body.status, body.body) !== null) {
        wordings.push({ provider, name: providerNames[provider] ?? provider });
      }
    } catch {
      // That provider has no body to replay in these words.
    }
  }
  return wordings;
}

export interface DemoFakeProviderOptions {
  readonly dialect?: DemoDialect;
  readonly port?: number;
  readonly host?: string;
  /** When set, requests without this key are refused with a 401, as a real provider would. */
  readonly apiKey?: string;
  /** The conversations whose recorded replies the chat models play back. Default: none. */
  readonly conversations?: readonly Conversation[];
  readonly chunkDelayMs?: number;
}

export interface DemoFakeProvider {
  readonly server: FakeProvider;
  /** The last request a chat model answered (not the summariser's). */
  lastRequest(): LastRequest | null;
  /** Refuses the next chat request for length, in `provider`'s words, naming `window` (forced; it may fit). */
  refuseNextForLength(provider: string, window: number, inputTokens: number): void;
  /** Cuts the next chat reply after about `tokens` tokens, ending it with `length` as a model at its output limit. */
  cutNextReply(tokens?: number): void;
}

/**
 * Starts the fake provider of `pnpm dev`: chat models answer a message of the recorded conversation with its
 * recorded reply (cut to the answer room the engine asked for, and then ended with `length`), anything else by reading it back; any request
 * that carries `<chat-lines>` is a summariser's, answered by the scripted summariser (it summarises what it is
 * given). Windows are enforced with o200k counts and refused in the provider's real words.
 */
export async function startDemoFakeProvider(options: DemoFakeProviderOptions = {}): Promise<DemoFakeProvider> {
  const { dialect, row } = dialectOf(options.dialect ?? "openrouter");
  const replies = new Map<string, string>();
  for (const turn of (options.conversations ?? []).flatMap((conversation) => recordedTurns(conversation.messages))) {
    const reply = turn.rounds
      .map((round) => round.reply.trim())
      .filter((text) => text !== "")
      .join("\n\n");
    const key = messageKey(turn.person);
    if (key !== "" && reply !== "" && !replies.has(key)) replies.set(key, reply);
  }
  let last: LastRequest | null = null;
  let cutAt: number | null = null;

  const server = await startFakeProvider({
    dialect,
    ...(row ? { row } : {}),
    models: fakeModels,
    countTokens: (text) => countTokens(text),
    chunkSize: 24,
    chunkDelayMs: options.chunkDelayMs ?? demoChunkDelayMs,
    ...(options.port !== undefined ? { port: options.port } : {}),
    ...(options.host !== undefined ? { host: options.host } : {}),
    ...(options.apiKey !== undefined ? { apiKey: options.apiKey } : {}),
    reply(request): FakeReply {
      // The summariser's prompt, whichever model it went to (the chat's own model is its last resort).
      if (request.lastUserText.includes("<chat-lines>")) return scriptedSummaryReply(request);
      const messages = Array.isArray(request.body.messages) ? request.body.messages.length : 0;
      last = {
        model: request.model,
        messages,
        inputTokens: request.inputTokens,
        summary: unframeSummary(firstUserText(request.body))?.summary ?? null,
      };
      const words = personWords(request.lastUserText);
      const window = fakeModels.find((model) => model.id === request.model)?.window;
      // Like a real model, never more than the answer room the engine asked for (less a margin for framing).
      const room = Math.max(64, Math.floor((request.maxOutputTokens ?? 1_000) * 0.9));
      const limit = cutAt ?? room;
      cutAt = null;
      const whole = replies.get(messageKey(words)) ?? readBackReply(words, request, window);
      const text = fitReply(whole, limit);
      // A reply that did not fit ends as a real one at its output limit does: cut off, with `length`.
      return { text, ...(text === whole ? {} : { finishReason: "length" }) };
    },
  });

  return {
    server,
    lastRequest: () => last,
    refuseNextForLength(provider, window, inputTokens) {
      const body = tooLongBodyFor(provider, { window, inputTokens, outputTokens: 0 });
      server.refuseNext(1, body ?? provider);
    },
    cutNextReply(tokens = 24) {
      cutAt = tokens;
    },
  };
}

/** The text of the first user message of a chat request body, in any dialect the fake server plays. */
function firstUserText(body: Readonly<Record<string, unknown>>): string {
  const messages = Array.isArray(body.messages) ? (body.messages as unknown[]) : [];
  for (const message of messages) {
    if (typeof message !== "object" || message === null) continue;
    const { role, content } = message as { role?: unknown; content?: unknown };
    if (role !== "user") continue;
    if (typeof content === "string") return content;
    if (Array.isArray(content)) {
      for (const part of content) {
        const text = (part as { text?: unknown } | null)?.text;
        if (typeof text === "string") return text;
      }
    }
    return "";
  }
  return "";
}
