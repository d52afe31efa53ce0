// The engine against a real llama.cpp llama-server serving a real model (test-fixtures/models/stories260K.gguf),
// at real windows of 512, 2048 and 8192 tokens, through three rows: createLlamaCpp, createOpenAI against the same
// server's /v1, and `pnpm serve` over it. The server is told to end answers at a newline (its end-token override),
// so the summaries it writes are kept. Every figure comes from the server's own record of each request.
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { newlineToken, type StartedLlamaServer, startLlamaServer } from "../../scripts/llama-server.js";
import { contentText, recognisedWindow, refusalOf, serverWork } from "../../scripts/real-server-figures.js";
import { type RealServerRow, realServerRows, runRealChat } from "../../scripts/real-server-run.js";
import { roundRobinTurns } from "../../scripts/real-server-turns.js";

/**
 * Turns per window: enough for a fold at each, with turns after it (measured: the first fold comes at turn 2, 3 and
 * 6). At 8192 an eleventh turn would only add a second fold, whose summary was a third of that window's time.
 */
const turnsAt: Readonly<Record<number, number>> = { 512: 4, 2048: 5, 8192: 10 };
/**
 * The rows at each window: all three at every window. At 8192 a fold needs some 5,000 real tokens and a summary of
 * them; without flash attention (scripts/llama-server.ts) that is about a minute per row on a loaded 2-core machine.
 */
const rowsAt: Readonly<Record<number, readonly RealServerRow[]>> = {
  512: realServerRows,
  2048: realServerRows,
  8192: realServerRows,
};
/** `-n`: the cap of a request that names no `max_tokens` (the engine's name theirs; the newline usually ends them first). */
const maxAnswerTokens = 256;

/** The windows this run covers: all three, or those `NACRE_REAL_SERVER_WINDOWS` names (`2048,8192`). */
const windows = (process.env.NACRE_REAL_SERVER_WINDOWS ?? "512,2048,8192")
  .split(",")
  .map((window) => Number(window.trim()))
  .filter((window) => turnsAt[window] !== undefined);

