import { createEstimateCache } from "@conch/engine-client/context";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { isLongConversation, loadConversations } from "../data.js";
import type { BenchSection } from "../section.js";
import {
  memoiseRealCounter,
  type PolicyTotals,
  policies,
  type RealMessageCounter,
  replay,
  simulatedWindows,
} from "../simulate.js";
import { grouped, percent, round } from "../stats.js";

/** Reused input tokens are priced at a tenth of new ones, as providers' prompt caches roughly are. */
const reusedPrice = 0.1;

function windowLabel(window: number): string {
  return window >= 1_000_000 ? `${window / 1_000_000}M` : `${window / 1_000}K`;
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
    const cost = (totals: PolicyTotals) => totals.inputTokens - totals.reusedTokens + reusedPrice * totals.reusedTokens;
    const cacheJson = results.map((totals) => ({
      policy: totals.policy,
      window: totals.window,
      reuse: round(totals.reusedTokens / totals.inputTokens, 4),
      foldsPer100: round((100 * totals.folds) / totals.requests, 2),
      inputTokens: totals.inputTokens,
      cost: Math.round(cost(totals)),
      maxRequestOverWindow: round(totals.maxRequestTokens / totals.window, 3),
      requests: totals.requests,
      requestsOverWindow: totals.requestsOverWindow,
      prefixBreaksPer100: round((100 * totals.prefixBreaks) / totals.requests, 2),
      rewrittenShare: round(totals.rewrittenTokens / totals.inputTokens, 4),
      ...(totals.policy === "ours" && {
        shorteningsPer100: round((100 * totals.shortenings) / totals.requests, 2),
        plansOverBudget: totals.plansOverBudget,
        maxRealRequestOverWindowO200k: round(totals.maxRealRequestTokens / totals.window, 3),
      }),
    }));
    const none = (window: number) => results.find((totals) => totals.policy === "none" && totals.window === window);
    const rows = results.map((totals) => {
      const baseline = none(totals.window);
      return [
        windowLabel(totals.window),
        totals.policy,
        percent(totals.reusedTokens / totals.inputTokens, 2),
        ((100 * totals.folds) / totals.requests).toFixed(2),
        ((100 * totals.prefixBreaks) / totals.requests).toFixed(2),
        percent(totals.rewrittenTokens / totals.inputTokens, 1),
        grouped(totals.inputTokens),
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
          `${windowLabel(totals.window)}, ours: largest request counted with o200k = ${(totals.maxRealRequestTokens / totals.window).toFixed(3)} of the window; plans over budget: ${totals.plansOverBudget}; turns shortened again (no fold) per 100 requests: ${((100 * totals.shortenings) / totals.requests).toFixed(2)}`,
      );
    return {
      json: { cache: cacheJson },
      tables: [
        {
          title: `Prompt-cache simulation: ${conversations.length} long conversations, ${grouped(requests)} requests per policy and window`,
          header: [
            "window",
            "policy",
            "reuse",
            "folds/100",
            "prefix breaks/100",
            "rewritten",
            "input tokens",
            "cost",
            "cost vs none",
            "max request / window",
            "requests over window",
          ],
          rows,
          notes: [
            "One request before each assistant message; 2,000-token system prompt and 3,000-token tool list (8K: a lean 500-token prompt, no tools); stand-in summary of 4,000 characters (about 1,000 tokens).",
            "Tokens are the planner's estimate (all-model table, factor 1). reuse = share of input tokens that repeat the previous request's prefix byte for byte (whole messages); rewritten = share of input tokens the previous request already carried but that come after a break (the rest of what is not reused is new messages); cost = new tokens + reused tokens at a tenth.",
            "sliding = the newest whole turns that fit 90% of the window less answer room, prompt and tools (a turn bigger than that is sent whole); half-keep20 = compress when the request passes half the window, keep the last 20 messages.",
            ...oursChecks,
          ],
        },
      ],
    };
  },
};
