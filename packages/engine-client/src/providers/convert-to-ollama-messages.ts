import type { ChatMessage } from "../messages.js";
import { toolArgumentsObject } from "./adapter-support.js";

/** One message of an Ollama `/api/chat` request. */
export type OllamaMessage =
  | { readonly role: "system"; readonly content: string }
  | { readonly role: "user"; readonly content: string; readonly images?: readonly string[] }
  | {
      readonly role: "assistant";
      readonly content: string;
      readonly tool_calls?: readonly { function: { name: string; arguments: Record<string, unknown> } }[];
    }
  | { readonly role: "tool"; readonly content: string; readonly tool_name?: string };

/**
 * Converts the engine's messages into Ollama's native messages: pictures with bytes go in `images`
 * (a linked picture is named in the text, since Ollama cannot fetch it), thinking is left out, and each
 * tool result is a `tool` message named after its call.
 */
export function convertToOllamaMessages(system: string | undefined, messages: readonly ChatMessage[]): OllamaMessage[] {
  const callNames = new Map<string, string>();
  const converted: OllamaMessage[] = [];
  if (system) converted.push({ role: "system", content: system });
  for (const message of messages) {
    switch (message.role) {
      case "user": {
        const texts: string[] = [];
        const images: string[] = [];
        for (const part of message.parts) {
          if (part.type === "text" || part.type === "tool-result") texts.push(part.text);
          else if (part.type === "picture") {
            if (part.data !== undefined) images.push(part.data);
            else texts.push(`[picture: ${part.name}]`);
          }
        }
        converted.push({ role: "user", content: texts.join("\n\n"), ...(images.length > 0 && { images }) });
        break;
      }
      case "assistant": {
        const texts: string[] = [];
        const toolCalls: { function: { name: string; arguments: Record<string, unknown> } }[] = [];
        for (const part of message.parts) {
          if (part.type === "text") texts.push(part.text);
          else if (part.type === "tool-call") {
            callNames.set(part.id, part.name);
            toolCalls.push({ function: { name: part.name, arguments: toolArgumentsObject(part.arguments) } });
          }
        }
        converted.push({
          role: "assistant",
          content: texts.join("\n\n"),
          ...(toolCalls.length > 0 && { tool_calls: toolCalls }),
        });
        break;
      }
      case "tool":
        for (const part of message.parts) {
          if (part.type !== "tool-result") continue;
          const name = part.name ?? callNames.get(part.callId);
          converted.push({ role: "tool", content: part.text, ...(name !== undefined && { tool_name: name }) });
        }
        break;
      default:
        return message.role satisfies never;
    }
  }
  return converted;
}
