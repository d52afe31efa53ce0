import type { ChatMessage } from "@conch/engine-client";
import { computeBudget, createEstimateCache, type EstimateCache } from "@conch/engine-client/context";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { isLongConversation, loadConversations } from "../data.js";
import type { BenchSection } from "../section.js";
import {
  memoiseRealCounter,
  type OursTuning,
  type PolicyTotals,
  policies,
  type RealMessageCounter,
  replay,
  type SimulatedWindow,
  simulatedWindows,
  standInSummaryChars,
} from "../simulate.js";
import { grouped, percent, round } from "../stats.js";
import type { Table } from "../table.js";

/** Reused input tokens are priced at a tenth of new ones, as providers' prompt caches roughly are. */
const reusedPrice = 0.1;

function windowLabel(window: number): string {
  return window >= 1_000_000 ? `${window / 1_000_000}M` : `${window / 1_000}K`;
}

const cost = (totals: PolicyTotals) => totals.inputTokens - totals.reusedTokens + reusedPrice * totals.reusedTokens;
const per100 = (count: number, totals: PolicyTotals) => (100 * count) / totals.requests;
const perRequest = (totals: PolicyTotals) => totals.inputTokens / totals.requests;
/** What reuse could be at most: everything but what is new in each request. */
const ceiling = (totals: PolicyTotals) => 1 - totals.newTokens / totals.inputTokens;

/** What the sweep tries at each window: how far a fold goes, when it comes early, the summary's length, how a lone turn is held. */
const sweptTunings: readonly Required<OursTuning>[] = [
  // The ADR: folds to half the budget, only when over it.
  { foldShare: 0.5, earlyFoldShare: 1, summaryChars: standInSummaryChars, roomShare: 0.5, reserveShare: 0.45 },
  // Below a 50,000-token budget, the default.
  { foldShare: 0.3, earlyFoldShare: 1, summaryChars: standInSummaryChars, roomShare: 0.5, reserveShare: 0.45 },
  { foldShare: 0.5, earlyFoldShare: 0.85, summaryChars: standInSummaryChars, roomShare: 0.5, reserveShare: 0.45 },
  // The default below 50,000 before #26.
  { foldShare: 0.3, earlyFoldShare: 0.85, summaryChars: standInSummaryChars, roomShare: 0.5, reserveShare: 0.45 },
  { foldShare: 0.2, earlyFoldShare: 0.85, summaryChars: standInSummaryChars, roomShare: 0.5, reserveShare: 0.45 },
  { foldShare: 0.3, earlyFoldShare: 0.7, summaryChars: standInSummaryChars, roomShare: 0.5, reserveShare: 0.45 },
  { foldShare: 0.3, earlyFoldShare: 0.85, summaryChars: 2_000, roomShare: 0.5, reserveShare: 0.45 },
  // How a lone turn is held: a smaller share of its room per text, a larger or smaller reserve.
  { foldShare: 0.3, earlyFoldShare: 0.85, summaryChars: standInSummaryChars, roomShare: 0.25, reserveShare: 0.5 },
  { foldShare: 0.3, earlyFoldShare: 0.85, summaryChars: standInSummaryChars, roomShare: 0.5, reserveShare: 0.2 },
];

/** The sweep: ours under each tuning, at the windows where folds are frequent. */
function sweep(
  histories: readonly (readonly ChatMessage[])[],
  windows: readonly SimulatedWindow[],
  cache: EstimateCache,
  quick: boolean,
): { readonly rows: string[][]; readonly json: unknown[] } {
  const rows: string[][] = [];
  const json: unknown[] = [];
  for (const simulated of windows) {
    const { budget } = computeBudget(simulated);
    for (const tuning of quick ? sweptTunings.slice(0, 4) : sweptTunings) {
      const totals = replay(histories, "ours", simulated, cache, undefined, tuning);
      rows.push([
        windowLabel(simulated.window),
        tuning.foldShare.toFixed(2),
        tuning.earlyFoldShare === 1 ? "no" : tuning.earlyFoldShare.toFixed(2),
        grouped(tuning.summaryChars),
        `${tuning.roomShare} / ${tuning.reserveShare}`,
        percent(totals.reusedTokens / totals.inputTokens, 2),
        percent(totals.rewrittenTokens / totals.inputTokens, 2),
        per100(totals.folds, totals).toFixed(2),
        per100(totals.reshortenings, totals).toFixed(2),
        grouped(perRequest(totals)),
        grouped(cost(totals)),
      ]);
      json.push({
        window: simulated.window,
        budget,
        ...tuning,
        reuse: round(totals.reusedTokens / totals.inputTokens, 4),
        rewrittenShare: round(totals.rewrittenTokens / totals.inputTokens, 4),
        foldsPer100: round(per100(totals.folds, totals), 2),
        reshorteningsPer100: round(per100(totals.reshortenings, totals), 2),
        inputTokensPerRequest: Math.round(perRequest(totals)),
        cost: Math.round(cost(totals)),
      });
    }
  }
  return { rows, json };
}

