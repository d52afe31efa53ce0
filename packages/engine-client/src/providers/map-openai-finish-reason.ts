import type { FinishReason } from "./provider-adapter.js";

/**
 * Maps an OpenAI-style `finish_reason`. `model_context_window_exceeded` (z.ai) is not a finish: the
 * adapter turns it into a "too long" refusal before calling this.
 */
export function mapOpenAIFinishReason(reason: string | null | undefined, sawToolCalls: boolean): FinishReason {
  switch (reason) {
    case "stop":
    case "eos":
    case "end_turn":
      return sawToolCalls ? "tool-calls" : "stop";
    case "length":
    case "max_tokens":
      return "length";
    case "tool_calls":
    case "function_call":
    case "tool_use":
      return "tool-calls";
    case "content_filter":
    case "sensitive":
      return "content-filter";
    default:
      return sawToolCalls ? "tool-calls" : "other";
  }
}
