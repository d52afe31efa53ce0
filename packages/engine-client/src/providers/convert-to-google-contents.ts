import type { ChatMessage } from "../messages.js";
import { toolArgumentsObject } from "./adapter-support.js";
import type { ToolDefinition } from "./provider-adapter.js";

/** A part of a Gemini `Content`. */
export type GooglePart =
  | { text: string; thoughtSignature?: string }
  | { inlineData: { mimeType: string; data: string } }
  | { fileData: { mimeType: string; fileUri: string } }
  | { functionCall: { name: string; args: Record<string, unknown>; id?: string }; thoughtSignature?: string }
  | { functionResponse: { name: string; response: Record<string, unknown>; id?: string } };

/** A Gemini `Content`: one turn of a role. */
export interface GoogleContent {
  readonly role: "user" | "model";
  readonly parts: GooglePart[];
}

/** Tool-call ids this library made up because Gemini gave none; they are never sent back. */
export const generatedGoogleCallPrefix = "gemini_call";

function realId(id: string): string | undefined {
  return id.startsWith(`${generatedGoogleCallPrefix}_`) ? undefined : id;
}

/**
 * Converts the engine's messages into Gemini `contents`. Assistant turns are `model` turns; tool results
 * are `functionResponse` parts of a `user` turn, named after their call. Thought text is left out (it stays
 * in the log); a thought signature goes back on the turn's first function call, or its first text.
 */
export function convertToGoogleContents(messages: readonly ChatMessage[]): GoogleContent[] {
  const callNames = new Map<string, string>();
  const contents: GoogleContent[] = [];
  for (const message of messages) {
    const role = message.role === "assistant" ? "model" : "user";
    const parts: GooglePart[] = [];
    let signature: string | undefined;
    for (const part of message.parts) {
      switch (part.type) {
        case "text":
          if (part.text !== "") parts.push({ text: part.text });
          break;
        case "thinking":
          if (part.signature && signature === undefined) signature = part.signature;
          break;
        case "tool-call": {
          callNames.set(part.id, part.name);
          const id = realId(part.id);
          parts.push({
            functionCall: { name: part.name, args: toolArgumentsObject(part.arguments), ...(id && { id }) },
          });
          break;
        }
        case "tool-result": {
          const id = realId(part.callId);
          const name = part.name ?? callNames.get(part.callId) ?? "tool";
          const response = part.isError ? { error: part.text } : { output: part.text };
          parts.push({ functionResponse: { name, response, ...(id && { id }) } });
          break;
        }
        case "picture":
          if (part.data !== undefined) parts.push({ inlineData: { mimeType: part.mediaType, data: part.data } });
          else if (part.url !== undefined) parts.push({ fileData: { mimeType: part.mediaType, fileUri: part.url } });
          else parts.push({ text: `[picture: ${part.name}]` });
          break;
        default:
          part satisfies never;
      }
    }
    if (signature !== undefined) {
      const target = parts.find((part) => "functionCall" in part) ?? parts.find((part) => "text" in part);
      if (target && ("functionCall" in target || "text" in target)) target.thoughtSignature = signature;
    }
    if (parts.length === 0) continue;
    const previous = contents.at(-1);
    if (previous && previous.role === role) previous.parts.push(...parts);
    else contents.push({ role, parts });
  }
  return contents;
}

/** Converts tool definitions into Gemini `tools`. */
export function convertToGoogleTools(tools: readonly ToolDefinition[]) {
  return [
    {
      functionDeclarations: tools.map((tool) => ({
        name: tool.name,
        ...(tool.description !== undefined && { description: tool.description }),
        parameters: tool.parameters,
      })),
    },
  ];
}
