import { z } from "zod";
import { InvalidChatRecordError, TurnSequenceError } from "../errors.js";
import type { CompactionReason, SummaryState } from "../events.js";
import type { ChatMessage } from "../messages.js";
import type { ForkEntry } from "./branch-tree.js";

/** One kept message as the transcript file holds it: a log message without its `seq` (that is in `seqs`). */
export type TranscriptMessage = Omit<ChatMessage, "seq">;

/**
 * The engine's transcript of one chat, stored as `api-sessions/<id>.json`: what is sent to the model, not what
 * the person sees (that is the log). Still `version: 1`; `summary`, `seqs` and `factor` are additions a
 * reader that predates them ignores. Fields this reader does not know are kept and written back unchanged.
 */
export interface TranscriptFile {
  readonly version: 1;
  /** The chat id; it must equal the id the file is stored under. */
  readonly id: string;
  /** The model the chat talks to. */
  readonly model?: string;
  /** Milliseconds since the epoch. */
  readonly updatedAt?: number;
  /** The kept messages, oldest first, exactly as they are sent (a turn bigger than the budget may be shortened). */
  readonly messages: readonly TranscriptMessage[];
  /** The latest summary of what was folded; absent until the first fold. */
  readonly summary?: SummaryState;
  /**
   * The log `seq` of each kept message: `seqs[i]` belongs to `messages[i]`, strictly increasing. Absent in a
   * file written before it (or by a writer that dropped it): see {@link keptSeqs}.
   */
  readonly seqs?: readonly number[];
  /** The chat's correction of the token estimate, from 1; it only ever rises. */
  readonly factor?: number;
  /**
   * The log as a tree: its forks, the active leaf, and the other branches' folds. Absent in a file written before
   * branches (or never branched): the log is one branch, each message's parent the one before it.
   */
  readonly branches?: TranscriptBranches;
  /** Fields of later versions of the engine (`readUntil`, `learned`, ...), passed through unchanged. */
  readonly [field: string]: unknown;
}

/**
 * One earlier fold of a branch: its summary (whose `firstKeptSeq` is the fold's point) and the engine's own fields
 * of that moment (its fold state), passed through unchanged. A branch forking after that point but before a later
 * one starts from it.
 */
export interface EarlierFold {
  readonly summary: SummaryState;
  /** The branch's last message when the fold was made (see {@link TranscriptBranches.foldedAt}). */
  readonly foldedAt?: number;
  readonly [field: string]: unknown;
}

/**
 * The fold of a branch that is not the active one, as it was when the branch was left: its summary and kept seqs
 * (the active branch's are the file's own `summary` and `seqs`). Fields the engine keeps per branch (its fold
 * state, what it learned from) ride along, passed through unchanged.
 */
export interface BranchFold {
  readonly summary?: SummaryState;
  /** The kept seqs of the branch, strictly increasing, each on its path. */
  readonly seqs: readonly number[];
  /** The branch's earlier folds, oldest first (a few of the latest). */
  readonly earlier?: readonly EarlierFold[];
  /** The branch's last message when its latest fold was made. */
  readonly foldedAt?: number;
  readonly [field: string]: unknown;
}

/**
 * The transcript's record of the log's tree. The tree is described by its forks (the messages whose parent is not
 * `seq - 1`) up to `through`; a reader finds the forks of messages appended since in the log itself (their
 * `parent`), so a crash between appending and writing this loses nothing.
 */
export interface TranscriptBranches {
  /** The forks among seqs below `through`, in seq order. */
  readonly forks: readonly ForkEntry[];
  /** The log's length when this was written. */
  readonly through: number;
  /**
   * The active branch's last message when this was written: what a new turn follows. When the log has grown past
   * `through`, the active leaf is the log's last message instead (a turn, or an older reader, appended after it).
   */
  readonly activeLeaf: number;
  /**
   * The active branch's last message when its latest fold was made. Another branch shares a fold only when its path
   * holds that message: it then folds as a chat of that branch alone would have. Absent: the fold's point.
   */
  readonly foldedAt?: number;
  /** The active branch's earlier folds, oldest first (a few of the latest), for branches forking between them. */
  readonly earlier?: readonly EarlierFold[];
  /** The other branches' folds, keyed by their leaf's seq (in decimal). */
  readonly folds?: Readonly<Record<string, BranchFold>>;
}

