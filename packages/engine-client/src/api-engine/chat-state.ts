import { z } from "zod";
import type { ModelFactor } from "../context/factor.js";
import { type FoldState, initialFoldState, type TextLimit } from "../context/fold.js";
import { createEstimateCache, type EstimateCache } from "../context/message-estimate.js";
import { heldByRoomOnly } from "../context/shorten.js";

import type { HealthNote, SummaryState } from "../events.js";
import { initialLearningState, type LearningState } from "../learning/learner.js";
import { type ChatMessage, emptyUsage, type Usage } from "../messages.js";
import type { TurnProblem } from "../problems.js";
import type { FoldOfBranch } from "../transcript/branch-folds.js";
import { type BranchTree, branchTree, forkPointOf, growTree, isOnPath } from "../transcript/branch-tree.js";
import type { BranchFold, EarlierFold, TranscriptFile } from "../transcript/transcript-file.js";

/** What the engine keeps of a chat between turns (in memory, and in the transcript file). */
export interface ChatRuntime {
  readonly chatId: string;
  /**
   * The active branch's end, in `seq` order: from the first kept message (or earlier) to the active leaf, never
   * necessarily the whole branch (a turn reads what its window needs; the store has the rest). For a log that never
   * branched, the log's end. Empty only for an empty log.
   */
  log: ChatMessage[];
  /** The log's tree (every branch), complete to its end. */
  tree: BranchTree;
  /** The active branch's last message (what a new turn follows); -1 for an empty log. */
  leaf: number;
  /** The active branch's earlier folds, oldest first (a few of the latest), for branches forking between them. */
  earlier: EarlierFold[];
  /** The active branch's last message when its latest fold was made; null when none was recorded. */
  foldedAt: number | null;
  /** The other branches' folds, by leaf (see `TranscriptBranches.folds`). */
  branchFolds: Record<string, BranchFold>;
  file: TranscriptFile | null;
  summary: SummaryState | null;
  fold: FoldState;
  factor: ModelFactor | null;
  /**
   * The provider's count of the last answered request and its answer, when it was at least the request's estimate
   * (see `CountedTranscript`): kept in memory only, a chat read again sizes with estimate × factor until its next
   * answer.
   */
  lastCount: LastCount | null;
  learning: LearningState;
  healthNotes: HealthNote[];
  problem: { seq: number; problem: TurnProblem } | null;
  usage: Usage;
  /** Lowered answer rooms, per model, after a refusal caused by the output reservation. */
  answerRooms: Record<string, number>;
  untrusted: boolean;
  origin: "person" | "routine" | "group";
  readonly cache: EstimateCache;
}

export const healthNotesKept = 50;

/** What the provider counted of a chat's last answered request (see `ChatRuntime.lastCount`). */
export interface LastCount {
  readonly modelId: string;
  /** The seqs of the messages sent, then the answer's. */
  readonly seqs: readonly number[];
  readonly summary: string | null;
  /** Its input and output tokens, as the provider counted them. */
  readonly tokens: number;
}

const count = z.number().int().nonnegative();
const usageSchema = z.looseObject({ inputTokens: count, outputTokens: count, cachedInputTokens: count });

/**
 * The engine's own fields in the transcript file, beside `summary`, `seqs` and `factor`: read through this one
 * schema, never cast. A field that does not parse makes the file unusable, as a corrupt one is.
 */
const engineFieldsSchema = z.looseObject({
  factorModel: z.string().optional(),
  sizingFactor: z.number().positive().optional(),
  nearBudgetFactor: z.number().positive().optional(),
  fold: z
    .object({
      firstKeptSeq: count,
      textLimit: z.object({ turnSeq: count, maxChars: z.number().int().positive() }).nullable(),
    })
    .optional(),
  readUntil: count.optional(),
  learned: z.array(z.object({ at: z.number(), fromSeq: count, untilSeq: count })).optional(),
  health: z
    .array(
      z.looseObject({
        id: z.string(),
        chatId: z.string(),
        kind: z.enum([
          "healed",
          "summary-failed",
          "summary-shortened",
          "window-learned",
          "usage-ignored",
          "log-repaired",
        ]),
        text: z.string(),
        at: z.number(),
        provider: z.string().optional(),
        model: z.string().optional(),
      }),
    )
    .optional(),
  usage: usageSchema.optional(),
  answerRooms: z.record(z.string(), z.number().int().positive()).optional(),
  untrusted: z.boolean().optional(),
  origin: z.enum(["person", "routine", "group"]).optional(),
  problem: z
    .object({ seq: count, problem: z.looseObject({ kind: z.string(), title: z.string() }) })
    .nullable()
    .optional(),
});

