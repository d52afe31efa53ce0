import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { ChatMessage, MessagePart } from "../packages/engine-client/src/messages.js";

/** One conversation of the shared data, as the engine's log would hold it. */
export interface Conversation {
  readonly id: string;
  /** The file it came from. */
  readonly file: string;
  readonly messages: readonly ChatMessage[];
  /** Code points of all `content` strings (the README's "characters"). */
  readonly characters: number;
}

interface RawToolCall {
  readonly id?: string;
  readonly function?: { readonly name?: string; readonly arguments?: unknown };
}

interface RawMessage {
  readonly role: "user" | "assistant" | "tool";
  readonly content: string;
  readonly tool_calls?: readonly RawToolCall[];
  readonly tool_call_id?: string | readonly string[];
}

interface RawConversation {
  readonly id: string;
  readonly messages: readonly RawMessage[];
}

function codePoints(text: string): number {
  let count = text.length;
  for (let index = 0; index < text.length; index++) {
    const unit = text.charCodeAt(index);
    if (unit >= 0xdc00 && unit <= 0xdfff && index > 0) {
      const previous = text.charCodeAt(index - 1);
      if (previous >= 0xd800 && previous <= 0xdbff) count--;
    }
  }
  return count;
}

function toParts(raw: RawMessage): MessagePart[] {
  if (raw.role === "tool" && raw.tool_call_id !== undefined) {
    const callId = typeof raw.tool_call_id === "string" ? raw.tool_call_id : raw.tool_call_id.join(",");
    return [{ type: "tool-result", callId, text: raw.content }];
  }
  const parts: MessagePart[] = [];
  if (raw.content !== "" || raw.tool_calls === undefined) parts.push({ type: "text", text: raw.content });
  for (const [index, call] of (raw.tool_calls ?? []).entries()) {
    const args = call.function?.arguments;
    parts.push({
      type: "tool-call",
      id: call.id ?? `call_${index}`,
      name: call.function?.name ?? "tool",
      arguments: typeof args === "string" ? args : JSON.stringify(args ?? {}),
    });
  }
  return parts;
}

/** Reads every `*.jsonl` file of a folder in the conversations format (shared/data/conversations/README.md). */
export function loadConversations(dir: string): Conversation[] {
  const files = readdirSync(dir)
    .filter((name) => name.endsWith(".jsonl"))
    .sort();
  if (files.length === 0) throw new Error(`no .jsonl files in ${dir}`);
  const conversations: Conversation[] = [];
  for (const file of files) {
    for (const line of readFileSync(join(dir, file), "utf8").split("\n")) {
      if (line.trim() === "") continue;
      const raw = JSON.parse(line) as RawConversation;
      const messages = raw.messages.map(
        (message, seq): ChatMessage => ({
          seq,
          role: message.role,
          parts: toParts(message),
        }),
      );
      const characters = raw.messages.reduce((sum, message) => sum + codePoints(message.content), 0);
      conversations.push({ id: raw.id, file, messages, characters });
    }
  }
  return conversations;
}

/** The long conversations of the issue: 30 or more messages and 50,000 or more characters. */
export function isLongConversation(conversation: Conversation): boolean {
  return conversation.messages.length >= 30 && conversation.characters >= 50_000;
}

/** Tokenizers with real counts in the token corpus. */
export const corpusTokenizers = [
  "o200k",
  "cl100k",
  "claude_legacy",
  "qwen3",
  "gemma3",
  "llama3",
  "deepseek_v3",
  "mistral_v1",
] as const;
export type CorpusTokenizer = (typeof corpusTokenizers)[number];

/** One sample of the token corpus with its real counts. */
export interface CorpusSample {
  readonly category: string;
  readonly text: string;
  readonly tokens: Readonly<Record<CorpusTokenizer, number>>;
}

/** Reads the token corpus (shared/data/token-corpus/README.md). */
export function loadCorpus(file: string): CorpusSample[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as CorpusSample);
}
