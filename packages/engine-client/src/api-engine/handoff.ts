import { frameSummary } from "../context/frame.js";
import type { ChatMessage } from "../messages.js";
import { toPlainLines } from "../summarise/plain-lines.js";

/** How many characters of the newest lines a handoff carries. */
export const handoffChars = 60_000;

export interface Handoff {
  /** The text to hand over: the framed summary when lines were left out, then the newest lines. */
  readonly text: string;
  /** How many of the log's messages were left out (the oldest). */
  readonly messagesLeftOut: number;
  /** Whether the summary was carried (only when lines were left out). */
  readonly summaryCarried: boolean;
}

/**
 * The handoff for an engine that keeps no transcript (ACP programs): the chat's newest lines, up to
 * 60,000 characters in whole messages, and, when lines are left out, the latest summary in front, framed
 * as context. The newest message always goes, cut to its last characters when it alone is too long.
 */
export function buildHandoff(
  log: readonly ChatMessage[],
  summary: string | null,
  options: { readonly maxChars?: number } = {},
): Handoff {
  const maxChars = options.maxChars ?? handoffChars;
  const blocks: string[] = [];
  let used = 0;
  let cut = false;
  let index = log.length - 1;
  for (; index >= 0; index--) {
    const block = toPlainLines([log[index] as ChatMessage]);
    if (block === "") continue;
    const cost = block.length + (blocks.length > 0 ? 1 : 0);
    if (used + cost > maxChars) {
      if (blocks.length === 0) {
        blocks.push(`…${block.slice(block.length - (maxChars - 1))}`);
        cut = true;
        index -= 1;
      }
      break;
    }
    blocks.push(block);
    used += cost;
  }
  const messagesLeftOut = Math.max(0, index + 1);
  const lines = blocks.reverse().join("\n");
  const summaryCarried = (messagesLeftOut > 0 || cut) && summary !== null && summary.trim() !== "";
  return {
    text: summaryCarried ? `${frameSummary(summary as string)}\n\n${lines}` : lines,
    messagesLeftOut,
    summaryCarried,
  };
}