/** The engine's fields as written (the schema above reads them back). */
interface EngineFileFields {
  readonly factorModel?: string;
  /** The factor the chat is sized with (`ModelFactor.sizingFactor`), beside the file's `factor`. */
  readonly sizingFactor?: number;
  /** The factor near the budget (`ModelFactor.nearBudgetFactor`), sized with before `sizingFactor`. */
  readonly nearBudgetFactor?: number;
  readonly fold?: FoldState;
  readonly readUntil?: number;
  readonly learned?: LearningState["learned"];
  readonly health?: readonly HealthNote[];
  readonly usage?: Usage;
  readonly answerRooms?: Record<string, number>;
  readonly untrusted?: boolean;
  readonly origin?: "person" | "routine" | "group";
  /** The last turn's problem, so that a reload (or another engine over the same store) still shows its card. */
  readonly problem?: { readonly seq: number; readonly problem: TurnProblem } | null;
}

/** A chat nothing is known of yet; `cache` carries a chat's estimates over when it is read again. */
export function emptyChatRuntime(chatId: string, cache: EstimateCache = createEstimateCache()): ChatRuntime {
  return {
    chatId,
    log: [],
    tree: branchTree(0, []),
    leaf: -1,
    earlier: [],
    foldedAt: null,
    branchFolds: {},
    file: null,
    summary: null,
    fold: initialFoldState,
    factor: null,
    lastCount: null,
    learning: initialLearningState,
    healthNotes: [],
    problem: null,
    usage: emptyUsage,
    answerRooms: {},
    untrusted: false,
    origin: "person",
    cache,
  };
}

/**
 * Why the engine's own fields in a transcript file are not usable with a log of `end` messages (the file is then
 * treated as corrupt), or null. The stores run it as the read's check, so a bad file is moved aside.
 */
export function engineFieldsProblem(file: TranscriptFile, end: number): string | null {
  const parsed = engineFieldsSchema.safeParse(file);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return `the field ${issue?.path.join(".") || "?"} is not valid: ${issue?.message ?? "unknown"}`;
  }
  const fold = parsed.data.fold;
  if (fold && fold.firstKeptSeq > end) {
    return `the field fold.firstKeptSeq (${fold.firstKeptSeq}) is past the log's end (${end})`;
  }
  return null;
}

/**
 * Takes the transcript file into the chat (the log's end already read; `end` is the log's length). Returns why
 * the engine's fields are unusable (the file is then not used, as a corrupt one), or null. A store that honours
 * the read's check has already moved such a file aside; this covers one that does not.
 */
export function applyTranscript(rt: ChatRuntime, file: TranscriptFile, model: string, end: number): string | null {
  const unusable = engineFieldsProblem(file, end);
  if (unusable !== null) return unusable;
  const extra = engineFieldsSchema.parse(file);
  rt.file = file;
  rt.summary = file.summary ?? null;
  const firstKept = file.seqs?.[0] ?? file.summary?.firstKeptSeq ?? Math.max(0, end - file.messages.length);
  rt.fold = extra.fold ?? { firstKeptSeq: firstKept, textLimit: null };
  rt.factor =
    file.factor !== undefined
      ? {
          modelId: extra.factorModel ?? file.model ?? model,
          factor: file.factor,
          ...(extra.sizingFactor !== undefined ? { sizingFactor: extra.sizingFactor } : {}),
          ...(extra.nearBudgetFactor !== undefined ? { nearBudgetFactor: extra.nearBudgetFactor } : {}),
        }
      : null;
  rt.learning = { readUntil: extra.readUntil ?? 0, learned: extra.learned ?? [] };
  rt.healthNotes = [...rt.healthNotes, ...((extra.health ?? []) as HealthNote[])].slice(0, healthNotesKept);
  rt.usage = extra.usage ?? emptyUsage;
  rt.answerRooms = { ...(extra.answerRooms ?? {}) };
  rt.untrusted = extra.untrusted ?? false;
  rt.origin = extra.origin ?? "person";
  // A problem stands only while its person's message is still the last one in the log.
  const standing = (extra.problem ?? null) as ChatRuntime["problem"];
  rt.problem = standing !== null && rt.log.at(-1)?.seq === standing.seq ? standing : null;
  return null;
}

/** The engine's fields as the transcript file keeps them. */
export function engineFields(rt: ChatRuntime): EngineFileFields {
  return {
    ...(rt.factor ? { factorModel: rt.factor.modelId } : {}),
    ...(rt.factor?.sizingFactor !== undefined ? { sizingFactor: rt.factor.sizingFactor } : {}),
    ...(rt.factor?.nearBudgetFactor !== undefined ? { nearBudgetFactor: rt.factor.nearBudgetFactor } : {}),
    fold: rt.fold,
    readUntil: rt.learning.readUntil,
    learned: rt.learning.learned,
    health: rt.healthNotes,
    usage: rt.usage,
    answerRooms: rt.answerRooms,
    untrusted: rt.untrusted,
    origin: rt.origin,
    problem: rt.problem,
  };
}

