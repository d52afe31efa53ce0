import {
  assertSafeChatId,
  ChatLogCorruptError,
  TranscriptCorruptError,
  TranscriptFieldsInvalidError,
  TurnSequenceError,
  tornReason,
} from "../errors.js";
import { type OpenedTurn, openTurn } from "../kit/turn-open.js";
import type { Turn } from "../kit/turn-runner.js";
import type { ChatMessage } from "../messages.js";
import { branchFoldOf, recordedLeafOf } from "../transcript/branch-folds.js";
import { isOnPath, pathRanges } from "../transcript/branch-tree.js";
import type { ChatReading, LogPageRequest } from "../transcript/chat-store.js";
import { buildTranscriptFile, keptSeqs, type TranscriptFile } from "../transcript/transcript-file.js";
import {
  appendToBranch,
  applyBranchFold,
  applyTranscript,
  type ChatRuntime,
  emptyChatRuntime,
  engineFields,
  engineFieldsProblem,
  foldOfActiveBranch,
  healthNotesKept,
} from "./chat-state.js";
import type { EngineParts } from "./engine-parts.js";

/** The same message of an append-only log, read twice: the copy already held (its estimates cached), if any. */
function sameMessage(held: ChatMessage | undefined, read: ChatMessage): ChatMessage | undefined {
  return held && held.seq === read.seq && held.role === read.role && held.createdAt === read.createdAt
    ? held
    : undefined;
}

/** A page of the log read with the chat (what a person scrolls through). */
export interface LogPage {
  readonly messages: ChatMessage[];
  /** Whether the log holds messages older than the page's first. */
  readonly hasOlder: boolean;
}

/** Which branch to read: the active one (neither), the branch through a seq, or the one ending exactly at a seq. */
export interface BranchChoice {
  readonly branch?: number;
  readonly leaf?: number;
}

/** A chat as read from the store, and the page of its log asked for (null when none was). */
export interface LoadedChat {
  readonly rt: ChatRuntime;
  readonly page: LogPage | null;
}

/** Reads the chat once: a log torn by a crash or with a seq written twice is repaired once, said in a note, and read again. */
async function readRepaired(
  parts: EngineParts,
  rt: ChatRuntime,
  read: () => Promise<ChatReading>,
): Promise<ChatReading> {
  try {
    return await read();
  } catch (error) {
    if (!ChatLogCorruptError.isInstance(error) || !error.repaired) throw error;
    // Its whole copy was kept aside.
    const what = error.reason === tornReason ? "was cut off by a crash" : `was repaired (${error.reason})`;
    parts.addNote(rt, "log-repaired", `The chat's log ${what}; a copy was kept at ${error.keptAt}.`);
    return await read();
  }
}

/**
 * Reads a chat from the store as a turn needs it: its transcript and the log's kept part (never the whole log,
 * unless there is no transcript), and the page asked for. A chat read again (`previous`) keeps its estimates.
 */
export async function loadChatRuntime(
  parts: EngineParts,
  chatId: string,
  previous?: ChatRuntime,
  page?: LogPageRequest,
  choice: BranchChoice = {},
): Promise<LoadedChat> {
  const { store } = parts;
  // A chat read again keeps its estimates: the log only grows, so its old messages are still its messages.
  const rt = emptyChatRuntime(chatId, previous?.cache);
  // A bad engine field makes the file corrupt: the store moves it aside as it does an unreadable one.
  const options = { check: engineFieldsProblem, ...(page ? { page } : {}), ...choice };
  let reading: ChatReading;
  try {
    reading = await readRepaired(parts, rt, () => store.readChat(chatId, options));
  } catch (error) {
    if (!TranscriptCorruptError.isInstance(error)) throw error;
    // The unreadable file was kept aside; the chat goes on from its log, without the summary.
    parts.addNote(
      rt,
      "summary-failed",
      `The chat's transcript could not be read (${error.reason}); it was kept at ${error.keptAt}.`,
    );
    reading = await readRepaired(parts, rt, () => store.readChat(chatId, options));
  }
  rt.log = reading.kept;
  rt.tree = reading.tree;
  rt.leaf = reading.leaf;
  const file = reading.transcript;
  const unusable = file ? applyTranscript(rt, file, parts.model(), reading.nextSeq) : null;
  if (file && unusable === null) takeBranchFold(rt, file);
  if (unusable !== null) {
    // The engine's own fields are bad: the file is not used (its summary neither); the next save replaces it.
    const error = new TranscriptFieldsInvalidError(chatId, unusable);
    parts.addNote(
      rt,
      "summary-failed",
      `The chat's transcript could not be used (${error.reason}); the chat goes on from its log.`,
    );
    const path = pathRanges(rt.tree, rt.leaf);
    rt.log = (await store.readLog(chatId)).filter((message) =>
      path.some((range) => message.seq >= range.from && message.seq < range.to),
    );
  }
  // The fold state may start before what the transcript keeps (a transcript written by another writer): read that too.
  const logStart = rt.log[0]?.seq ?? reading.nextSeq;
  if (rt.fold.firstKeptSeq < logStart)
    rt.log = [...(await logBetween(parts, rt, rt.fold.firstKeptSeq, logStart)), ...rt.log];
  if (previous && previous.log.length > 0) {
    const held = new Map(previous.log.map((message) => [message.seq, message]));
    rt.log = rt.log.map((message) => sameMessage(held.get(message.seq), message) ?? message);
  }
  if (previous) {
    // Notes not saved yet (a repair said at the last read) stay.
    const known = new Set(rt.healthNotes.map((note) => note.id));
    const unsaved = previous.healthNotes.filter((note) => !known.has(note.id));
    rt.healthNotes = [...unsaved, ...rt.healthNotes].sort((a, b) => b.at - a.at).slice(0, healthNotesKept);
  }
  return { rt, page: page ? { messages: reading.page, hasOlder: reading.hasOlder } : null };
}

