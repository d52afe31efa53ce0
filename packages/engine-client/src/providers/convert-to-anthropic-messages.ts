import type { ChatMessage, MessagePart } from "../messages.js";
import { toolArgumentsObject } from "./adapter-support.js";
import type { ToolDefinition } from "./provider-adapter.js";

/** Marks the end of a cached prefix (Anthropic prompt caching). */
export interface AnthropicCacheControl {
  readonly type: "ephemeral";
}

/** A content block of an Anthropic message. */
export type AnthropicBlock =
  | { type: "text"; text: string; cache_control?: AnthropicCacheControl }
  | {
      type: "image";
      source: { type: "base64"; media_type: string; data: string } | { type: "url"; url: string };
      cache_control?: AnthropicCacheControl;
    }
  | { type: "thinking"; thinking: string; signature: string }
  | { type: "redacted_thinking"; data: string }
  | {
      type: "tool_use";
      id: string;
      name: string;
      input: Record<string, unknown>;
      cache_control?: AnthropicCacheControl;
    }
  | {
      type: "tool_result";
      tool_use_id: string;
      content: string;
      is_error?: boolean;
      cache_control?: AnthropicCacheControl;
    };

/** One message of an Anthropic Messages request. */
export interface AnthropicMessage {
  readonly role: "user" | "assistant";
  readonly content: AnthropicBlock[];
}

function toBlock(part: MessagePart): AnthropicBlock | undefined {
  switch (part.type) {
    case "text":
      // Anthropic refuses empty text blocks.
      return part.text === "" ? undefined : { type: "text", text: part.text };
    case "thinking":
      if (part.redacted) return { type: "redacted_thinking", data: part.text };
      // Thinking without a signature (from another provider) cannot be sent to Anthropic; it stays in the log.
      return part.signature ? { type: "thinking", thinking: part.text, signature: part.signature } : undefined;
    case "tool-call":
      return { type: "tool_use", id: part.id, name: part.name, input: toolArgumentsObject(part.arguments) };
    case "tool-result":
      return {
        type: "tool_result",
        tool_use_id: part.callId,
        content: part.text,
        ...(part.isError && { is_error: true }),
      };
    case "picture":
      if (part.data !== undefined) {
        return { type: "image", source: { type: "base64", media_type: part.mediaType, data: part.data } };
      }
      if (part.url !== undefined) return { type: "image", source: { type: "url", url: part.url } };
      return { type: "text", text: `[picture: ${part.name}]` };
    default:
      return part satisfies never;
  }
}

/**
 * Converts the engine's messages into Anthropic messages: tool results ride in user messages, messages of
 * one role in a row are merged, and the last block of the message at `cacheBreakpointIndex` (or the last
 * cacheable block before it) gets `cache_control`, so the stable prefix is cached between folds.
 */
export function convertToAnthropicMessages(
  messages: readonly ChatMessage[],
  cacheBreakpointIndex?: number,
): AnthropicMessage[] {
  const converted: AnthropicMessage[] = [];
  let lastCacheable: Exclude<AnthropicBlock, { type: "thinking" | "redacted_thinking" }> | undefined;
  for (const [index, message] of messages.entries()) {
    const role = message.role === "assistant" ? "assistant" : "user";
    const blocks: AnthropicBlock[] = [];
    for (const part of message.parts) {
      const block = toBlock(part);
      if (!block) continue;
      blocks.push(block);
      if (block.type !== "thinking" && block.type !== "redacted_thinking" && index <= (cacheBreakpointIndex ?? -1)) {
        lastCacheable = block;
      }
    }
    if (blocks.length === 0) continue;
    const previous = converted.at(-1);
    if (previous && previous.role === role) previous.content.push(...blocks);
    else converted.push({ role, content: blocks });
  }
  if (lastCacheable) lastCacheable.cache_control = { type: "ephemeral" };
  return converted;
}

/** Converts tool definitions into Anthropic `tools`. */
export function convertToAnthropicTools(tools: readonly ToolDefinition[]) {
  return tools.map((tool) => ({
    name: tool.name,
    ...(tool.description !== undefined && { description: tool.description }),
    input_schema: tool.parameters,
  }));
}
