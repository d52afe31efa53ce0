import type { UIMessage } from "ai";
import type { ContextUsage } from "../engine.js";
import type { CompactionReason, CompactionSkippedEvent, HealthNote, SummaryState } from "../events.js";
import type { MessageFinishReason, Usage } from "../messages.js";
import type { TurnProblem } from "../problems.js";

/**
 * What Nacre keeps on a UI message. The seqs tie the message to the engine's log, so that the next turn's seq
 * comes from the log and never from `messages.length`.
 */
export type NacreMessageMetadata = {
  /** A person's message: its place in the log. An answer: the place of the person's message it answers. */
  readonly seq: number;
  /** An answer: the last place in the log it covers (a tool round spans several); absent while nothing is kept. */
  readonly lastSeq?: number;
  /** The model that wrote the answer. */
  readonly model?: string;
  /** How the answer's last message ended (`length`: cut off at the output limit or the window). */
  readonly finishReason?: MessageFinishReason;
  /** The turn's usage, summarising included. */
  readonly usage?: Usage;
  /**
   * How much of the window the next request will use: as the engine computed it at the turn's end, and on the
   * last answer of a loaded chat, so that a meter keeps it across a reload.
   */
  readonly contextUsage?: ContextUsage;
  /**
   * A person's message that asks a cut-off answer to go on (a fixed prompt, not the person's words): kept with
   * `continuation` and never learned from. Set it with `sendMessage({ text, metadata: { seq, continuation: true } })`.
   */
  readonly continuation?: boolean;
  /**
   * A loaded chat's last message: where the log's next message goes, every branch counted (the messages of the
   * active branch alone cannot tell when a newer branch exists beside it).
   */
  readonly nextSeq?: number;
};

/** A fold, updated in place (by the part's id) as it starts and ends. */
export type NacreFoldData =
  | {
      readonly status: "compacting";
      readonly reason: CompactionReason;
      /** The fold's progress: `piece` of the summariser's `pieces` read (absent as the fold begins). */
      readonly piece?: number;
      readonly pieces?: number;
    }
  | { readonly status: "compacted"; readonly reason: CompactionReason; readonly summary: SummaryState }
  | { readonly status: "skipped"; readonly reason: CompactionReason; readonly why: CompactionSkippedEvent["why"] };

/** A turn's problem: what Nacre's `TurnProblem` card shows. */
export interface NacreProblemData {
  /** The person's message the problem belongs to. */
  readonly seq: number;
  readonly problem: TurnProblem;
}

/** The data parts Nacre writes: `data-nacre-fold`, `data-nacre-problem`, and the transient `data-nacre-health`. */
export type NacreDataTypes = {
  "nacre-fold": NacreFoldData;
  "nacre-problem": NacreProblemData;
  /** Transient: reaches `useChat`'s `onData`, never the message (the chat's snapshot keeps the notes). */
  "nacre-health": HealthNote;
};

/** A `useChat` message on a Nacre engine. */
export type NacreUIMessage = UIMessage<NacreMessageMetadata, NacreDataTypes>;

/** The UI message id of the person's message at `seq`. */
export function userMessageId(seq: number): string {
  return `nacre-user-${seq}`;
}

/** The UI message id of the answer to the person's message at `seq` (all its rounds, tool results included). */
export function answerMessageId(seq: number): string {
  return `nacre-answer-${seq}`;
}

/** The person's message's seq an id made by {@link answerMessageId} names, else null. */
export function seqOfAnswerMessageId(id: string | undefined): number | null {
  const match = id === undefined ? null : /^nacre-answer-(\d+)$/.exec(id);
  return match ? Number(match[1]) : null;
}
