import type { ChatMessage, MessageFinishReason, MessagePart } from "../messages.js";
import type { Turn } from "./turn-runner.js";

/** The assistant message being written in a turn: its parts, and the events that say so. */
export interface Answer {
  readonly seq: number;
  /** Whether anything was written (`message-start` went out). */
  readonly started: boolean;
  readonly parts: readonly MessagePart[];
  /** Says `message-start` once, before the first part; a provider's usage or finish alone says nothing. */
  start(): void;
  text(delta: string): void;
  /** Reasoning; a signature (delta "") completes the last part; redacted reasoning is kept, never shown. */
  thinking(delta: string, extra?: { readonly signature?: string; readonly redacted?: boolean }): void;
  toolCall(call: { readonly id: string; readonly name: string; readonly arguments: string }): void;
  /** The message as the log keeps it (an empty text when nothing was written), with how it ended. */
  message(createdAt: number, finishReason: MessageFinishReason): ChatMessage;
  /** Sends `message-end` for a message now in the log, with the reason the message carries. */
  end(message: ChatMessage): void;
}

/**
 * The answer to a turn, at `turn.input.seq + 1`, written by `model`; on a branched log, at `place.seq` after the
 * message `place.parent` (a regenerated answer, beside the one it replaces).
 */
export function createAnswer(
  turn: Turn,
  model: string,
  place?: { readonly seq: number; readonly parent: number },
): Answer {
  const seq = place?.seq ?? turn.input.seq + 1;
  const parentField = place && place.parent !== seq - 1 ? { parent: place.parent } : {};
  const { chatId } = turn;
  const parts: MessagePart[] = [];
  let started = false;
  const answer: Answer = {
    seq,
    get started() {
      return started;
    },
    parts,
    start() {
      if (started) return;
      started = true;
      turn.send({ type: "message-start", chatId, seq, role: "assistant", model });
    },
    text(delta) {
      answer.start();
      const last = parts.at(-1);
      if (last?.type === "text") parts[parts.length - 1] = { ...last, text: last.text + delta };
      else parts.push({ type: "text", text: delta });
      turn.send({ type: "text-delta", chatId, seq, delta });
    },
    thinking(delta, extra = {}) {
      answer.start();
      const last = parts.at(-1);
      if (last?.type === "thinking" && !last.redacted && !extra.redacted && delta !== "") {
        parts[parts.length - 1] = {
          ...last,
          text: last.text + delta,
          ...(extra.signature ? { signature: extra.signature } : {}),
        };
      } else if (last?.type === "thinking" && delta === "" && extra.signature && !last.signature) {
        parts[parts.length - 1] = { ...last, signature: extra.signature };
      } else {
        parts.push({
          type: "thinking",
          text: delta,
          ...(extra.signature ? { signature: extra.signature } : {}),
          ...(extra.redacted ? { redacted: true } : {}),
        });
      }
      if (delta && !extra.redacted) turn.send({ type: "thinking-delta", chatId, seq, delta });
    },
    toolCall(call) {
      answer.start();
      parts.push({ type: "tool-call", id: call.id, name: call.name, arguments: call.arguments });
      turn.send({ type: "tool-call", chatId, seq, id: call.id, name: call.name, arguments: call.arguments });
    },
    message(createdAt, finishReason) {
      return {
        seq,
        role: "assistant",
        parts: parts.length > 0 ? [...parts] : [{ type: "text", text: "" }],
        model,
        createdAt,
        finishReason,
        ...parentField,
      };
    },
    end(message) {
      turn.send({ type: "message-end", chatId, message, finishReason: message.finishReason ?? "stop" });
    },
  };
  return answer;
}
