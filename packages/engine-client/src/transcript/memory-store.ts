import { utf8Length } from "../context/estimate.js";
import { assertSafeChatId, TranscriptCorruptError } from "../errors.js";
import { createChatQueue } from "../kit/chat-queue.js";
import type { ChatMessage } from "../messages.js";
import { checkedTitle, firstWordsTitle, newestFirst, pageOf } from "./chat-directory.js";
import { readChatWith } from "./chat-reading.js";
import type { ChatStore } from "./chat-store.js";
import { checkLogMessages, checkLogSequence, encodeTranscript, type TranscriptFile } from "./transcript-file.js";

/**
 * A fresh copy of what the store holds: JSON-like data (checked messages) copied by hand, several times faster
 * than `structuredClone` on a long log (a 10,000-message read is on the first turn of a chat that arrives whole).
 * A value of another kind (a field the schema lets through unchecked) is cloned as `structuredClone` does.
 */
function copyStored<T>(value: T): T {
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) return value.map(copyStored) as T;
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return structuredClone(value);
  const copy: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) copy[key] = copyStored(field);
  return copy as T;
}

/**
 * A {@link ChatStore} in memory, for tests, stories and `dev:mock`. It checks and orders everything as the
 * durable stores do, and keeps transcripts as their JSON text, so what it returns is always a fresh copy and
 * `transcriptBytes` is the size a file would have.
 */
export function createMemoryChatStore(): ChatStore {
  const logs = new Map<string, ChatMessage[]>();
  const transcripts = new Map<string, { readonly json: string; readonly bytes: number }>();
  /** When each chat's log last grew (milliseconds since the epoch), and the titles people gave. */
  const updated = new Map<string, number>();
  const titles = new Map<string, string>();
  /** Transcripts a reader's check found unusable, moved aside as the durable stores move them. */
  const corrupt: string[] = [];
  const queue = createChatQueue();

  /** The transcript as stored, or null; one the reader's check refuses is moved aside. */
  function transcriptOf(chatId: string, check: ((file: TranscriptFile) => string | null) | undefined) {
    const stored = transcripts.get(chatId);
    if (stored === undefined) return null;
    // Only encodeTranscript's checked text is ever stored here: only the reader's own check can fail.
    const file = JSON.parse(stored.json) as TranscriptFile;
    const unusable = check?.(file) ?? null;
    if (unusable === null) return file;
    corrupt.push(stored.json);
    transcripts.delete(chatId);
    throw new TranscriptCorruptError({
      chatId,
      location: `memory://transcripts/${chatId}`,
      keptAt: `memory://corrupt/${corrupt.length - 1}`,
      reason: unusable,
    });
  }

  return {
    async readLog(chatId) {
      assertSafeChatId(chatId);
      return queue.run(chatId, async () => copyStored(logs.get(chatId) ?? []));
    },

    async appendLog(chatId, messages) {
      assertSafeChatId(chatId);
      const checked = checkLogMessages(chatId, messages);
      return queue.run(chatId, async () => {
        const log = logs.get(chatId) ?? [];
        checkLogSequence(chatId, log.length, checked);
        if (checked.length === 0) return;
        logs.set(chatId, [...log, ...checked]);
        updated.set(chatId, Date.now());
      });
    },

    async readChat(chatId, options) {
      assertSafeChatId(chatId);
      return queue.run(chatId, () =>
        readChatWith(
          {
            chatId,
            async head(check) {
              const nextSeq = logs.get(chatId)?.length ?? 0;
              return { nextSeq, transcript: transcriptOf(chatId, check && ((file) => check(file, nextSeq))) };
            },
            async range(from, to) {
              return copyStored((logs.get(chatId) ?? []).slice(from, to));
            },
          },
          options,
        ),
      );
    },

    async readTranscript(chatId, options) {
      assertSafeChatId(chatId);
      return queue.run(chatId, async () => transcriptOf(chatId, options?.check));
    },

    async writeTranscript(chatId, file) {
      assertSafeChatId(chatId);
      const json = encodeTranscript(chatId, file);
      return queue.run(chatId, async () => {
        transcripts.set(chatId, { json, bytes: utf8Length(json) });
      });
    },

    async transcriptBytes(chatId) {
      assertSafeChatId(chatId);
      return queue.run(chatId, async () => transcripts.get(chatId)?.bytes ?? 0);
    },

    directory: {
      async list(page) {
        // Listed: a chat holding a message (as on every store).
        const sorted = [...logs.keys()].map((id) => ({ id, updated: updated.get(id) ?? 0 })).sort(newestFirst);
        return pageOf(sorted, page, (id) => titles.get(id) ?? firstWordsTitle(logs.get(id)?.[0]) ?? id);
      },
      async rename(chatId, title) {
        assertSafeChatId(chatId);
        const kept = checkedTitle(chatId, title);
        return queue.run(chatId, async () => {
          if (!logs.has(chatId) && !transcripts.has(chatId)) return false;
          titles.set(chatId, kept);
          return true;
        });
      },
      async remove(chatId) {
        assertSafeChatId(chatId);
        return queue.run(chatId, async () => {
          const existed = logs.has(chatId) || transcripts.has(chatId);
          logs.delete(chatId);
          transcripts.delete(chatId);
          updated.delete(chatId);
          titles.delete(chatId);
          return existed;
        });
      },
    },
  };
}