/**
 * The branch's fold (the transcript's own fields already in): when the transcript's fold is another branch's, that
 * fold is kept with its branch, and this branch takes its own (see `branchFoldOf`).
 */
function takeBranchFold(rt: ChatRuntime, file: TranscriptFile): void {
  const { tree } = rt;
  rt.earlier = [...(file.branches?.earlier ?? [])];
  rt.foldedAt = file.branches?.foldedAt ?? null;
  rt.branchFolds = { ...file.branches?.folds };
  const fold = branchFoldOf(file, tree, rt.leaf);
  if (fold?.kind === "active") return;
  const recorded = recordedLeafOf(file, tree.nextSeq);
  if (recorded >= 0 && recorded < tree.nextSeq && !(String(recorded) in rt.branchFolds)) {
    rt.branchFolds[String(recorded)] = foldOfActiveBranch(rt, keptSeqs(file, tree.nextSeq) ?? []);
  }
  if (fold?.kind === "left") delete rt.branchFolds[String(fold.leaf)];
  applyBranchFold(rt, fold, recorded);
}

/** The active branch's messages of seqs `from` to `to` (excluded), read from the store as a page of that branch. */
export async function logBetween(
  parts: EngineParts,
  rt: ChatRuntime,
  from: number,
  to: number,
): Promise<ChatMessage[]> {
  if (from >= to || rt.leaf < 0) return [];
  const reading = await parts.store.readChat(rt.chatId, {
    kept: false,
    leaf: rt.leaf,
    page: { before: to, limit: to - from },
  });
  return reading.page.filter((message) => message.seq >= from);
}

/** Writes the chat's transcript: `kept` and the engine's own fields. */
export async function saveTranscript(parts: EngineParts, rt: ChatRuntime, kept: readonly ChatMessage[]): Promise<void> {
  const file = transcriptFileOf(parts, rt, kept);
  await parts.store.writeTranscript(rt.chatId, file);
  rt.file = file;
}

/**
 * Whether a turn's writes go in one transaction: its answer, and the transcript with what the turn changed
 * (a fold's summary), together. A fold in such a turn leaves its transcript to be written with the answer.
 */
export function savesTurnsWhole(parts: EngineParts): boolean {
  return parts.store.writeTurn !== undefined;
}

/**
 * Stores a turn's answer: with the transcript as the turn ends it (`kept`, the answer last; the chat's usage and
 * problem after the turn, `ending`) in one transaction when the store can, else appended to the log, the
 * transcript being written as the turn ends. Returns whether the transcript was written. Throws, storing nothing,
 * on failure.
 */
export async function storeAnswer(
  parts: EngineParts,
  rt: ChatRuntime,
  answer: ChatMessage,
  kept: readonly ChatMessage[],
  ending: Pick<ChatRuntime, "usage" | "problem">,
): Promise<boolean> {
  if (!parts.store.writeTurn) {
    await parts.store.appendLog(rt.chatId, [answer]);
    appendToBranch(rt, [answer]);
    return false;
  }
  const grown = { ...rt, ...ending, log: [...rt.log] };
  appendToBranch(grown, [answer]);
  const file = transcriptFileOf(parts, grown, kept);
  await parts.store.writeTurn(rt.chatId, [answer], file);
  appendToBranch(rt, [answer]);
  rt.file = file;
  return true;
}

