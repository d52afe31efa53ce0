import { createApiEngine, createLlamaCpp, createMemoryChatStore, type EngineEvent } from "@conch/engine-client";
import { newlineToken, type StartedLlamaServer, startLlamaServer } from "../../scripts/llama-server.js";
import { realServerSystemPrompt } from "../../scripts/real-server-run.js";
import { roundRobinTurns } from "../../scripts/real-server-turns.js";
import type { Table } from "../table.js";

// Issue #32 on the real llama-server (one model, one slot: stories260K on one thread, `-np 1`): does folding ahead
// help the person's next answer, or compete with it? The same chat is played up to the turn after which a fold is
// due, then the next turn is sent: with the fold in the turn (today), after the fold ahead ended, at once (it waits
// for the fold ahead), and a short message sent at once (it need not fold, but the summariser holds the server).

const window = 2048;
const maxAnswerTokens = 256;
const shortMessage = "Thanks, go on.";

type Case = "today" | "ahead, sent after it ended" | "ahead, sent at once" | "short, today" | "short, ahead at once";

interface Played {
  /** Ms from sending the measured turn to its first delta. */
  readonly firstDelta: number;
  /** Ms of the measured turn in all. */
  readonly turn: number;
  /** Ms the fold ahead took (from the previous turn-end to its end), when one ran. */
  readonly fold: number;
  /** The turns played before the measured one. */
  readonly before: number;
  /** Whether the measured turn folded (today's fold, or waiting for the fold ahead). */
  readonly foldedInTurn: boolean;
  /** How the first fold after the played turns ended (a fold ahead's, unless a turn took it). */
  readonly outcome: string | undefined;
}

async function play(
  server: StartedLlamaServer,
  which: Case,
  dueAfter: number | null,
  log: (message: string) => void,
): Promise<Played> {
  const ahead = which.includes("ahead");
  const engine = createApiEngine({
    provider: createLlamaCpp({ baseURL: `${server.origin}/v1` }),
    model: server.alias,
    store: createMemoryChatStore(),
    systemPrompt: realServerSystemPrompt,
    foldAhead: ahead,
  });
  let foldStarted = false;
  /** When the last `compacting` after a turn's end came, and whether a fold after a turn's end has ended. */
  let lastCompactingAt = Number.NEGATIVE_INFINITY;
  let foldSettled = false;
  let foldEnded: (at: number) => void = () => undefined;
  const folded = new Promise<number>((resolve) => {
    foldEnded = resolve;
  });
  // The fold ahead's events come after a turn's `turn-end` (they may come before its stream closes).
  let afterEnd = false;
  let outcome: string | undefined;
  engine.subscribe((event) => {
    if (event.type === "turn-start") afterEnd = false;
    if (event.type === "turn-end") afterEnd = true;
    if (!afterEnd) return;
    if (event.type === "compacting") {
      foldStarted = true;
      lastCompactingAt = performance.now();
    }
    if (event.type === "compacted" || event.type === "compaction-skipped") {
      foldSettled = true;
      outcome ??= event.type === "compacted" ? `summary by ${event.model ?? "none"}` : `skipped (${event.why})`;
      foldEnded(performance.now());
    }
  });
  const turns = roundRobinTurns(120);
  let seq = 0;
  const send = async (text: string) => {
    const started = performance.now();
    let firstDelta = Number.NaN;
    const events: EngineEvent[] = [];
    for await (const event of engine.sendTurn({ chatId: "c", seq, text })) {
      events.push(event);
      if (event.type === "text-delta" && Number.isNaN(firstDelta)) firstDelta = performance.now() - started;
      if (event.type === "turn-start") seq = event.message.seq + 1;
      if (event.type === "message-end") seq = Math.max(seq, event.message.seq + 1);
    }
    return { firstDelta, turn: performance.now() - started, events };
  };
  // Up to the turn after which the next must fold: where the fold ahead begins (or, today, the same turn count).
  let played = 0;
  for (;;) {
    const { events, turn } = await send(turns[played % turns.length]?.text ?? "Go on.");
    played += 1;
    const end = events.findLast((event) => event.type === "turn-end");
    const folds = events.some((event) => event.type === "compacted") ? ", folded" : "";
    log(`${which}: turn ${played} ${end?.type === "turn-end" ? end.status : "?"} in ${turn.toFixed(0)} ms${folds}`);
    if (dueAfter !== null) {
      if (played === dueAfter) break;
      continue;
    }
    // The fold ahead is planned in the chat's queue just after the turn: give it that moment.
    await new Promise((resolve) => setTimeout(resolve, 50));
    if (foldStarted) break;
    if (played >= 200) throw new Error("no fold came due");
  }
  const ended = performance.now();
  if (which === "ahead, sent after it ended") await folded;
  const text = which.startsWith("short") ? shortMessage : (turns[played]?.text ?? "Go on.");
  const measured = await send(text);
  const measuredEnded = performance.now();
  // A fold ahead that gave way to the measured turn (on this computer, when the turn fits without it) ends with no
  // event; another is begun after the turn only if one is due. Loading the chat waits for that planning (the
  // chat's queue), so the wait below is for a fold that will end.
  await engine.loadChat("c");
  const due = foldSettled || lastCompactingAt >= measuredEnded;
  const fold = foldStarted && due ? (await folded) - ended : Number.NaN;
  const foldedInTurn = measured.events.some((event) => event.type === "compacted");
  return { firstDelta: measured.firstDelta, turn: measured.turn, fold, before: played, foldedInTurn, outcome };
}

/** The figures, and what they say: whether to fold ahead on a server on this computer. */
export async function foldAheadOnRealServer(log: (message: string) => void): Promise<{ json: unknown; table: Table }> {
  const server = await startLlamaServer({ window, endToken: newlineToken, maxAnswerTokens, slots: 1 });
  const props = (await (await fetch(`${server.origin}/props`)).json()) as { total_slots?: number };
  log(`fold ahead on the real server: ${props.total_slots ?? "?"} slot(s)`);
  const results: Partial<Record<Case, Played>> = {};
  try {
    // The fold ahead's chat first: it finds the turn after which a fold is due; every other case plays as many.
    log("fold ahead on the real server: finding the turn a fold comes due...");
    const first = await play(server, "ahead, sent after it ended", null, log);
    results["ahead, sent after it ended"] = first;
    for (const which of ["today", "ahead, sent at once", "short, today", "short, ahead at once"] as const) {
      log(`fold ahead on the real server: ${which}...`);
      results[which] = await play(server, which, first.before, log);
    }
  } finally {
    await server.stop();
  }
  const ms = (value: number | undefined) => (value === undefined || Number.isNaN(value) ? "–" : value.toFixed(0));
  return {
    json: { window, results },
    table: {
      title: `Fold ahead on a real llama-server (stories260K, ${window} window, one slot, one thread): the turn after a fold is due`,
      header: ["case", "ms to first delta", "turn ms", "fold ahead ms", "folded in the turn", "the fold ahead"],
      rows: (Object.entries(results) as [Case, Played][]).map(([which, at]) => [
        which,
        ms(at.firstDelta),
        ms(at.turn),
        ms(at.fold),
        at.foldedInTurn ? "yes" : "no",
        at.outcome ?? "–",
      ]),
      notes: [
        `The chat is played up to turn ${results["ahead, sent after it ended"]?.before ?? "?"}, after which the next must fold; 'short' sends "${shortMessage}" instead, which needs no fold.`,
      ],
    },
  };
}
