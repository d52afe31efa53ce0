import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ChatMessage, MessagePart } from "../messages.js";

/** The real transcripts: `shared/data/conversations` beside the repository (five folders up from this file). */
export const conversationsDirectory = fileURLToPath(
  new URL("../../../../../shared/data/conversations/", import.meta.url),
);

/** One conversation of the shared JSONL format, as a chat log. */
export interface Conversation {
  readonly id: string;
  readonly file: string;
  readonly language: string;
  /** The file's title for it (`meta.title`), when it gives one. */
  readonly title?: string;
  readonly system?: string;
  readonly messages: ChatMessage[];
  /** Characters of all contents. */
  readonly characters: number;
}

interface RawMessage {
  readonly role: "user" | "assistant" | "tool";
  readonly content: string;
  readonly tool_calls?: ReadonlyArray<{ id?: string; function?: { name?: string; arguments?: string } }>;
  readonly tool_call_id?: string;
}

interface RawConversation {
  readonly id: string;
  readonly system?: string;
  readonly meta: { readonly language: string; readonly title?: string };
  readonly messages: readonly RawMessage[];
}

/** Converts one raw line; tool results without a call id answer the call before them, or stand alone. */
export function conversationFromJson(raw: RawConversation, file: string): Conversation {
  const messages: ChatMessage[] = [];
  let characters = 0;
  let lastCallId: string | undefined;
  raw.messages.forEach((message, seq) => {
    characters += message.content.length;
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
          arguments: call.function?.arguments ?? "{}",
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

/** Every conversation of one JSONL file (a path, or a file name in the shared folder). */
export function loadConversationFile(file: string): Conversation[] {
  const path = file.includes("/") ? file : join(conversationsDirectory, file);
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => conversationFromJson(JSON.parse(line) as RawConversation, path));
}

/** Every conversation of every `.jsonl` file in a folder (the shared one by default). */
export function loadConversations(directory = conversationsDirectory): Conversation[] {
  return readdirSync(directory)
    .filter((name) => name.endsWith(".jsonl"))
    .sort()
    .flatMap((name) => loadConversationFile(join(directory, name)));
}
