import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { ChatMessage, MessagePart } from "@conch/engine-client";
import { testFixturesPath } from "./test-fixtures.js";

/** The recorded chats the project carries: `test-fixtures/chats` (a subset of each source; see its README). */
export const conversationsDirectory = testFixturesPath("chats");

/** One conversation of the recorded-chat JSONL format (`test-fixtures/README.md`), as a chat log. */
export interface Conversation {
  readonly id: string;
  readonly file: string;
  readonly language: string;
  /** The file's title for it (`meta.title`), when it gives one. */
  readonly title?: string;
  readonly system?: string;
  readonly messages: ChatMessage[];
  /** Unicode code points of all `content` strings (the data README's "characters"; a UTF-16 length would count
   * an emoji or a rare CJK character twice). */
  readonly characters: number;
}

interface RawMessage {
  readonly role: "user" | "assistant" | "tool";
  readonly content: string;
  readonly tool_calls?: ReadonlyArray<{ id?: string; function?: { name?: string; arguments?: unknown } }>;
  readonly tool_call_id?: string;
}

interface RawConversation {
  readonly id: string;
  readonly system?: string;
  readonly meta: { readonly language: string; readonly title?: string };
  readonly messages: readonly RawMessage[];
}

/** The source's arguments as the JSON text a tool call carries (the format copies them as they are). */
function argumentsText(args: unknown): string {
  if (args === undefined) return "{}";
  return typeof args === "string" ? args : JSON.stringify(args);
}

function codePoints(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

/** Converts one raw line; tool results without a call id answer the call before them, or stand alone. */
export function conversationFromJson(raw: RawConversation, file: string): Conversation {
  const messages: ChatMessage[] = [];
  let characters = 0;
  let lastCallId: string | undefined;
  raw.messages.forEach((message, seq) => {
    characters += codePoints(message.content);
    const parts: MessagePart[] = [];
    if (message.role === "tool") {
      parts.push({
        type: "tool-result",
        callId: message.tool_call_id ?? lastCallId ?? `result-${seq}`,
        text: message.content,
      });
    } else {
      if (message.content !== "") parts.push({ type: "text", text: message.content });
      for (const [index, call] of (message.tool_calls ?? []).entries()) {
        lastCallId = call.id ?? `call-${seq}-${index}`;
        parts.push({
          type: "tool-call",
          id: lastCallId,
          name: call.function?.name ?? "tool",
          arguments: argumentsText(call.function?.arguments),
        });
      }
      if (parts.length === 0) parts.push({ type: "text", text: "" });
    }
    messages.push({ seq, role: message.role, parts });
  });
  return {
    id: raw.id,
    file,
    language: raw.meta.language,
    ...(raw.meta.title ? { title: raw.meta.title } : {}),
    ...(raw.system ? { system: raw.system } : {}),
    messages,
    characters,
  };
}

/** Every conversation of one JSONL file (a path, or a file name in `test-fixtures/chats`). */
export function loadConversationFile(file: string): Conversation[] {
  const path = file.includes("/") ? file : join(conversationsDirectory, file);
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => conversationFromJson(JSON.parse(line) as RawConversation, path));
}

/** Every conversation of every `.jsonl` file in a folder (`test-fixtures/chats` by default). */
export function loadConversations(directory = conversationsDirectory): Conversation[] {
  const files = readdirSync(directory)
    .filter((name) => name.endsWith(".jsonl"))
    .sort();
  if (files.length === 0) throw new Error(`no .jsonl files in ${directory}`);
  return files.flatMap((name) => loadConversationFile(join(directory, name)));
}

/** The long conversations of the issue: 30 or more messages and 50,000 or more characters. */
export function isLongConversation(conversation: Conversation): boolean {
  return conversation.messages.length >= 30 && conversation.characters >= 50_000;
}