/** Messages appended to the active branch (a turn's opening message, its answer): its log, tree and leaf grow. */
export function appendToBranch(rt: ChatRuntime, messages: readonly ChatMessage[]): void {
  if (messages.length === 0) return;
  rt.log.push(...messages);
  rt.tree = growTree(rt.tree, messages);
  rt.leaf = (messages.at(-1) as ChatMessage).seq;
}

/** How many earlier folds a branch keeps; a branch forking before the oldest reads its own history. */
export const earlierFoldsKept = 8;

/** A fold replaced by a newer one on the active branch: kept, for branches that fork between the two. */
export function keepEarlierFold(rt: ChatRuntime): void {
  if (rt.summary === null) return;
  const made = rt.foldedAt === null ? {} : { foldedAt: rt.foldedAt };
  rt.earlier = [...rt.earlier, { summary: rt.summary, fold: rt.fold, ...made }].slice(-earlierFoldsKept);
}

/** The active branch's fold and learning, as another branch keeps them while it is not active. */
export function foldOfActiveBranch(rt: ChatRuntime, keptSeqs: readonly number[]): BranchFold {
  return {
    ...(rt.summary ? { summary: rt.summary } : {}),
    seqs: keptSeqs,
    ...(rt.earlier.length > 0 ? { earlier: rt.earlier } : {}),
    ...(rt.foldedAt === null ? {} : { foldedAt: rt.foldedAt }),
    fold: rt.fold,
    readUntil: rt.learning.readUntil,
    learned: rt.learning.learned,
  };
}

const branchEngineFieldsSchema = engineFieldsSchema.pick({ fold: true, readUntil: true, learned: true });

/**
 * Takes the fold the branch read reads from (see `branchFoldOf`) into the chat, once the transcript's own fields are
 * in: the transcript's own fold when it is that branch's; else the fold the branch was left with, or one it shares,
 * or none (its own history from the root). What was learned carries over only below where the branch parts from
 * the one it was learned on: a seq the learner read on another branch is no word of this one.
 */
export function applyBranchFold(rt: ChatRuntime, fold: FoldOfBranch | null, recordedLeaf: number): void {
  if (fold?.kind === "active") return;
  const stored = branchEngineFieldsSchema.safeParse(fold?.stored ?? {});
  const fields = stored.success ? stored.data : {};
  rt.summary = fold?.summary ?? null;
  rt.earlier = [...(fold?.earlier ?? [])];
  rt.foldedAt = fold?.foldedAt ?? null;
  const firstKeptSeq = fold?.firstKeptSeq ?? 0;
  const learnedOn = fold?.leaf ?? recordedLeaf;
  rt.fold =
    fold?.kind === "left" && fields.fold
      ? fields.fold
      : {
          firstKeptSeq,
          textLimit: sharedTextLimit(rt, fold, fields.fold ?? null, forkPointOf(rt.tree, learnedOn, rt.leaf)),
        };
  const learning = fold?.branch ? branchEngineFieldsSchema.safeParse(fold.branch) : null;
  const readUntil = learning ? (learning.data?.readUntil ?? 0) : rt.learning.readUntil;
  const learned = learning ? (learning.data?.learned ?? []) : rt.learning.learned;
  const parted = fold?.kind === "left" ? Number.POSITIVE_INFINITY : forkPointOf(rt.tree, learnedOn, rt.leaf) + 1;
  rt.learning = { readUntil: Math.min(readUntil, parted), learned };
}

/**
 * The limit a branch that takes up another's history holds a turn of it to, as a chat of that branch alone would:
 * the limit standing with the fold it shares (`stored`, or the transcript's own for the active branch's fold), or
 * with none shared, the limit every chat's first turn is held to (the one recorded, while the chat has not folded).
 * Only a limit on a turn the branch still keeps and shares (at or before `forkPoint`) stands; else null, and the
 * branch's next turn sets its own.
 */
function sharedTextLimit(
  rt: ChatRuntime,
  fold: FoldOfBranch | null,
  stored: FoldState | null,
  forkPoint: number,
): TextLimit | null {
  const firstKeptSeq = fold?.firstKeptSeq ?? 0;
  const root = rt.log[0]?.seq;
  let limit: TextLimit | null;
  if (fold !== null) limit = (stored ?? (fold.stored === null ? rt.fold : null))?.textLimit ?? null;
  else if (root === undefined) limit = null;
  else limit = rt.fold.textLimit?.turnSeq === root ? rt.fold.textLimit : { turnSeq: root, maxChars: heldByRoomOnly };
  if (limit === null) return null;
  const shared =
    limit.turnSeq >= firstKeptSeq && limit.turnSeq <= forkPoint && isOnPath(rt.tree, rt.leaf, limit.turnSeq);
  return shared ? limit : null;
}

/** What is kept (sent word for word or shortened) after the fold state: the log from `firstKeptSeq`. */
export function keptFromLog(rt: ChatRuntime): ChatMessage[] {
  return rt.log.filter((message) => message.seq >= rt.fold.firstKeptSeq);
}
