import { type ChatMessage, messageText } from "../messages.js";

/** The person's own words from one message of the log. */
export interface PersonWords {
  readonly seq: number;
  readonly text: string;
}

/** What a learner is asked to review: the person's words from before the model's memory now starts. */
export interface LearnerReview {
  readonly chatId: string;
  /** Only the person's own words, oldest first, none of them read before. */
  readonly words: readonly PersonWords[];
  /** The log position the words go up to (exclusive): the first kept message after a fold. */
  readonly untilSeq: number;
  /** The chat read something untrusted: whatever is learned waits for the person's OK. */
  readonly untrusted: boolean;
  /** Remember things automatically; when false, whatever is learned waits for the person's OK. */
  readonly autoRemember: boolean;
  readonly abortSignal?: AbortSignal;
}

/** How a review ended. Only `reviewed` marks the words as read. */
export type LearnerOutcome =
  | {
      readonly status: "reviewed";
      /** How many memories were proposed (saved or waiting). */
      readonly proposals: number;
    }
  | { readonly status: "no-model" }
  | { readonly status: "unreadable"; readonly detail?: string };

/** The host's learner (Conch's quiet look at the chat). */
export interface Learner {
  review(request: LearnerReview): Promise<LearnerOutcome>;
}

/** How far a chat's words have been read by a learner, kept in the engine's transcript. */
export interface LearningState {
  /** Words at a seq below this were read already (by a fold's review or the nightly tidy-up). */
  readonly readUntil: number;
  /** When each review learned, and what it covered. */
  readonly learned: ReadonlyArray<{ readonly at: number; readonly fromSeq: number; readonly untilSeq: number }>;
}

export const initialLearningState: LearningState = Object.freeze({ readUntil: 0, learned: Object.freeze([]) });

/**
 * The person's own words in `[fromSeq, untilSeq)`: only `user` messages' text, never the model's or a tool's, nor
 * a host's prompt to continue a cut-off reply (`continuation`).
 */
export function personWordsBetween(log: readonly ChatMessage[], fromSeq: number, untilSeq: number): PersonWords[] {
  const words: PersonWords[] = [];
  for (const message of log) {
    if (message.seq < fromSeq || message.seq >= untilSeq || message.role !== "user" || message.continuation) continue;
    const text = messageText(message).trim();
    if (text !== "") words.push({ seq: message.seq, text });
  }
  return words;
}

export interface LearnBeforeFoldOptions {
  readonly learner: Learner;
  readonly chatId: string;
  readonly log: readonly ChatMessage[];
  readonly state: LearningState;
  /** Where the model's word-for-word memory now starts. */
  readonly untilSeq: number;
  /** Routine runs and chats with other people in them are never learned from. Default `person`. */
  readonly origin?: "person" | "routine" | "group";
  readonly untrusted?: boolean;
  /** Default true. */
  readonly autoRemember?: boolean;
  readonly now: () => number;
  readonly abortSignal?: AbortSignal;
}

/** The result of a review before a fold: the new state (unchanged unless the learner read the words). */
export interface LearnBeforeFoldResult {
  readonly state: LearningState;
  readonly outcome:
    | LearnerOutcome
    | { readonly status: "skipped"; readonly why: "origin" | "nothing-new" }
    | {
        readonly status: "failed";
        readonly error: unknown;
      };
}

/**
 * Gives the learner the person's words before `untilSeq` that it has not read, and records how far it read
 * only when it answered. A failure, no model or an unreadable answer marks nothing read, so the nightly
 * tidy-up still has the words (they are still in the chat's log).
 */
export async function learnBeforeFold(options: LearnBeforeFoldOptions): Promise<LearnBeforeFoldResult> {
  const { state } = options;
  if (options.origin === "routine" || options.origin === "group") {
    return { state, outcome: { status: "skipped", why: "origin" } };
  }
  // Empty too when `untilSeq` is not past `readUntil`: the range holds no seq.
  const words = personWordsBetween(options.log, state.readUntil, options.untilSeq);
  if (words.length === 0) {
    return { state, outcome: { status: "skipped", why: "nothing-new" } };
  }
  let outcome: LearnerOutcome;
  try {
    outcome = await options.learner.review({
      chatId: options.chatId,
      words,
      untilSeq: options.untilSeq,
      untrusted: options.untrusted ?? false,
      autoRemember: options.autoRemember ?? true,
      ...(options.abortSignal ? { abortSignal: options.abortSignal } : {}),
    });
  } catch (error) {
    return { state, outcome: { status: "failed", error } };
  }
  if (outcome.status !== "reviewed") return { state, outcome };
  return {
    state: {
      readUntil: options.untilSeq,
      learned: [...state.learned, { at: options.now(), fromSeq: state.readUntil, untilSeq: options.untilSeq }],
    },
    outcome,
  };
}
