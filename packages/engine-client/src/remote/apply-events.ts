import type { ChatSnapshot } from "../engine.js";
import type { EngineEvent } from "../events.js";
import { addUsage, type ChatMessage } from "../messages.js";

function upsert(messages: readonly ChatMessage[], message: ChatMessage): ChatMessage[] {
  const kept = messages.filter((existing) => existing.seq !== message.seq);
  return [...kept, message].sort((a, b) => a.seq - b.seq);
}

/** A snapshot with events folded in that it does not reflect yet (a turn read while the snapshot loaded). */
export function applyEvents(snapshot: ChatSnapshot, events: readonly EngineEvent[]): ChatSnapshot {
  let chat = snapshot;
  for (const event of events) {
    switch (event.type) {
      case "turn-start":
        chat = { ...chat, messages: upsert(chat.messages, event.message), problem: null };
        break;
      case "message-end":
        chat = { ...chat, messages: upsert(chat.messages, event.message) };
        break;
      case "compacted": {
        const { type: _type, chatId: _chatId, ...summary } = event;
        chat = { ...chat, summary };
        break;
      }
      case "health-note":
        if (!chat.healthNotes.some((note) => note.id === event.note.id)) {
          chat = { ...chat, healthNotes: [event.note, ...chat.healthNotes] };
        }
        break;
      case "turn-problem":
        chat = { ...chat, problem: { seq: event.seq, problem: event.problem } };
        break;
      case "turn-end":
        chat = { ...chat, usage: addUsage(chat.usage, event.usage) };
        break;
      default:
        break;
    }
  }
  return chat;
}
