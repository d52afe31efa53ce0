// Sends turns to any Engine (the API engine in this process, or `pnpm serve` through createRemoteEngine) and keeps
// what each turn said: the real-server suite and the bench read the same record.
import type { ContextUsage, Engine, EngineEvent, EngineEventOf, TurnProblem } from "@conch/engine-client";
import type { RealServerTurn } from "./real-server-turns.js";

export interface TurnRecord {
  readonly index: number;
  readonly turn: RealServerTurn;
  /** The person's message's seq. */
  readonly seq: number;
  readonly events: readonly EngineEvent[];
  readonly compacted: readonly EngineEventOf<"compacted">[];
  readonly healed: readonly EngineEventOf<"healed">[];
  readonly healthNotes: readonly EngineEventOf<"health-note">[];
  readonly problem: TurnProblem | null;
  readonly status: "done" | "aborted" | "problem" | "tool-calls" | "none";
  readonly answer: string;
  readonly contextUsage: ContextUsage | null;
  readonly milliseconds: number;
}

/** Sends each turn in order on one chat (seqs follow the log) and returns what each turn said. */
export async function sendTurns(
  engine: Engine,
  chatId: string,
  turns: readonly RealServerTurn[],
  onTurn?: (record: TurnRecord) => void | Promise<void>,
): Promise<TurnRecord[]> {
  let seq = (await engine.loadChat(chatId)).messages.length;
  const records: TurnRecord[] = [];
  for (const [index, turn] of turns.entries()) {
    const started = performance.now();
    const events: EngineEvent[] = [];
    let lastLogged = seq - 1;
    for await (const event of engine.sendTurn({ chatId, seq, text: turn.text })) {
      events.push(event);
      if (event.type === "turn-start") lastLogged = event.message.seq;
      if (event.type === "message-end") lastLogged = Math.max(lastLogged, event.message.seq);
    }
    const end = events.findLast((event) => event.type === "turn-end");
    const problem = events.findLast((event) => event.type === "turn-problem");
    const record: TurnRecord = {
      index,
      turn,
      seq,
      events,
      compacted: events.filter((event) => event.type === "compacted"),
      healed: events.filter((event) => event.type === "healed"),
      healthNotes: events.filter((event) => event.type === "health-note"),
      problem: problem?.type === "turn-problem" ? problem.problem : null,
      status: end?.type === "turn-end" ? end.status : "none",
      answer: events.map((event) => (event.type === "text-delta" ? event.delta : "")).join(""),
      contextUsage: end?.type === "turn-end" ? (end.contextUsage ?? null) : null,
      milliseconds: performance.now() - started,
    };
    records.push(record);
    await onTurn?.(record);
    seq = lastLogged + 1;
  }
  return records;
}
