import { newlineToken, startLlamaServer } from "../../scripts/llama-server.js";
import type { ChatFigures, FoldDetail } from "../../scripts/real-server-figures.js";
import { runRealChat } from "../../scripts/real-server-run.js";
import { roundRobinTurns } from "../../scripts/real-server-turns.js";
import type { BenchSection } from "../section.js";
import { percent, round } from "../stats.js";
import { foldAheadOnRealServer } from "./fold-ahead-real.js";

/** The real windows the section runs at: `NACRE_REAL_SERVER_WINDOWS=2048,8192` picks some (the suite's variable). */
const allWindows = [512, 2048, 8192] as const;

function chosenWindows(): readonly number[] {
  const named = process.env.NACRE_REAL_SERVER_WINDOWS;
  if (!named) return allWindows;
  const picked = named.split(",").map((window) => Number(window.trim()));
  const unknown = picked.filter((window) => !(allWindows as readonly number[]).includes(window));
  if (unknown.length > 0)
    throw new Error(`NACRE_REAL_SERVER_WINDOWS: ${unknown.join(", ")} is not one of ${allWindows.join(", ")}`);
  return picked;
}
/** Turns per window, round-robin over English, Chinese and tool output (test-fixtures/real-server/turns.json). */
const turnCount = 30;
/** `-n`: no answer is longer; the end-token override (a newline) usually ends it first. */
const maxAnswerTokens = 256;

const fillList = (fills: readonly number[]) => (fills.length ? fills.map((fill) => percent(fill, 0)).join(" ") : "—");

/**
 * One fold's line: where it came and why, measured. "anchored" is what the request would have been sized at had the
 * part already sent (the last answer's request and answer) been taken at the server's count, the new message alone
 * at estimate × factor: over the server's count, how early such a rule would fold.
 */
function foldLine(window: number, fold: FoldDetail): string {
  const factor = fold.factor ?? 1;
  const sized = fold.estimated * factor;
  const anchored = fold.counted - fold.newMessage.counted + fold.newMessage.estimated * factor;
  const kinds = fold.kinds
    .slice(-6)
    .map((kind) => kind[0])
    .join("");
  return (
    `${window}: fold at turn ${fold.turn} (kinds of the last turns ${kinds}): server count ${fold.counted} ` +
    `(${percent(fold.counted / window, 0)}), estimate ${fold.estimated} × ${factor.toFixed(3)} = ${Math.round(sized)} ` +
    `(${(sized / fold.counted).toFixed(3)} of the count); new message ${fold.newMessage.counted} counted, ` +
    `${fold.newMessage.estimated} × factor = ${Math.round(fold.newMessage.estimated * factor)}; answers ` +
    `${percent(fold.answerShare, 0)} of the estimate; anchored ${(anchored / fold.counted).toFixed(3)} of the count`
  );
}

/** The share, and the points of it the server lost to re-tokenizing answers unlike it generated them. */
function cacheShareCell(figures: ChatFigures): string {
  const lost = figures.answerPromptTokens > 0 ? figures.retokenizedTokens / figures.answerPromptTokens : 0;
  return `${percent(figures.cacheShare, 1)} (${percent(lost, 1)} re-tokenized)`;
}

function row(window: number, figures: ChatFigures): string[] {
  return [
    String(window),
    String(figures.folds),
    fillList(figures.fills),
    Number.isNaN(figures.minFill) ? "—" : percent(figures.minFill, 0),
    Number.isNaN(figures.medianFill) ? "—" : percent(figures.medianFill, 0),
    figures.estimateOverCount.length ? figures.estimateOverCount.map((ratio) => ratio.toFixed(2)).join(" ") : "—",
    `${figures.summaryRequests} (${figures.summaryRefused} refused, ${figures.summaryRepeats} repeated)`,
    String(figures.maxSummaryRefusedPerFold),
    String(figures.summariesWritten),
    `${figures.answersRefused} of ${figures.answerRequests}`,
    String(figures.heals),
    String(figures.turnProblems),
    cacheShareCell(figures),
    `${figures.secondsPerTurn.toFixed(2)} (median ${figures.medianSecondsPerTurn.toFixed(2)})`,
  ];
}

