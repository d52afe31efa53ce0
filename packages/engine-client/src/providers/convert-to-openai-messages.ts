import type { ChatMessage, PicturePart } from "../messages.js";
import type { ToolDefinition } from "./provider-adapter.js";

/** A content part of an OpenAI-style user message. */
export type OpenAIContentPart =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "image_url"; readonly image_url: { readonly url: string } };

/** A tool call as an OpenAI-style assistant message carries it. */
export interface OpenAIToolCall {
  readonly id: string;
  readonly type: "function";
  readonly function: { readonly name: string; readonly arguments: string };
}

/** One message of an OpenAI-style chat request. */
export type OpenAIMessage =
  | { readonly role: "system"; readonly content: string }
  | { readonly role: "user"; readonly content: string | readonly OpenAIContentPart[] }
  | {
      readonly role: "assistant";
      readonly content: string | null;
      readonly tool_calls?: readonly OpenAIToolCall[];
      readonly reasoning_content?: string;
    }
  | { readonly role: "tool"; readonly tool_call_id: string; readonly content: string };

/** How a row wants messages converted. */
export interface OpenAIConversionOptions {
  /**
   * Send the thinking back as `reasoning_content` on assistant messages that called tools (DeepSeek
   * requires it there and ignores it elsewhere). Other rows never receive thinking.
   */
  readonly echoReasoningWithToolCalls?: boolean;
}

/** A picture as a URL: a data URL when the bytes are here, the link otherwise. */
export function pictureURL(picture: PicturePart): string | undefined {
  if (picture.data !== undefined) return `data:${picture.mediaType};base64,${picture.data}`;
  return picture.url;
}

/**
 * Converts the engine's messages into an OpenAI-style `messages` array. Text parts of one message are
 * joined with a blank line; thinking is left out (it stays in the log); a tool message becomes one
 * `tool` message per result.
 */
export function convertToOpenAIMessages(
  system: string | undefined,
  messages: readonly ChatMessage[],
  options: OpenAIConversionOptions = {},
): OpenAIMessage[] {
  const converted: OpenAIMessage[] = [];
  if (system) converted.push({ role: "system", content: system });
  for (const message of messages) {
    switch (message.role) {
      case "user": {
        const parts: OpenAIContentPart[] = [];
        for (const part of message.parts) {
          if (part.type === "text") parts.push({ type: "text", text: part.text });
          else if (part.type === "picture") {
            const url = pictureURL(part);
            parts.push(
              url ? { type: "image_url", image_url: { url } } : { type: "text", text: `[picture: ${part.name}]` },
            );
          } else if (part.type === "tool-result") parts.push({ type: "text", text: part.text });
        }
        const onlyText = parts.every((part) => part.type === "text");
        converted.push({
          role: "user",
          content: onlyText ? parts.map((part) => (part.type === "text" ? part.text : "")).join("\n\n") : parts,
        });
        break;
      }
      case "assistant": {
        const texts: string[] = [];
        const thinking: string[] = [];
        const toolCalls: OpenAIToolCall[] = [];
        for (const part of message.parts) {
          if (part.type === "text") texts.push(part.text);
          else if (part.type === "thinking" && !part.redacted && part.text) thinking.push(part.text);
          else if (part.type === "tool-call") {
            toolCalls.push({ id: part.id, type: "function", function: { name: part.name, arguments: part.arguments } });
          }
        }
        const text = texts.join("\n\n");
        converted.push({
          role: "assistant",
          content: text === "" && toolCalls.length > 0 ? null : text,
          ...(toolCalls.length > 0 && { tool_calls: toolCalls }),
          ...(options.echoReasoningWithToolCalls &&
            toolCalls.length > 0 &&
            thinking.length > 0 && { reasoning_content: thinking.join("") }),
        });
        break;
      }
      case "tool": {
        for (const part of message.parts) {
          if (part.type === "tool-result")
            converted.push({ role: "tool", tool_call_id: part.callId, content: part.text });
        }
        break;
      }
      default:
        return message.role satisfies never;
    }
  }
  return converted;
}

/** Converts tool definitions into OpenAI-style `tools`. */
export function convertToOpenAITools(tools: readonly ToolDefinition[]) {
  return tools.map((tool) => ({
    type: "function" as const,
    function: {
      name: tool.name,
      ...(tool.description !== undefined && { description: tool.description }),
      parameters: tool.parameters,
    },
  }));
}
