import type { ChatMessage } from "../messages.js";
import type { MockEngineScript, MockTurnScript } from "./mock-script.js";

export interface LongChatOptions {
  /** How many turns the chat has. */
  readonly turns: number;
  /** A scripted fold before every K-th turn (K, 2K, ...). 0: none. */
  readonly compactEvery: number;
  /** Whole turns each fold keeps, the one being answered included. Default 2. */
  readonly keepTurns?: number;
  /** Varies the wording; the same seed gives the same chat. Default 1. */
  readonly seed?: number;
}

export interface LongChatScript extends MockEngineScript {
  /** The person's message for each turn, in order. */
  readonly prompts: readonly string[];
  readonly turns: readonly MockTurnScript[];
}

const topics = [
  "the invoice export",
  "the login page",
  "the nightly backup",
  "the search index",
  "the onboarding email",
  "the billing webhook",
  "the dark theme",
  "the release notes",
  "the CSV importer",
  "the rate limiter",
];

const asks = [
  "Can you explain how {t} works?",
  "Please rename the main function in {t} to something clearer.",
  "What would break if we removed {t}?",
  "Write a test for {t} that covers the empty case.",
  "Summarise the open questions about {t}.",
];

/** A small deterministic generator (mulberry32), so that a seed always gives the same chat. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A long scripted chat: N turns, the person's prompts, the model's replies, and a fold before every K-th
 * turn whose summary lists what was folded.
 */
export function generateLongChatScript(options: LongChatOptions): LongChatScript {
  const next = random(options.seed ?? 1);
  const prompts: string[] = [];
  const turns: MockTurnScript[] = [];
  let foldedTopics: string[] = [];
  for (let index = 0; index < options.turns; index += 1) {
    const topic = topics[Math.floor(next() * topics.length)] as string;
    const ask = (asks[Math.floor(next() * asks.length)] as string).replace("{t}", topic);
    prompts.push(`Turn ${index + 1}: ${ask}`);
    const reply = `About ${topic} (turn ${index + 1}): here is what I found, step by step. First, the code path starts in the module of the same name. Second, the tests cover the main case. Third, nothing else depends on it.`;
    const due = options.compactEvery > 0 && index > 0 && index % options.compactEvery === 0;
    if (due) {
      const summary = [
        `The person is working through ${foldedTopics.length} requests.`,
        ...foldedTopics.map((folded) => `- Discussed ${folded}.`),
      ].join("\n");
      turns.push({ reply, compaction: { summary, keepTurns: options.keepTurns ?? 2 } });
      foldedTopics = [];
    } else {
      turns.push({ reply });
    }
    foldedTopics.push(topic);
  }
  return { prompts, turns };
}

/** A log from alternating person and model texts, starting at seq 0. */
export function chatLogFrom(pairs: ReadonlyArray<readonly [person: string, model: string]>, start = 0): ChatMessage[] {
  const messages: ChatMessage[] = [];
  let seq = start;
  for (const [person, reply] of pairs) {
    messages.push({ seq, role: "user", parts: [{ type: "text", text: person }] });
    seq += 1;
    messages.push({ seq, role: "assistant", parts: [{ type: "text", text: reply }], model: "mock-large" });
    seq += 1;
  }
  return messages;
}