/**
 * A real llama.cpp llama-server (built by scripts/ensure-llama-server.mjs) serving stories260K, a model whose
 * tokenizer is nothing like English BPE, at real windows: the engine (createLlamaCpp) sends 30 turns at each.
 * Every figure is the server's own (its usage, timings and /tokenize), read through a recording proxy.
 */
export const realServerSection: BenchSection = {
  id: "real-server",
  title: "A real llama-server (stories260K, end-token override)",
  async run({ log }) {
    const rows: string[][] = [];
    const json: Record<string, unknown>[] = [];
    const turns = roundRobinTurns(turnCount);
    const windows = chosenWindows();
    for (const window of windows) {
      const server = await startLlamaServer({ window, endToken: newlineToken, maxAnswerTokens });
      try {
        const chat = await runRealChat({
          server,
          row: "createLlamaCpp",
          turns,
          onTurn: (record) => {
            if (record.compacted.length > 0 || record.problem) {
              log(
                `${window}: turn ${record.index + 1}${record.compacted.length ? `, fold (${record.compacted.map((event) => event.model ?? "no summary").join(", ")})` : ""}${record.problem ? `, problem ${record.problem.kind}` : ""}${record.contextUsage ? `, sized with factor ${record.contextUsage.factor.toFixed(3)}` : ""}`,
              );
            }
          },
        });
        const { figures } = chat;
        for (const fold of figures.foldDetails) log(foldLine(window, fold));
        rows.push(row(window, figures));
        json.push({
          window,
          ...figures,
          fills: figures.fills.map((fill) => round(fill, 3)),
          minFill: round(figures.minFill, 3),
          medianFill: round(figures.medianFill, 3),
          estimateOverCount: figures.estimateOverCount.map((ratio) => round(ratio, 3)),
          foldDetails: figures.foldDetails.map((fold) => ({ ...fold, answerShare: round(fold.answerShare, 3) })),
          cacheShare: round(figures.cacheShare, 4),
          secondsPerTurn: round(figures.secondsPerTurn, 2),
          medianSecondsPerTurn: round(figures.medianSecondsPerTurn, 2),
        });
        log(`window ${window} done: ${figures.folds} folds, ${figures.turnProblems} turn problems`);
      } finally {
        await server.stop();
      }
    }
    const foldAhead = windows.includes(2048) ? await foldAheadOnRealServer(log) : null;
    return {
      json: { realServer: json, ...(foldAhead ? { realServerFoldAhead: foldAhead.json } : {}) },
      tables: [
        {
          title: `A real llama-server: ${turnCount} turns round-robin (English, Chinese, tool output; 150–1,500 characters) per window, createLlamaCpp`,
          header: [
            "window",
            "folds",
            "fill at each fold",
            "min fill",
            "median fill",
            "estimate × factor / server count at each fold",
            "summary requests",
            "most refused summary requests in a fold",
            "summaries written",
            "answers refused",
            "heals",
            "turn problems",
            "prompt-cache share",
            "s per turn",
          ],
          rows,
          notes: [
            "Model: test-fixtures/models/stories260K.gguf (512-token SentencePiece vocabulary) on llama-server -t 1 -tb 1, -c and llama.context_length = the window, end token = newline (tokenizer.ggml.eos_token_id=int:13), -n 256; system prompt 'You are a helpful assistant.'.",
            "fill at a fold = the server's own count of the request that would have been sent had the engine not folded: the last answer request's prompt and answer tokens (its usage) plus the new message (/tokenize), over the window.",
            "estimate × factor / server count = the engine's estimate of that same request (its messages' texts, 4 tokens a message) × the factor the chat was sized with before the fold, over the server's count: above 1, the fold came early by that much.",
            "summary requests: refused = the server's too-long refusal; repeated = identical to the summary request just before it. answers refused = answer requests the server refused as too long. prompt-cache share = timings.cache_n over cache_n + prompt_n, summed over answered answer requests; re-tokenized = of those tokens, the ones not read from the cache only because the server tokenized its last answer's text into other tokens than it generated (the request repeated the last one and its answer word for word, no summariser request between).",
          ],
        },
        ...(foldAhead ? [foldAhead.table] : []),
      ],
    };
  },
};