const compactionReasons = ["budget", "messages", "bytes", "manual", "too-long"] as const satisfies readonly [
  CompactionReason,
  ...CompactionReason[],
];

const seqSchema = z.number().int().nonnegative();

// Every object is loose: a field added by a later writer (a provider's extra part metadata, say) must survive
// a read and a write by this version, just as the top-level fields do.
const partSchema = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("text"), text: z.string() }),
  z.looseObject({
    type: z.literal("thinking"),
    text: z.string(),
    signature: z.string().optional(),
    redacted: z.boolean().optional(),
  }),
  z.looseObject({ type: z.literal("tool-call"), id: z.string(), name: z.string(), arguments: z.string() }),
  z.looseObject({
    type: z.literal("tool-result"),
    callId: z.string(),
    name: z.string().optional(),
    text: z.string(),
    isError: z.boolean().optional(),
  }),
  z.looseObject({
    type: z.literal("picture"),
    name: z.string(),
    mediaType: z.string(),
    data: z.string().optional(),
    url: z.string().optional(),
  }),
]);

const messageFields = {
  role: z.enum(["user", "assistant", "tool"]),
  parts: z.array(partSchema),
  model: z.string().optional(),
  createdAt: z.number().optional(),
  // A reason this reader does not know is left out, not an unreadable message: a newer writer may add one.
  finishReason: z.enum(["stop", "length", "tool-calls", "aborted", "error"]).optional().catch(undefined),
  continuation: z.boolean().optional().catch(undefined),
  // -1: no parent (an edit of the chat's first message). Checked against the message's own seq below.
  parent: z.number().int().min(-1).optional(),
};

const transcriptMessageSchema = z.looseObject(messageFields);

const logMessageSchema = z
  .looseObject({ seq: seqSchema, ...messageFields })
  .refine((message) => message.parent === undefined || message.parent < message.seq, {
    path: ["parent"],
    message: "is not below the message's seq",
  });

const transcriptSizeSchema = z.looseObject({ messages: seqSchema, tokens: z.number().nonnegative() });

const summarySchema = z.looseObject({
  text: z.string(),
  model: z.string().nullable(),
  firstKeptSeq: seqSchema,
  reason: z.enum(compactionReasons),
  before: transcriptSizeSchema,
  after: transcriptSizeSchema,
  at: z.number(),
});

const foldedAtSchema = z.number().int().min(-1).optional();

const earlierFoldsSchema = z.array(z.looseObject({ summary: summarySchema, foldedAt: foldedAtSchema }));

const branchFoldSchema = z.looseObject({
  summary: summarySchema.optional(),
  seqs: z.array(seqSchema),
  earlier: earlierFoldsSchema.optional(),
  foldedAt: foldedAtSchema,
});

const branchesSchema = z
  .looseObject({
    forks: z.array(
      z.looseObject({
        seq: seqSchema,
        parent: z.number().int().min(-1),
        role: z.enum(["user", "assistant", "tool"]),
      }),
    ),
    through: seqSchema,
    activeLeaf: z.number().int().min(-1),
    foldedAt: foldedAtSchema,
    earlier: earlierFoldsSchema.optional(),
    folds: z.record(z.string().regex(/^\d+$/), branchFoldSchema).optional(),
  })
  .superRefine((branches, context) => {
    branches.forks.forEach((fork, index) => {
      if (fork.parent >= fork.seq || fork.seq >= branches.through || fork.parent === fork.seq - 1) {
        context.addIssue({ code: "custom", path: ["forks", index], message: "is not a fork below `through`" });
      }
    });
  });