function transcriptFileOf(parts: EngineParts, rt: ChatRuntime, kept: readonly ChatMessage[]): TranscriptFile {
  const branches = {
    forks: rt.tree.forks,
    through: rt.tree.nextSeq,
    activeLeaf: rt.leaf,
    ...(rt.foldedAt === null ? {} : { foldedAt: rt.foldedAt }),
    ...(rt.earlier.length > 0 ? { earlier: rt.earlier } : {}),
    ...(Object.keys(rt.branchFolds).length > 0 ? { folds: rt.branchFolds } : {}),
  };
  const fields = { ...engineFields(rt), branches };
  // The engine's own fields ride on `previous`, which buildTranscriptFile carries over; the summary only when it is
  // still this branch's (a branch that reads its own history has none, whatever the file held for another).
  const { summary: _held, ...carried } = { ...rt.file, ...fields } as TranscriptFile;
  return buildTranscriptFile({
    id: rt.chatId,
    kept,
    previous: (rt.summary ? { ...rt.file, ...fields } : carried) as TranscriptFile,
    model: parts.model(),
    updatedAt: parts.now(),
    ...(rt.summary ? { summary: rt.summary } : {}),
    ...(rt.factor ? { factor: rt.factor.factor } : {}),
  });
}

/** The chats this engine has read, each loaded once and read again when another engine may have written. */
export interface ChatCache {
  /** The chat as held, loading it the first time; a failed load is tried again next time, not cached. */
  get(chatId: string): Promise<ChatRuntime>;
  /**
   * Reads the chat from the store again (another engine over it, another tab, may have written), with a page of
   * its log when asked; on another branch when `choice` names one (it is then the chat as held).
   */
  reload(chatId: string, page?: LogPageRequest, choice?: BranchChoice): Promise<LoadedChat>;
  /** Changes whenever the chat is read again: work begun on an older reading compares it to know. */
  reading(chatId: string): Promise<ChatRuntime> | undefined;
}

export function createChatCache(parts: EngineParts): ChatCache {
  const chats = new Map<string, Promise<ChatRuntime>>();
  function track(chatId: string, loading: Promise<LoadedChat>): Promise<LoadedChat> {
    const loaded = loading.then((chat) => chat.rt);
    chats.set(chatId, loaded);
    loaded.catch(() => {
      if (chats.get(chatId) === loaded) chats.delete(chatId);
    });
    return loading;
  }
  return {
    get(chatId) {
      assertSafeChatId(chatId);
      return chats.get(chatId) ?? track(chatId, loadChatRuntime(parts, chatId)).then((chat) => chat.rt);
    },
    async reload(chatId, page, choice) {
      const previous = await chats.get(chatId)?.catch(() => undefined);
      return track(chatId, loadChatRuntime(parts, chatId, previous, page, choice));
    },
    reading(chatId) {
      return chats.get(chatId);
    },
  };
}

/**
 * Accepts the turn against the chat's log and adds its opening message. A seq that does not follow the log
 * (here or in the store) may mean another engine over the same store wrote since this one read: read the
 * chat again and check once more, so that the `TurnSequenceError` that stands names the real next seq.
 *
 * On the tree: a message whose `parent` is not the active leaf (an edit) starts a branch, and a retry of a
 * person's message before the active leaf (regenerate) answers it on a branch of its own; either way the chat is
 * read again on that branch, with its own fold, and the branch left keeps its fold.
 */
export async function acceptTurn(
  parts: EngineParts,
  chats: ChatCache,
  input: Turn["input"],
): Promise<{ rt: ChatRuntime; opened: OpenedTurn }> {
  let rt = await chats.get(input.chatId);
  for (let attempt = 0; ; attempt += 1) {
    try {
      if (input.retry === true && input.seq !== rt.leaf) rt = await branchForRetry(chats, rt, input);
      const opened = openTurn(input, rt.log, parts.now, { nextSeq: rt.tree.nextSeq, activeLeaf: rt.leaf });
      if (!opened.retrying) {
        await parts.store.appendLog(input.chatId, [opened.message]);
        const { seq, parent = seq - 1 } = opened.message;
        // A new branch: the store reads it (its forks, and the leaf appended last), with the fold it reads from.
        if (parent === rt.leaf) appendToBranch(rt, [opened.message]);
        else rt = (await chats.reload(input.chatId)).rt;
      }
      if (input.untrusted) rt.untrusted = true;
      if (input.origin) rt.origin = input.origin;
      return { rt, opened };
    } catch (error) {
      if (!TurnSequenceError.isInstance(error) || attempt > 0) throw error;
      rt = (await chats.reload(input.chatId)).rt;
    }
  }
}

/**
 * A regenerate: the chat as held on the branch ending at the person's message `input.seq`, which must lie on the
 * active branch; else a `TurnSequenceError`, the chat as it was.
 */
async function branchForRetry(chats: ChatCache, rt: ChatRuntime, input: Turn["input"]): Promise<ChatRuntime> {
  const refuse = () => new TurnSequenceError({ chatId: input.chatId, expectedSeq: rt.leaf, actualSeq: input.seq });
  if (!Number.isSafeInteger(input.seq) || input.seq < 0 || input.seq >= rt.tree.nextSeq) throw refuse();
  if (!isOnPath(rt.tree, rt.leaf, input.seq)) throw refuse();
  const branch = (await chats.reload(input.chatId, undefined, { leaf: input.seq })).rt;
  if (branch.log.at(-1)?.role === "user") return branch;
  await chats.reload(input.chatId);
  throw refuse();
}
