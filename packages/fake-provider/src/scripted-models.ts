import type { ChatMessage } from "@conch/engine-client";
import type { FakeReply } from "./fake-provider-dialects.js";
import type { FakeChatRequest } from "./fake-provider-types.js";

/**
 * A scripted summariser shaped like a real one: it reads the chat lines and the summary so far in the
 * request, and writes a summary of both (the person's requests, quoted, and the facts it saw), so that what
 * was folded can be found in it. Not a constant.
 */
export function scriptedSummaryReply(request: FakeChatRequest): FakeReply {
  const prompt = request.lastUserText;
  const before = /<summary-so-far>\n([\s\S]*?)\n<\/summary-so-far>/.exec(prompt)?.[1] ?? "";
  const lines = /<chat-lines>\n([\s\S]*?)\n<\/chat-lines>/.exec(prompt)?.[1] ?? "";
  const focus = /^Above all, keep this, as the person asked: (.*)$/m.exec(prompt)?.[1];
  const requests = lines
    .split("\n")
    .filter((line) => line.startsWith("Person: "))
    .map((line) => `- The person asked: ${line.slice("Person: ".length, 160).trim()}`);
  const facts = [...new Set(lines.match(/\b[\w-]+\.(?:ts|js|json|md|py|tsx)\b/g) ?? [])]
    .slice(0, 8)
    .map((file) => `- File mentioned: ${file}`);
  const previous = before
    .split("\n")
    .filter((line) => line.startsWith("- "))
    .slice(-30);
  return {
    text: [
      ...(focus ? [`Kept as asked: ${focus}`] : []),
      "What the person wants and what was done:",
      ...previous,
      ...requests,
      ...facts,
    ].join("\n"),
  };
}

/** One recorded exchange: the person's message, and the model's replies to play back (one per request). */
export interface RecordedTurn {
  readonly person: string;
  /** The assistant's recorded messages, and the tool results that followed each, in order. */
  readonly rounds: ReadonlyArray<{ readonly reply: string; readonly toolResults: readonly string[] }>;
}

/**
 * A conversation of the recorded-chat format as turns: each person's message, then the recorded assistant messages
 * (each a request) with the tool results that came after them. Tool results before the first assistant
 * message of a turn are folded into the person's message, as a host would attach them.
 */
export function recordedTurns(messages: readonly ChatMessage[]): RecordedTurn[] {
  const turns: Array<{ person: string; rounds: Array<{ reply: string; toolResults: string[] }> }> = [];
  const text = (message: ChatMessage) =>
    message.parts.map((part) => (part.type === "text" || part.type === "tool-result" ? part.text : "")).join("\n");
  for (const message of messages) {
    if (message.role === "user" || turns.length === 0) {
      turns.push({ person: message.role === "user" ? text(message) : "", rounds: [] });
      if (message.role === "user") continue;
    }
    const turn = turns.at(-1) as (typeof turns)[number];
    if (message.role === "assistant") turn.rounds.push({ reply: text(message), toolResults: [] });
    else if (message.role === "tool") {
      const round = turn.rounds.at(-1);
      if (round) round.toolResults.push(text(message));
      else turn.person = `${turn.person}\n${text(message)}`.trim();
    } else turn.person = `${turn.person}\n${text(message)}`.trim();
  }
  return turns.filter((turn) => turn.person !== "" || turn.rounds.length > 0);
}
