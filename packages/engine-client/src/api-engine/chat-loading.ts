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
import type { ChatReading, LogPageRequest } from "../transcript/chat-store.js";
import { buildTranscriptFile, type TranscriptFile } from "../transcript/transcript-file.js";
import {
  applyTranscript,
  type ChatRuntime,
  emptyChatRuntime,
  engineFields,
  engineFieldsProblem,
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
): Promise<LoadedChat> {
  const { store } = parts;
  // A chat read again keeps its estimates: the log only grows, so its old messages are still its messages.
  const rt = emptyChatRuntime(chatId, previous?.cache);
  // A bad engine field makes the file corrupt: the store moves it aside as it does an unreadable one.
  const options = { check: engineFieldsProblem, ...(page ? { page } : {}) };
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
  const file = reading.transcript;
  const unusable = file ? applyTranscript(rt, file, parts.model(), reading.nextSeq) : null;
  if (unusable !== null) {
    // The engine's own fields are bad: the file is not used (its summary neither); the next save replaces it.
    const error = new TranscriptFieldsInvalidError(chatId, unusable);
    parts.addNote(
      rt,
      "summary-failed",
      `The chat's transcript could not be used (${error.reason}); the chat goes on from its log.`,
    );
    rt.log = await store.readLog(chatId);
  }
  // The fold state may start before what the transcript keeps (a transcript written by another writer): read that too.
  const logStart = rt.log[0]?.seq ?? reading.nextSeq;
  if (rt.fold.firstKeptSeq < logStart)
    rt.log = [...(await logBetween(parts, chatId, rt.fold.firstKeptSeq, logStart)), ...rt.log];
  if (previous && previous.log.length > 0) {
    const heldFrom = (previous.log[0] as ChatMessage).seq;
    rt.log = rt.log.map((message) => sameMessage(previous.log[message.seq - heldFrom], message) ?? message);
  }
  if (previous) {
    // Notes not saved yet (a repair said at the last read) stay.
    const known = new Set(rt.healthNotes.map((note) => note.id));
    const unsaved = previous.healthNotes.filter((note) => !known.has(note.id));
    rt.healthNotes = [...unsaved, ...rt.healthNotes].sort((a, b) => b.at - a.at).slice(0, healthNotesKept);
  }
  return { rt, page: page ? { messages: reading.page, hasOlder: reading.hasOlder } : null };
}

/** The log's messages of seqs `from` to `to` (excluded), read from the store as a page. */
export async function logBetween(parts: EngineParts, chatId: string, from: number, to: number): Promise<ChatMessage[]> {
  if (from >= to) return [];
  const reading = await parts.store.readChat(chatId, { kept: false, page: { before: to, limit: to - from } });
  return reading.page;
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
    return false;
  }
  const file = transcriptFileOf(parts, { ...rt, ...ending }, kept);
  await parts.store.writeTurn(rt.chatId, [answer], file);
  rt.file = file;
  return true;
}

function transcriptFileOf(parts: EngineParts, rt: ChatRuntime, kept: readonly ChatMessage[]): TranscriptFile {
  const fields = engineFields(rt);
  // The engine's own fields ride on `previous`, which buildTranscriptFile carries over.
  return buildTranscriptFile({
    id: rt.chatId,
    kept,
    previous: { ...rt.file, ...fields } as TranscriptFile,
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
   * Reads the chat from the store again (another engine over the same store, another tab, may have written),
   * with a page of its log when asked.
   */
  reload(chatId: string, page?: LogPageRequest): Promise<LoadedChat>;
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
    async reload(chatId, page) {
      const previous = await chats.get(chatId)?.catch(() => undefined);
      return track(chatId, loadChatRuntime(parts, chatId, previous, page));
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
 */
export async function acceptTurn(
  parts: EngineParts,
  chats: ChatCache,
  input: Turn["input"],
): Promise<{ rt: ChatRuntime; opened: OpenedTurn }> {
  let rt = await chats.get(input.chatId);
  for (let attempt = 0; ; attempt += 1) {
    try {
      const opened = openTurn(input, rt.log, parts.now);
      if (!opened.retrying) {
        await parts.store.appendLog(input.chatId, [opened.message]);
        rt.log.push(opened.message);
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
