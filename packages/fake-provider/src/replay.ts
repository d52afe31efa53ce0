import type { Engine, EngineEvent } from "@conch/engine-client";
import type { FakeReply } from "./fake-provider-dialects.js";
import type { FakeChatRequest } from "./fake-provider-types.js";
import { type RecordedTurn, scriptedSummaryReply } from "./scripted-models.js";

/** What the scripted chat model answers next, and the summariser's model id. */
export interface ReplayScript {
  /** Replies waiting for the chat model, consumed one per answered request. */
  readonly queue: FakeReply[];
  /** The fake server's reply function: the summariser's model summarises, every other model plays the queue. */
  readonly reply: (request: FakeChatRequest) => FakeReply;
}

export function createReplayScript(summariserModels: readonly string[]): ReplayScript {
  const queue: FakeReply[] = [];
  return {
    queue,
    reply(request) {
      const summarising = summariserModels.includes(request.model) || /<chat-lines>/.test(request.lastUserText);
      if (summarising) return scriptedSummaryReply(request);
      return queue.shift() ?? { text: "(no reply recorded)" };
    },
  };
}

/**
 * Running totals of a replay. Only the last turn's events are kept (a long replay must not keep every event of
 * every turn); pass `onEvent` to see them all as they come.
 */
export interface ReplayStats {
  turns: number;
  requests: number;
  /** Folds of the chat heard by listeners: in a turn, and ahead of the need between turns. */
  folds: number;
  heals: number;
  problems: number;
  /** The events of the turn played last, every round of it. */
  lastTurnEvents: EngineEvent[];
}

/**
 * Plays recorded turns through an engine as a person and a host would: the person's message in, the
 * recorded assistant messages scripted as the model's replies (one request each), and the recorded tool
 * results handed back after each tool round.
 */
export async function replayTurns(
  engine: Engine,
  chatId: string,
  turns: readonly RecordedTurn[],
  script: ReplayScript,
  options: {
    readonly onTurn?: (index: number, stats: ReplayStats) => void | Promise<void>;
    /** Every event of the replay, as it comes. */
    readonly onEvent?: (event: EngineEvent) => void;
    readonly startSeq?: number;
  } = {},
): Promise<ReplayStats> {
  const stats: ReplayStats = { turns: 0, requests: 0, folds: 0, heals: 0, problems: 0, lastTurnEvents: [] };
  // The log's next place: every branch counted (an engine that predates `nextSeq` never branched).
  const chat = options.startSeq === undefined ? await engine.loadChat(chatId) : null;
  let seq = options.startSeq ?? chat?.nextSeq ?? chat?.messages.length ?? 0;
  let callCounter = 0;
  // Listeners hear every fold, a fold ahead of the need between two turns too (no turn's stream carries it).
  // A fold that landed between turns is said again in the next turn's stream: counted once.
  let lastFold: string | null = null;
  const unsubscribe = engine.subscribe((event) => {
    if (event.chatId !== chatId || event.type !== "compacted") return;
    const fold = `${event.firstKeptSeq}@${event.at}`;
    if (fold !== lastFold) stats.folds += 1;
    lastFold = fold;
  });
  try {
    await playTurns();
  } finally {
    unsubscribe();
  }
  return stats;

  async function playTurns(): Promise<void> {
    for (const [index, turn] of turns.entries()) {
      const rounds = turn.rounds.length > 0 ? turn.rounds : [{ reply: "(no reply recorded)", toolResults: [] }];
      for (const round of rounds) {
        callCounter += 1;
        script.queue.push(
          round.toolResults.length > 0
            ? { text: round.reply, toolCalls: [{ id: `call-${callCounter}`, name: "run_tool", arguments: "{}" }] }
            : { text: round.reply },
        );
      }
      stats.lastTurnEvents = [];
      let input: Parameters<Engine["sendTurn"]>[0] = { chatId, seq, text: turn.person || "(continue)" };
      for (let round = 0; round < rounds.length; round++) {
        const stream = engine.sendTurn(input);
        let callId: string | null = null;
        // The last message this round put in the log (the opening one, then the answer): the next seq follows it.
        let lastLogged = seq - 1;
        for await (const event of stream) {
          stats.lastTurnEvents.push(event);
          options.onEvent?.(event);
          if (event.type === "healed") stats.heals += 1;
          if (event.type === "turn-problem") stats.problems += 1;
          if (event.type === "turn-start") lastLogged = event.message.seq;
          if (event.type === "message-end") {
            lastLogged = event.message.seq;
            for (const part of event.message.parts) if (part.type === "tool-call") callId = part.id;
          }
        }
        const end = await stream.done;
        stats.requests += 1;
        seq = lastLogged + 1;
        if (end.status !== "tool-calls" || callId === null) {
          // A turn that ended early (a problem) leaves its remaining scripted replies unused.
          script.queue.splice(0);
          break;
        }
        const results = rounds[round]?.toolResults ?? [];
        input = {
          chatId,
          seq,
          text: "",
          toolResults: [{ type: "tool-result", callId, name: "run_tool", text: results.join("\n") || "(no output)" }],
        };
      }
      stats.turns += 1;
      await options.onTurn?.(index, stats);
    }
  }
}