/** Section 2: replays the long conversations request by request under four policies and four windows. */
export const promptCacheSection: BenchSection = {
  id: "prompt-cache",
  title: "Prompt-cache simulation",
  async run({ args, log }) {
    const conversations = loadConversations(args.dataDir).filter(isLongConversation);
    if (conversations.length === 0)
      throw new Error(`no conversation in ${args.dataDir} has 30+ messages and 50,000+ characters`);
    log(`${conversations.length} long conversations`);
    const histories = conversations.map((conversation) => conversation.messages);
    const cache = createEstimateCache();
    // Ours is also counted with a real tokenizer (o200k), as a check on the estimate it plans with.
    const countReal: RealMessageCounter = memoiseRealCounter((text) => countTokens(text));
    const results: PolicyTotals[] = [];
    for (const simulated of simulatedWindows) {
      for (const policy of policies) {
        results.push(replay(histories, policy, simulated, cache, policy === "ours" ? countReal : undefined));
      }
      log(`window ${windowLabel(simulated.window)} replayed`);
    }
    const cacheJson = results.map((totals) => ({
      policy: totals.policy,
      window: totals.window,
      reuse: round(totals.reusedTokens / totals.inputTokens, 4),
      ceiling: round(ceiling(totals), 4),
      rewrittenShare: round(totals.rewrittenTokens / totals.inputTokens, 4),
      foldRewrittenShare: round(totals.foldRewrittenTokens / totals.inputTokens, 4),
      reshorteningsPer100: round(per100(totals.reshortenings, totals), 2),
      foldsPer100: round(per100(totals.folds, totals), 2),
      prefixBreaksPer100: round(per100(totals.prefixBreaks, totals), 2),
      inputTokens: totals.inputTokens,
      inputTokensPerRequest: Math.round(perRequest(totals)),
      cost: Math.round(cost(totals)),
      maxRequestOverWindow: round(totals.maxRequestTokens / totals.window, 3),
      requests: totals.requests,
      requestsOverWindow: totals.requestsOverWindow,
      ...(totals.policy === "ours" && {
        plansOverBudget: totals.plansOverBudget,
        maxRealRequestOverWindowO200k: round(totals.maxRealRequestTokens / totals.window, 3),
      }),
    }));
    const none = (window: number) => results.find((totals) => totals.policy === "none" && totals.window === window);
    const rows = results.map((totals) => {
      const baseline = none(totals.window);
      return [
        windowLabel(totals.window),
        totals.policy === "none" ? "none (does not fit)" : totals.policy,
        percent(totals.reusedTokens / totals.inputTokens, 2),
        percent(ceiling(totals), 2),
        percent(totals.rewrittenTokens / totals.inputTokens, 2),
        per100(totals.reshortenings, totals).toFixed(2),
        per100(totals.folds, totals).toFixed(2),
        grouped(perRequest(totals)),
        grouped(cost(totals)),
        baseline ? percent(cost(totals) / cost(baseline), 0) : "",
        (totals.maxRequestTokens / totals.window).toFixed(3),
        String(totals.requestsOverWindow),
      ];
    });
    const requests = results[0]?.requests ?? 0;
    const oursChecks = results
      .filter((totals) => totals.policy === "ours")
      .map(
        (totals) =>
          `${windowLabel(totals.window)}, ours: largest request counted with o200k = ${(totals.maxRealRequestTokens / totals.window).toFixed(3)} of the window; plans over budget: ${totals.plansOverBudget}; rewritten by folds ${percent(totals.foldRewrittenTokens / totals.inputTokens, 2)}, by re-shortenings ${percent((totals.rewrittenTokens - totals.foldRewrittenTokens) / totals.inputTokens, 2)}`,
      );
    const sweptWindows = simulatedWindows.filter((simulated) => simulated.window <= 128_000);
    const swept = sweep(histories, sweptWindows, cache, args.quick);
    log("sweep done");
    const sweepTable: Table = {
      title:
        "Fold sweep (ours, 4,000-character summary unless said): how far a fold goes, when, and how a lone turn is held, per window",
      header: [
        "window",
        "fold keeps",
        "early fold past",
        "summary chars",
        "held: share / reserve",
        "reuse",
        "rewritten",
        "folds/100",
        "re-shortenings/100",
        "input tokens/request",
        "cost",
      ],
      rows: swept.rows,
      notes: [
        "fold keeps = the share of the budget what is kept fits after a fold (the ADR: half); early fold past = the share of the budget past which a turn that has just begun folds (no: only over the budget, the ADR); summary chars = the stand-in summary's length (4,000 characters is about 1,000 tokens); held = how a lone turn's texts are held (each text at most this share of the room the texts before it left, after this reserve).",
      ],
    };
    return {
      json: { cache: cacheJson, cacheSweep: swept.json },
      tables: [
        {
          title: `Prompt-cache simulation: ${conversations.length} long conversations, ${grouped(requests)} requests per policy and window`,
          header: [
            "window",
            "policy",
            "reuse",
            "ceiling",
            "rewritten",
            "re-shortenings/100",
            "folds/100",
            "input tokens/request",
            "cost",
            "cost vs none",
            "max request / window",
            "requests over window",
          ],
          rows,
          notes: [
            "One request before each assistant message; 2,000-token system prompt and 3,000-token tool list (8K: a lean 500-token prompt, no tools); stand-in summary of 4,000 characters (about 1,000 tokens).",
            "Tokens are the planner's estimate (all-model table, factor 1). reuse = share of input tokens that repeat the previous request's prefix byte for byte (whole messages); ceiling = 1 − the share of input tokens new in each request (what no policy can reuse); rewritten = share of input tokens the previous request already carried but that come after a break (ceiling − reuse); re-shortenings = prefix breaks without a fold (a text already sent, sent in another form); cost = new tokens + reused tokens at a tenth.",
            "sliding = the newest whole turns that fit 90% of the window less answer room, prompt and tools, a newest turn bigger than that shortened to fit (shortenTurn); half-keep20 = compress when the request passes half the window, keep the last 20 messages (may go over the window); none = everything every time, the ceiling's reference, over the window at small windows.",
            ...oursChecks,
          ],
        },
        sweepTable,
      ],
    };
  },
};