const transcriptFileSchema = z
  .looseObject({
    version: z.literal(1),
    id: z.string(),
    model: z.string().optional(),
    updatedAt: z.number().optional(),
    messages: z.array(transcriptMessageSchema),
    summary: summarySchema.optional(),
    seqs: z.array(seqSchema).optional(),
    factor: z.number().min(1).optional(),
    branches: branchesSchema.optional(),
  })
  .superRefine((file, context) => {
    const { seqs } = file;
    if (seqs === undefined) return;
    if (seqs.length !== file.messages.length) {
      context.addIssue({
        code: "custom",
        path: ["seqs"],
        message: `has ${seqs.length} entries for ${file.messages.length} messages`,
      });
      return;
    }
    for (let index = 1; index < seqs.length; index++) {
      if (seqs[index]! <= seqs[index - 1]!) {
        context.addIssue({ code: "custom", path: ["seqs", index], message: "does not increase" });
        return;
      }
    }
  });

/** The outcome of reading stored text as a transcript. */
export type TranscriptDecoding =
  | { readonly ok: true; readonly file: TranscriptFile }
  | { readonly ok: false; readonly reason: string; readonly cause?: unknown };

/** Reads stored text as the transcript of `chatId`, then the reader's own `check` of it; never throws. */
export function decodeTranscript(
  chatId: string,
  text: string,
  check?: (file: TranscriptFile) => string | null,
): TranscriptDecoding {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (cause) {
    return { ok: false, reason: "it is not JSON", cause };
  }
  const result = transcriptFileSchema.safeParse(json);
  if (!result.success) {
    return {
      ok: false,
      reason: `it is not a version-1 transcript: ${describeIssues(result.error)}`,
      cause: result.error,
    };
  }
  if (result.data.id !== chatId) {
    return { ok: false, reason: `it belongs to chat ${JSON.stringify(result.data.id)}` };
  }
  const file: TranscriptFile = result.data;
  let unusable: string | null = null;
  try {
    unusable = check?.(file) ?? null;
  } catch (cause) {
    return { ok: false, reason: "its check failed", cause };
  }
  return unusable === null ? { ok: true, file } : { ok: false, reason: unusable };
}

/**
 * Checks a transcript the way {@link decodeTranscript} will read it back and returns its JSON text.
 * Throws {@link InvalidChatRecordError} instead of producing a file this reader would call corrupt.
 */
export function encodeTranscript(chatId: string, file: TranscriptFile): string {
  if (file.id !== chatId) {
    throw new InvalidChatRecordError({
      chatId,
      record: "transcript",
      reason: `its id is ${JSON.stringify(file.id)}`,
    });
  }
  const result = transcriptFileSchema.safeParse(file);
  if (!result.success) {
    throw new InvalidChatRecordError({
      chatId,
      record: "transcript",
      reason: describeIssues(result.error),
      cause: result.error,
    });
  }
  return JSON.stringify(result.data);
}

/** The outcome of checking one stored log record. */
export type LogMessageDecoding =
  | { readonly ok: true; readonly message: ChatMessage }
  | { readonly ok: false; readonly reason: string; readonly cause?: unknown };

/** Checks a parsed log record that should be the message at `expectedSeq` (any seq when null); never throws. */
export function decodeLogMessage(value: unknown, expectedSeq: number | null): LogMessageDecoding {
  const result = logMessageSchema.safeParse(value);
  if (!result.success) {
    return { ok: false, reason: `it is not a message: ${describeIssues(result.error)}`, cause: result.error };
  }
  if (expectedSeq !== null && result.data.seq !== expectedSeq) {
    return { ok: false, reason: `it carries seq ${result.data.seq} where ${expectedSeq} belongs` };
  }
  const message: ChatMessage = result.data;
  return { ok: true, message };
}