describe.each(windows)("a real llama-server with a %i-token window", (window) => {
  let server: StartedLlamaServer;

  beforeAll(async () => {
    server = await startLlamaServer({
      binary: inject("llamaServerBinary"),
      window,
      endToken: newlineToken,
      maxAnswerTokens,
    });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it.each(rowsAt[window] ?? [])(
    "%s: folds a real chat, heals every refusal once, and reads the server's usage",
    async (row) => {
      const chat = await runRealChat({ server, row, turns: roundRobinTurns(turnsAt[window] as number) });
      const { figures, turns } = chat;
      console.info(`[real-server] ${window} ${row}: ${JSON.stringify(figures)}`);
      // Where each turn's time went, by the server's own timings (answers and summaries told apart).
      for (const { record, exchanges } of turns) {
        const of = (kind: string) => serverWork(exchanges.filter((exchange) => exchange.kind === kind));
        console.info(
          `[real-server] ${window} ${row} turn ${record.index}: ${(record.milliseconds / 1000).toFixed(1)} s, ` +
            `answers ${JSON.stringify(of("chat"))}, summaries ${JSON.stringify(of("summary"))}`,
        );
      }

      // The window: createLlamaCpp (and pnpm serve, on the same adapter) read it from /props before the first
      // request; createOpenAI starts from the local default and learns it from a refusal that names it.
      const windows = turns.map(({ record }) => record.contextUsage?.window);
      if (row === "createOpenAI") {
        if (turns.some(({ exchanges }) => exchanges.some((exchange) => refusalOf(exchange)))) {
          expect(windows.at(-1)).toBe(window);
        }
      } else {
        expect(windows.every((seen) => seen === window)).toBe(true);
        expect(chat.exchanges.some((exchange) => exchange.path === "/props")).toBe(true);
      }

      // Every refusal is the server's real `exceed_context_size_error`, recognised by the engine with the window it
      // names; each one before an answer is retried at most once (a second refusal is the turn's problem).
      for (const { record, exchanges } of turns) {
        const refused = exchanges.filter((exchange) => exchange.kind === "chat" && exchange.status >= 400);
        // One chat at a time (each waits for the server to be idle): no request shares the server's KV cells, whose
        // overflow ends a stream with "Context size has been exceeded." and names no window.
        for (const exchange of exchanges) expect(exchange.streamError, exchange.path).toBeUndefined();
        for (const exchange of exchanges.filter((candidate) => candidate.status >= 400)) {
          const refusal = refusalOf(exchange);
          expect(refusal, JSON.stringify(exchange.errorBody)).not.toBeNull();
          expect(refusal?.nCtx).toBe(window);
          expect(recognisedWindow(exchange)).toBe(window);
        }
        expect(refused.length).toBeLessThanOrEqual(2);
        expect(record.healed.length).toBeLessThanOrEqual(1);
        for (const healed of record.healed) expect(healed.window).toBe(window);
        if (refused.length === 2) expect(record.problem?.kind).toBe("too-long");
        if (refused.length === 1 && record.problem === null) {
          // The one quiet retry was answered.
          expect(exchanges.filter((exchange) => exchange.kind === "chat").at(-1)?.status).toBe(200);
        }
        if (record.problem !== null) expect(record.problem.kind).toBe("too-long");
      }

      // Usage and cached tokens: the engine reads the server's own counts. A turn's usage is that of every request
      // the server answered for it: its answers and a retry, exactly, and the summaries of a fold in the turn. A fold
      // ahead of the need runs after a turn's end: its summaries are recorded beside that turn (or the next, while it
      // runs), and they count in the next turn's usage when that turn uses the fold. So a turn holds its answers'
      // tokens, and at most those plus its own summaries' and the summaries recorded beside the turn before it.
      let answeredTurns = 0;
      for (const [index, { record, exchanges }] of turns.entries()) {
        const end = record.events.findLast((event) => event.type === "turn-end");
        if (end?.type !== "turn-end") throw new Error("a turn without turn-end");
        const served = exchanges.filter((exchange) => exchange.kind !== "other" && exchange.status === 200);
        const aheadOfIt = (turns[index - 1]?.exchanges ?? []).filter(
          (exchange) => exchange.kind === "summary" && exchange.status === 200,
        );
        const sum = (
          kinds: readonly string[],
          count: (usage: { prompt_tokens: number; completion_tokens: number }) => number,
          withFoldAhead = false,
        ) =>
          [...served, ...(withFoldAhead ? aheadOfIt : [])]
            .filter((exchange) => kinds.includes(exchange.kind))
            .reduce((total, exchange) => total + (exchange.usage ? count(exchange.usage) : 0), 0);
        const prompt = (usage: { prompt_tokens: number }) => usage.prompt_tokens;
        const completion = (usage: { completion_tokens: number }) => usage.completion_tokens;
        const at = `turn ${record.index}`;
        expect(end.usage.inputTokens, at).toBeGreaterThanOrEqual(sum(["chat"], prompt));
        expect(end.usage.inputTokens, at).toBeLessThanOrEqual(sum(["chat", "summary"], prompt, true));
        expect(end.usage.outputTokens, at).toBeGreaterThanOrEqual(sum(["chat"], completion));
        expect(end.usage.outputTokens, at).toBeLessThanOrEqual(sum(["chat", "summary"], completion, true));
        expect(end.usage.cachedInputTokens).toBeLessThanOrEqual(end.usage.inputTokens);
        if (served.some((exchange) => exchange.kind === "chat")) answeredTurns += 1;
      }
      expect(answeredTurns).toBeGreaterThan(0);
      // At 512 nearly every turn folds or is refused, so the server may reuse no cached prefix (seen: 0 once).
      if (window >= 2048) expect(figures.cacheShare).toBeGreaterThan(0);

      // Folds, with summaries written by the chat's own model (the only summariser on this computer).
      expect(figures.folds).toBeGreaterThanOrEqual(1);
      for (const { exchanges } of turns) {
        for (const exchange of exchanges.filter((candidate) => candidate.kind === "summary")) {
          expect(exchange.body?.model).toBe(server.alias);
        }
      }
      const written = turns.flatMap(({ record }) => record.compacted.filter((event) => event.model !== null));
      // At 2048 (several folds) the model's summaries are kept; createOpenAI's first ones may be refused while it
      // learns the window (issue #26 sizes the summariser's requests to the window a refusal names). At 8192 the
      // row's one fold has 832 tokens of answer room, and this model may fill it with no newline (its end token
      // here): that summary is cut off and not kept (a fresh-clone run met it; another wrote it), so not required.
      if (window === 2048 && row !== "createOpenAI") expect(written.length).toBeGreaterThanOrEqual(1);
      for (const event of written) expect(event.model).toBe(server.alias);

      // The summariser's requests fit the real window (#26): a refusal names the window and what was sent, and the
      // one retry is sized to it, so no summariser request repeats the one before and a fold has at most one refused.
      expect(figures.summaryRepeats).toBe(0);
      expect(figures.maxSummaryRefusedPerFold).toBeLessThanOrEqual(1);

      // The summary travels in the next answer request, framed, in front of the first kept person's message.
      for (const [index, { record }] of turns.entries()) {
        const fold = record.compacted.findLast((event) => event.model !== null);
        if (!fold) continue;
        const next = [turns[index], ...turns.slice(index + 1)]
          .flatMap((turn) => turn?.exchanges ?? [])
          .find((exchange) => exchange.kind === "chat" && exchange.startedAt >= fold.at);
        if (!next) continue;
        const firstUser = next.body?.messages?.find((message) => message.role === "user");
        const text = contentText(firstUser?.content);
        expect(text.startsWith("<earlier-in-this-chat>")).toBe(true);
        expect(text).toContain(fold.text.replace(/^<earlier-in-this-chat>\n?|\n?<\/earlier-in-this-chat>$/g, ""));
      }

      // After a heal the chat knows the window: no answer request of a later turn is refused.
      const firstHeal = turns.findIndex(({ record }) => record.healed.length > 0);
      if (firstHeal !== -1 && window >= 2048) {
        const later = turns.slice(firstHeal + 1).flatMap(({ exchanges }) => exchanges);
        expect(later.filter((exchange) => exchange.kind === "chat" && exchange.status >= 400)).toEqual([]);
      }
    },
    // A fold at 8192 needs some 5,000 real tokens and a summary of them: a minute or two on a loaded machine.
    window >= 8192 ? 600_000 : 300_000,
  );
});
