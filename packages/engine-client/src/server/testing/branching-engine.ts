// A small engine whose chats are trees, for the protocol's branch tests before (and beside) the real engines:
// each answer is "Answer to <the person's text>" in one delta. In memory, one process.
import type { ChatSnapshot, Engine, LoadChatOptions } from "../../engine.js";
import { ChatBusyError, TurnSequenceError } from "../../errors.js";
import type { EngineEvent, EngineEventOf } from "../../events.js";
import { createFanOut } from "../../kit/fan-out.js";
import { createTurnRunner } from "../../kit/turn-runner.js";
import { type BranchMessage, type ChatMessage, emptyUsage } from "../../messages.js";

interface TreeChat {
  readonly log: ChatMessage[];
  /** The active leaf; null for an empty chat. */
  leaf: number | null;
}

const parentOf = (message: ChatMessage): number => message.parent ?? message.seq - 1;

/** The message, with `parent` only where it is not `seq - 1`. */
function placed(message: Omit<ChatMessage, "parent">, parent: number | null): ChatMessage {
  return parent === null || parent === message.seq - 1 ? message : { ...message, parent };
}

export interface BranchingEngine extends Engine {
  /** The chat's whole log, every branch, in seq order. */
  log(chatId: string): readonly ChatMessage[];
}

export interface BranchingEngineOptions {
  /** Awaited before each answer is written (a test holds a turn running with it). */
  readonly beforeAnswer?: () => Promise<void>;
}

export function createBranchingEngine(options: BranchingEngineOptions = {}): BranchingEngine {
  const chats = new Map<string, TreeChat>();
  const events = createFanOut<EngineEvent>();
  const runner = createTurnRunner({ emit: events.emit });
  const chatOf = (chatId: string): TreeChat => {
    let chat = chats.get(chatId);
    if (!chat) {
      chat = { log: [], leaf: null };
      chats.set(chatId, chat);
    }
    return chat;
  };

  /** The active branch, root first, each message with its versions when it has any. */
  function branch(chat: TreeChat): BranchMessage[] {
    const path: ChatMessage[] = [];
    for (let seq = chat.leaf ?? -1; seq >= 0; seq = parentOf(chat.log[seq] as ChatMessage)) {
      path.unshift(chat.log[seq] as ChatMessage);
    }
    return path.map((message) => {
      const siblings = chat.log
        .filter((other) => parentOf(other) === parentOf(message) && other.role === message.role)
        .map((other) => other.seq);
      return siblings.length > 1 ? { ...message, siblings } : message;
    });
  }

  function snapshot(chatId: string, page?: LoadChatOptions["page"]): ChatSnapshot {
    const chat = chatOf(chatId);
    const whole = branch(chat);
    const older = whole.filter((message) => message.seq < (page?.before ?? Number.POSITIVE_INFINITY));
    const messages = page ? older.slice(Math.max(0, older.length - page.limit)) : whole;
    return {
      chatId,
      messages,
      nextSeq: chat.log.length,
      ...(chat.leaf !== null ? { activeLeaf: chat.leaf } : {}),
      ...(page ? { hasOlder: older.length > messages.length } : {}),
      summary: null,
      healthNotes: [],
      model: { id: "branching", displayName: "Branching (test)", ready: true, local: true },
      contextUsage: null,
      problem: null,
      usage: emptyUsage,
    };
  }

  const stale = (chatId: string, chat: TreeChat, actualSeq: number) =>
    new TurnSequenceError({ chatId, expectedSeq: chat.log.length, actualSeq });

  return {
    specificationVersion: "v1",
    id: "branching",
    displayName: "Branching (test)",
    capabilities: {
      branches: {
        async selectBranch(chatId, seq, options) {
          if (runner.isBusy(chatId)) throw new ChatBusyError(chatId);
          const chat = chatOf(chatId);
          if (seq >= chat.log.length) throw stale(chatId, chat, seq);
          // The newest message below `seq` (a parent's seq is always below its children's) is a leaf.
          const below = new Set([seq]);
          for (const message of chat.log) if (below.has(parentOf(message))) below.add(message.seq);
          chat.leaf = Math.max(...below);
          return snapshot(chatId, options?.page);
        },
      },
    },
    async loadChat(chatId, options) {
      return snapshot(chatId, options?.page);
    },
    subscribe: events.subscribe,
    log: (chatId) => chatOf(chatId).log,
    sendTurn: (input) =>
      runner.start(input, async (turn): Promise<EngineEventOf<"turn-end">> => {
        const { chatId } = input;
        const chat = chatOf(chatId);
        let question: ChatMessage;
        if (input.retry === true) {
          question = chat.log[input.seq] as ChatMessage;
          const onBranch = branch(chat).some((message) => message.seq === input.seq);
          if (question?.role !== "user" || !onBranch) throw stale(chatId, chat, input.seq);
        } else {
          const parent = input.parent ?? chat.leaf;
          if (input.seq !== chat.log.length || (parent !== null && parent >= chat.log.length)) {
            throw stale(chatId, chat, input.seq);
          }
          question = placed({ seq: input.seq, role: "user", parts: [{ type: "text", text: input.text }] }, parent);
          chat.log.push(question);
          chat.leaf = question.seq;
        }
        turn.send({ type: "turn-start", chatId, message: question });
        await options.beforeAnswer?.();
        const text = `Answer to ${question.parts[0]?.type === "text" ? question.parts[0].text : "?"}`;
        const seq = chat.log.length;
        const answer = placed(
          { seq, role: "assistant", parts: [{ type: "text", text }], finishReason: "stop" },
          question.seq,
        );
        turn.send({ type: "message-start", chatId, seq, role: "assistant" });
        turn.send({ type: "text-delta", chatId, seq, delta: text });
        chat.log.push(answer);
        chat.leaf = seq;
        turn.send({ type: "message-end", chatId, message: answer, finishReason: "stop" });
        const end: EngineEventOf<"turn-end"> = {
          type: "turn-end",
          chatId,
          seq: question.seq,
          status: "done",
          usage: emptyUsage,
        };
        turn.send(end);
        return end;
      }),
  };
}