/**
 * Checks messages about to be appended to a log; returns them as they will be stored. Throws
 * {@link InvalidChatRecordError}. Their order is checked by the store, against the log.
 */
export function checkLogMessages(chatId: string, messages: readonly ChatMessage[]): ChatMessage[] {
  return messages.map((message, index) => {
    const result = logMessageSchema.safeParse(message);
    if (!result.success) {
      throw new InvalidChatRecordError({
        chatId,
        record: "log message",
        reason: `message ${index} of the batch: ${describeIssues(result.error)}`,
        cause: result.error,
      });
    }
    const checked: ChatMessage = result.data;
    return checked;
  });
}

/** Throws `TurnSequenceError` unless the messages carry `nextSeq`, `nextSeq + 1`, ... in order. */
export function checkLogSequence(chatId: string, nextSeq: number, messages: readonly ChatMessage[]): void {
  messages.forEach((message, index) => {
    if (message.seq !== nextSeq + index) {
      throw new TurnSequenceError({ chatId, expectedSeq: nextSeq + index, actualSeq: message.seq });
    }
  });
}

function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.length > 0 ? issue.path.join(".") : "(top)"} ${issue.message}`)
    .join("; ");
}

/**
 * The log `seq` of each kept message of a transcript. A file with `seqs` says so itself; a file without them
 * (written before they existed, or by a writer that dropped them) keeps the log's last `messages.length`
 * messages in order, because that is all an older engine ever kept. Null when the file holds more messages
 * than the log (`logLength` messages, seqs 0 to `logLength - 1`), so their places cannot be known.
 */
export function keptSeqs(file: Pick<TranscriptFile, "messages" | "seqs">, logLength: number): readonly number[] | null {
  if (file.seqs !== undefined) return file.seqs;
  const first = logLength - file.messages.length;
  if (first < 0) return null;
  return file.messages.map((_, index) => first + index);
}

/** What {@link buildTranscriptFile} makes a transcript of. */
export interface TranscriptFileInput {
  readonly id: string;
  /** The kept messages, from the log (or shortened copies of them), oldest first. */
  readonly kept: readonly ChatMessage[];
  /** The file this one replaces: its other fields (`summary`, `factor`, unknown ones) are carried over. */
  readonly previous?: TranscriptFile | null;
  readonly model?: string;
  readonly updatedAt?: number;
  readonly summary?: SummaryState;
  readonly factor?: number;
}

/**
 * A transcript file of kept log messages: `messages` without their `seq`, and `seqs` from them. Fields not
 * given come from `previous`, so a summary stays between folds and fields of later versions survive.
 */
export function buildTranscriptFile(input: TranscriptFileInput): TranscriptFile {
  const messages: TranscriptMessage[] = [];
  const seqs: number[] = [];
  for (const { seq, ...message } of input.kept) {
    messages.push(message);
    seqs.push(seq);
  }
  const given: Record<string, unknown> = {};
  if (input.model !== undefined) given.model = input.model;
  if (input.updatedAt !== undefined) given.updatedAt = input.updatedAt;
  if (input.summary !== undefined) given.summary = input.summary;
  if (input.factor !== undefined) given.factor = input.factor;
  return { ...input.previous, ...given, version: 1, id: input.id, messages, seqs };
}

/**
 * Where the kept part of a log of `nextSeq` messages starts: the transcript's first kept seq (see
 * {@link keptSeqs}), else its summary's `firstKeptSeq`; never past the log's last message, so the kept part
 * always holds it. 0 (the whole log) without a transcript, or when its messages' places cannot be known.
 */
export function keptStart(file: Pick<TranscriptFile, "messages" | "seqs" | "summary"> | null, nextSeq: number): number {
  if (file === null) return 0;
  const seqs = keptSeqs(file, nextSeq);
  if (seqs === null) return 0;
  const first = seqs[0] ?? file.summary?.firstKeptSeq ?? nextSeq;
  return Math.max(0, Math.min(first, nextSeq - 1));
}
