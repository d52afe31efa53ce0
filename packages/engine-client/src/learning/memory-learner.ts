import { LearnerFailedError } from "../errors.js";
import type { Learner, LearnerOutcome, LearnerReview, PersonWords } from "./learner.js";

/** A memory the in-memory learner proposed. */
export interface LearnedMemory {
  readonly id: string;
  readonly chatId: string;
  readonly text: string;
  /** The person's message it came from. */
  readonly seq: number;
  /** `waiting` needs the person's OK (untrusted chat, or automatic remembering off). */
  status: "saved" | "waiting" | "undone";
}

export interface MemoryLearnerOptions {
  /** Picks what is worth remembering from the person's words. Default: sentences that state a preference, a fact about them or a decision. */
  readonly extract?: (words: PersonWords) => readonly string[];
  /** Simulates a learner without a model: every review answers `no-model`. */
  readonly noModel?: boolean;
}

/** An in-memory learner for tests, stories and the demo, with memories that can be approved and undone. */
export interface MemoryLearner extends Learner {
  readonly memories: readonly LearnedMemory[];
  /** Every review request, in order. */
  readonly reviews: readonly LearnerReview[];
  approve(id: string): void;
  undo(id: string): void;
  /** The next `count` reviews throw (a learner that fails). */
  failNext(count?: number): void;
  /** The next `count` reviews answer `unreadable`. */
  garbleNext(count?: number): void;
}

const worthRemembering =
  /\b(?:i (?:prefer|like|love|hate|use|work|live|am|need|want)|my (?:name|team|company|project|email)|always|never|remember|we decided|let's use|call me)\b/i;

function defaultExtract(words: PersonWords): string[] {
  return words.text
    .split(/(?<=[.!?])\s+|\n+/)
    .map((sentence) => sentence.trim())
    .filter((sentence) => sentence.length > 0 && worthRemembering.test(sentence));
}

export function createMemoryLearner(options: MemoryLearnerOptions = {}): MemoryLearner {
  const memories: LearnedMemory[] = [];
  const reviews: LearnerReview[] = [];
  const extract = options.extract ?? defaultExtract;
  let failures = 0;
  let garbled = 0;
  let counter = 0;

  return {
    memories,
    reviews,
    async review(request): Promise<LearnerOutcome> {
      reviews.push(request);
      if (failures > 0) {
        failures -= 1;
        throw new LearnerFailedError(request.chatId);
      }
      if (options.noModel) return { status: "no-model" };
      if (garbled > 0) {
        garbled -= 1;
        return { status: "unreadable", detail: "the answer was not a list of memories" };
      }
      const waiting = request.untrusted || !request.autoRemember;
      let proposals = 0;
      for (const words of request.words) {
        for (const text of extract(words)) {
          counter += 1;
          memories.push({
            id: `memory-${counter}`,
            chatId: request.chatId,
            text,
            seq: words.seq,
            status: waiting ? "waiting" : "saved",
          });
          proposals += 1;
        }
      }
      return { status: "reviewed", proposals };
    },
    approve(id) {
      const memory = memories.find((candidate) => candidate.id === id);
      if (memory?.status === "waiting") memory.status = "saved";
    },
    undo(id) {
      const memory = memories.find((candidate) => candidate.id === id);
      if (memory) memory.status = "undone";
    },
    failNext(count = 1) {
      failures += count;
    },
    garbleNext(count = 1) {
      garbled += count;
    },
  };
}
