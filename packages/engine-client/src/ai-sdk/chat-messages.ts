import type { ChatSnapshot } from "../engine.js";
import type { SummaryState } from "../events.js";
import type { ChatMessage, PicturePart } from "../messages.js";
import { answerMessageId, type NacreUIMessage, userMessageId } from "./ui-message.js";

type Part = NacreUIMessage["parts"][number];

/**
 * The chat as `useChat`'s first messages: one message per person's message and one answer per turn (its rounds,
 * tool calls and their results together), the latest fold as a `data-nacre-fold` part and the last turn's
 * problem as a `data-nacre-problem` part, the window's use (`contextUsage`) on the last answer's metadata.
 */
export function nacreChatMessages(
  snapshot: Pick<ChatSnapshot, "messages" | "summary" | "problem"> &
    Partial<Pick<ChatSnapshot, "contextUsage" | "nextSeq">>,
): NacreUIMessage[] {
  const result: NacreUIMessage[] = [];
  let answer: { message: NacreUIMessage; parts: Part[] } | null = null;
  let lastUserSeq = -1;

  const answerFor = (seq: number) => {
    if (answer === null) {
      const parts: Part[] = [];
      answer = {
        parts,
        message: {
          id: answerMessageId(lastUserSeq),
          role: "assistant",
          metadata: { seq: lastUserSeq, lastSeq: seq },
          parts,
        },
      };
      result.push(answer.message);
    }
    answer.message.metadata = { ...answer.message.metadata, seq: lastUserSeq, lastSeq: seq };
    return answer;
  };

  for (const message of snapshot.messages) {
    switch (message.role) {
      case "user":
        lastUserSeq = message.seq;
        answer = null;
        result.push({
          id: userMessageId(message.seq),
          role: "user",
          metadata: { seq: message.seq, ...(message.continuation ? { continuation: true } : {}) },
          parts: userParts(message),
        });
        break;
      case "assistant": {
        const current = answerFor(message.seq);
        current.message.metadata = {
          ...current.message.metadata,
          seq: lastUserSeq,
          ...(message.model ? { model: message.model } : {}),
          ...(message.finishReason ? { finishReason: message.finishReason } : {}),
        };
        current.parts.push({ type: "step-start" });
        for (const part of message.parts) {
          switch (part.type) {
            case "text":
              current.parts.push({ type: "text", text: part.text, state: "done" });
              break;
            case "thinking":
              if (!part.redacted) current.parts.push({ type: "reasoning", text: part.text, state: "done" });
              break;
            case "tool-call":
              current.parts.push({
                type: `tool-${part.name}`,
                toolCallId: part.id,
                state: "input-available",
                input: parseArguments(part.arguments),
              } as Part);
              break;
            case "picture":
              current.parts.push(fileOf(part));
              break;
            case "tool-result":
              break;
            default:
              part satisfies never;
          }
        }
        break;
      }
      case "tool": {
        const current = answerFor(message.seq);
        for (const part of message.parts) {
          if (part.type !== "tool-result") continue;
          const index = current.parts.findIndex((p) => "toolCallId" in p && p.toolCallId === part.callId);
          const call = current.parts[index];
          if (!call || !("toolCallId" in call)) continue;
          current.parts[index] = (
            part.isError
              ? { ...call, state: "output-error", errorText: part.text }
              : { ...call, state: "output-available", output: part.text }
          ) as Part;
        }
        break;
      }
      default:
        message.role satisfies never;
    }
  }

  if (snapshot.problem) {
    const { seq, problem } = snapshot.problem;
    let target = result.find((m) => m.role === "assistant" && m.metadata?.seq === seq);
    if (!target) {
      target = { id: answerMessageId(seq), role: "assistant", metadata: { seq, lastSeq: seq }, parts: [] };
      result.push(target);
    }
    target.parts.push({ type: "data-nacre-problem", id: `problem-${seq}`, data: { seq, problem } });
  }
  const last = result.at(-1);
  if (snapshot.nextSeq !== undefined && last?.metadata) last.metadata = { ...last.metadata, nextSeq: snapshot.nextSeq };
  const lastAnswer = result.findLast((m) => m.role === "assistant");
  // The meter reads the last answer's: a loaded chat shows the window the next request will use, as a live one.
  if (snapshot.contextUsage && lastAnswer?.metadata) {
    lastAnswer.metadata = { ...lastAnswer.metadata, contextUsage: snapshot.contextUsage };
  }
  if (snapshot.summary) {
    lastAnswer?.parts.unshift({
      type: "data-nacre-fold",
      id: `fold-${lastAnswer.metadata?.seq ?? 0}-loaded`,
      data: { status: "compacted", reason: snapshot.summary.reason, summary: snapshot.summary },
    });
  }
  return result;
}

/**
 * Where each UI message sits in the log: its first and last seq. A person's message `useChat` added itself has
 * no metadata; it takes the seq its answer names. Unknown places are null.
 */
export function nacreMessageSeqs(
  messages: readonly NacreUIMessage[],
): readonly ({ readonly first: number; readonly last: number } | null)[] {
  return messages.map((message, index) => {
    const metadata = message.metadata;
    if (metadata) {
      if (message.role === "assistant") return { first: metadata.seq + 1, last: metadata.lastSeq ?? metadata.seq };
      return { first: metadata.seq, last: metadata.seq };
    }
    const next = messages[index + 1];
    if (message.role === "user" && next?.role === "assistant" && next.metadata) {
      return { first: next.metadata.seq, last: next.metadata.seq };
    }
    return null;
  });
}

/** The seq the next message goes at, as the messages know the log (the engine refuses it when they are stale). */
export function nacreNextSeq(messages: readonly NacreUIMessage[]): number {
  let next = 0;
  for (const place of nacreMessageSeqs(messages)) if (place) next = Math.max(next, place.last + 1);
  for (const message of messages) next = Math.max(next, message.metadata?.nextSeq ?? 0);
  return next;
}

/** The latest summary the messages carry and the message the divider goes before (the first kept one). */
export function nacreDivider(
  messages: readonly NacreUIMessage[],
): { readonly summary: SummaryState; readonly beforeMessageId: string } | null {
  let summary: SummaryState | null = null;
  for (const message of messages) {
    for (const part of message.parts) {
      if (part.type === "data-nacre-fold" && part.data.status === "compacted") {
        if (summary === null || part.data.summary.at >= summary.at) summary = part.data.summary;
      }
    }
  }
  if (summary === null) return null;
  const firstKept = summary.firstKeptSeq;
  const places = nacreMessageSeqs(messages);
  const index = places.findIndex((place) => place !== null && place.last >= firstKept);
  const before = index >= 0 ? messages[index] : undefined;
  return before ? { summary, beforeMessageId: before.id } : null;
}

function userParts(message: ChatMessage): Part[] {
  const parts: Part[] = [];
  for (const part of message.parts) {
    if (part.type === "text") parts.push({ type: "text", text: part.text, state: "done" });
    else if (part.type === "picture") parts.push(fileOf(part));
  }
  return parts;
}

function fileOf(part: PicturePart): Part {
  const url = part.url ?? (part.data ? `data:${part.mediaType};base64,${part.data}` : "");
  return { type: "file", mediaType: part.mediaType, filename: part.name, url };
}

function parseArguments(text: string): unknown {
  try {
    return text.trim() === "" ? {} : JSON.parse(text);
  } catch {
    return text;
  }
}
