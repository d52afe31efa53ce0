import { assertSafeChatId } from "../errors.js";
import type { ChatMessage } from "../messages.js";
import { createChatQueue, utf8ByteLength } from "./chat-queue.js";
import type { ChatStore } from "./chat-store.js";
import { TranscriptCorruptError } from "./errors.js";
import { checkLogMessages, checkLogSequence, decodeTranscript, encodeTranscript } from "./transcript-file.js";

/**
 * A {@link ChatStore} in memory, for tests, stories and `dev:mock`. It checks and orders everything as the
 * durable stores do, and keeps transcripts as their JSON text, so what it returns is always a fresh copy and
 * `transcriptBytes` is the size a file would have.
 */
export function createMemoryChatStore(): ChatStore {
  const logs = new Map<string, ChatMessage[]>();
  const transcripts = new Map<string, { readonly json: string; readonly bytes: number }>();
  const queue = createChatQueue();

  return {
    async readLog(chatId) {
      assertSafeChatId(chatId);
      return queue.run(chatId, async () => structuredClone(logs.get(chatId) ?? []));
    },

    async appendLog(chatId, messages) {
      assertSafeChatId(chatId);
      const checked = checkLogMessages(chatId, messages);
      return queue.run(chatId, async () => {
        const log = logs.get(chatId) ?? [];
        checkLogSequence(chatId, log.length, checked);
        logs.set(chatId, [...log, ...checked]);
      });
    },

    async readTranscript(chatId) {
      assertSafeChatId(chatId);
      return queue.run(chatId, async () => {
        const stored = transcripts.get(chatId);
        if (stored === undefined) return null;
        const decoded = decodeTranscript(chatId, stored.json);
        // Unreachable unless the text was written past encodeTranscript; kept so the contract has no hole.
        if (!decoded.ok) {
          const location = `memory:transcripts/${chatId}`;
          throw new TranscriptCorruptError({ chatId, location, keptAt: location, reason: decoded.reason });
        }
        return decoded.file;
      });
    },

    async writeTranscript(chatId, file) {
      assertSafeChatId(chatId);
      const json = encodeTranscript(chatId, file);
      return queue.run(chatId, async () => {
        transcripts.set(chatId, { json, bytes: utf8ByteLength(json) });
      });
    },

    async transcriptBytes(chatId) {
      assertSafeChatId(chatId);
      return queue.run(chatId, async () => transcripts.get(chatId)?.bytes ?? 0);
    },
  };
}
