import type { ChatMessage } from "@conch/engine-client";
import {
  buildRequestMessages,
  computeBudget,
  type EstimateCache,
  estimateMessagesTokens,
  estimateMessageTokens,
  type FoldState,
  frameSummary,
  initialFoldState,
  messageOverheadTokens,
  pictureTokens,
  planFold,
  shortenTurn,
  splitTurns,
  type TurnRange,
} from "@conch/engine-client/context";

/** The folding policies replayed side by side. */
export const policies = ["ours", "sliding", "half-keep20", "none"] as const;
export type Policy = (typeof policies)[number];

/** A window and what the host sends besides the transcript. */
export interface SimulatedWindow {
  readonly window: number;
  readonly systemTokens: number;
  readonly toolTokens: number;
}

/** 8K gets the lean prompt (500 tokens, no tools); the others a 2,000-token prompt and a 3,000-token tool list. */
export const simulatedWindows: readonly SimulatedWindow[] = [
  { window: 8_000, systemTokens: 500, toolTokens: 0 },
  { window: 32_000, systemTokens: 2_000, toolTokens: 3_000 },
  { window: 128_000, systemTokens: 2_000, toolTokens: 3_000 },
  { window: 1_000_000, systemTokens: 2_000, toolTokens: 3_000 },
];

const summaryParagraph =
  "The person is building a TypeScript command-line tool with Bun and wants the session workflow to be reliable. " +
  "Decided: keep task state in .minsky/tasks.json, run `bun test` before every commit, and use the existing " +
  "SessionDB class in src/domain/session.ts instead of a second store. Done: fixed the git push path for " +
  "session workspaces (commit 3e54e1f), added tests for 12 edge cases, and updated README.md. Facts to keep: " +
  "the repository lives at /Users/edobry/Projects/minsky, the CLI entry is src/cli.ts, tasks are numbered #001 " +
  "to #087. Still open: error messages of the MCP server, and whether rules files move to .cursor/rules. ";

/** Characters of the stand-in summary: about 1,000 tokens. */
export const standInSummaryChars = 4_000;

/** A stand-in for the summary a model would write (about 4 characters a token), numbered so each fold's differs. */
export function standInSummary(fold: number, chars = standInSummaryChars): string {
  let text = `Summary ${fold} of the earlier part of this chat.\n`;
  while (text.length < chars) text += summaryParagraph;
  return text.slice(0, chars);
}

/** Knobs of ours that the sweep turns; unset ones are planFold's defaults. */
export interface OursTuning {
  readonly foldShare?: number;
  readonly earlyFoldShare?: number;
  readonly roomShare?: number;
  readonly reserveShare?: number;
  /** Characters of the stand-in summary. Default {@link standInSummaryChars}. */
  readonly summaryChars?: number;
}

/** What one policy sends for one request (without system prompt and tools), and whether it folded to get there. */
interface PolicyStep {
  readonly messages: readonly ChatMessage[];
  readonly folded: boolean;
  /** For ours: whether the plan fit the budget. */
  readonly fits?: boolean;
}

type PolicyRunner = (history: readonly ChatMessage[]) => PolicyStep;

function oursRunner(simulated: SimulatedWindow, cache: EstimateCache, tuning: OursTuning = {}): PolicyRunner {
  const { budget } = computeBudget(simulated);
  const { summaryChars, ...knobs } = tuning;
  let state: FoldState = initialFoldState;
  let summary: string | null = null;
  let folds = 0;
  return (history) => {
    const plan0 = () => planFold({ messages: history, summary, budget, previous: state, cache, ...knobs });
    let plan = plan0();
    let folded = false;
    // As the engine does: after a fold the new summary is written, and the plan is made again with it.
    for (let round = 0; plan.fold && round < 4; round++) {
      folded = true;
      summary = standInSummary(++folds, summaryChars);
      state = plan.state;
      plan = plan0();
    }
    state = plan.state;
    return { messages: buildRequestMessages(plan.kept, summary), folded, fits: plan.fits };
  };
}

function slidingRunner(simulated: SimulatedWindow, cache: EstimateCache): PolicyRunner {
  // The behaviour the ADR replaces, sized to the window rather than to fixed counts: the newest whole turns
  // that fit 90% of the window less the answer's room, prompt and tools; no summary. A newest turn bigger
  // than that alone is shortened to fit (its longest texts, as shortenTurn does), so it stays in the window.
  const room = Math.max(0, computeBudget(simulated).uncapped);
  let firstKept = 0;
  return (history) => {
    const turns = splitTurns(history);
    const last = turns[turns.length - 1] as TurnRange;
    const lastTurn = shortenTurn({ messages: history.slice(last.from), targetTokens: room, cache });
    let from = turns.length - 1;
    let tokens = lastTurn.tokens;
    while (from > 0) {
      const turn = turns[from - 1] as TurnRange;
      const more = estimateMessagesTokens(history.slice(turn.from, turn.to), undefined, cache);
      if (tokens + more > room) break;
      tokens += more;
      from--;
    }
    const start = (turns[from] as TurnRange).from;
    const folded = start > firstKept;
    firstKept = Math.max(firstKept, start);
    return { messages: [...history.slice(start, last.from), ...lastTurn.messages], folded };
  };
}

function halfKeep20Runner(simulated: SimulatedWindow, cache: EstimateCache): PolicyRunner {
  // Hermes: compress when the request passes half the window, keep the last 20 messages; the summary is a
  // message of its own in front.
  const fixed = simulated.systemTokens + simulated.toolTokens;
  let firstKept = 0;
  let summary: ChatMessage | null = null;
  let folds = 0;
  return (history) => {
    const request = () => (summary === null ? history.slice(firstKept) : [summary, ...history.slice(firstKept)]);
    let folded = false;
    if (
      fixed + estimateMessagesTokens(request(), undefined, cache) > simulated.window / 2 &&
      history.length - 20 > firstKept
    ) {
      firstKept = history.length - 20;
      summary = { seq: -1, role: "user", parts: [{ type: "text", text: frameSummary(standInSummary(++folds)) }] };
      folded = true;
    }
    return { messages: request(), folded };
  };
}

function noneRunner(): PolicyRunner {
  return (history) => ({ messages: history, folded: false });
}

function runnerFor(
  policy: Policy,
  simulated: SimulatedWindow,
  cache: EstimateCache,
  tuning?: OursTuning,
): PolicyRunner {
  switch (policy) {
    case "ours":
      return oursRunner(simulated, cache, tuning);
    case "sliding":
      return slidingRunner(simulated, cache);
    case "half-keep20":
      return halfKeep20Runner(simulated, cache);
    case "none":
      return noneRunner();
    default:
      return policy satisfies never;
  }
}

/** Totals of one policy at one window over all replayed conversations. */
export interface PolicyTotals {
  readonly policy: Policy;
  readonly window: number;
  requests: number;
  inputTokens: number;
  /** Input tokens that repeat the previous request's prefix byte for byte. */
  reusedTokens: number;
  folds: number;
  /** Requests that do not start with the whole previous request (a fold, a new text limit, a dropped turn). */
  prefixBreaks: number;
  /** Prefix breaks without a fold: a text already sent is sent shortened (again) or in another form. */
  reshortenings: number;
  /** Input tokens sent again but not reusable: everything after a break that the previous request already had. */
  rewrittenTokens: number;
  /** Rewritten tokens of the breaks that came with a fold. */
  foldRewrittenTokens: number;
  /** Input tokens of messages new since the previous request (all of the first request): never reusable. */
  newTokens: number;
  maxRequestTokens: number;
  requestsOverWindow: number;
  /** Ours only: plans that could not fit the budget. */
  plansOverBudget: number;
  /** Largest request counted with a real tokenizer, when one is given. */
  maxRealRequestTokens: number;
}

const contentKeys = new WeakMap<ChatMessage, string>();

function contentKey(message: ChatMessage): string {
  let key = contentKeys.get(message);
  if (key === undefined) {
    key = `${message.role}\u0000${JSON.stringify(message.parts)}`;
    contentKeys.set(message, key);
  }
  return key;
}

function sameBytes(a: ChatMessage, b: ChatMessage): boolean {
  return a === b || contentKey(a) === contentKey(b);
}

/** The texts of a message a real tokenizer is given: texts, thinking, tool calls' names and arguments, tool results. */
export function tokenizedTexts(message: ChatMessage): string[] {
  const texts: string[] = [];
  for (const part of message.parts) {
    switch (part.type) {
      case "text":
      case "thinking":
      case "tool-result":
        texts.push(part.text);
        break;
      case "tool-call":
        texts.push(part.name, part.arguments);
        break;
      case "picture":
        break;
      default:
        part satisfies never;
    }
  }
  return texts;
}

/**
 * Counts a message with a real tokenizer: its {@link tokenizedTexts}, plus the estimate's allowances for the
 * template and for each picture.
 */
export type RealMessageCounter = (message: ChatMessage) => number;

/**
 * Replays conversations request by request (one request before each assistant message) under one policy
 * and window, and adds to its totals.
 */
export function replay(
  conversations: readonly (readonly ChatMessage[])[],
  policy: Policy,
  simulated: SimulatedWindow,
  cache: EstimateCache,
  countReal?: RealMessageCounter,
  tuning?: OursTuning,
): PolicyTotals {
  const totals: PolicyTotals = {
    policy,
    window: simulated.window,
    requests: 0,
    inputTokens: 0,
    reusedTokens: 0,
    folds: 0,
    prefixBreaks: 0,
    reshortenings: 0,
    rewrittenTokens: 0,
    foldRewrittenTokens: 0,
    newTokens: 0,
    maxRequestTokens: 0,
    requestsOverWindow: 0,
    plansOverBudget: 0,
    maxRealRequestTokens: 0,
  };
  const fixed = simulated.systemTokens + simulated.toolTokens;
  for (const messages of conversations) {
    const next = runnerFor(policy, simulated, cache, tuning);
    let previous: readonly ChatMessage[] | null = null;
    for (let index = 1; index < messages.length; index++) {
      if ((messages[index] as ChatMessage).role !== "assistant") continue;
      const step = next(messages.slice(0, index));
      const sent = step.messages;
      const tokens = fixed + estimateMessagesTokens(sent, undefined, cache);
      let reused = 0;
      let fresh = tokens;
      if (previous !== null) {
        reused = fixed;
        const shared = Math.min(previous.length, sent.length);
        let position = 0;
        for (; position < shared; position++) {
          const message = sent[position] as ChatMessage;
          if (!sameBytes(previous[position] as ChatMessage, message)) break;
          reused += estimateMessageTokens(message, undefined, cache);
        }
        if (position < previous.length) {
          totals.prefixBreaks++;
          if (!step.folded) totals.reshortenings++;
        }
        // What the log gained since the last request is new either way; the rest that is not reused was rewritten.
        const known = previous.reduce((most, message) => Math.max(most, message.seq), -1);
        fresh = 0;
        for (const message of sent) if (message.seq > known) fresh += estimateMessageTokens(message, undefined, cache);
        const rewritten = Math.max(0, tokens - reused - fresh);
        totals.rewrittenTokens += rewritten;
        if (step.folded) totals.foldRewrittenTokens += rewritten;
      }
      totals.newTokens += Math.min(fresh, tokens - reused);
      totals.requests++;
      totals.inputTokens += tokens;
      totals.reusedTokens += reused;
      if (step.folded) totals.folds++;
      if (step.fits === false) totals.plansOverBudget++;
      totals.maxRequestTokens = Math.max(totals.maxRequestTokens, tokens);
      if (tokens > simulated.window) totals.requestsOverWindow++;
      if (countReal) {
        let real = fixed;
        for (const message of sent) real += countReal(message);
        totals.maxRealRequestTokens = Math.max(totals.maxRealRequestTokens, real);
      }
      previous = sent;
    }
  }
  return totals;
}

/** Memoises a real counter by message object, then by content (framed and shortened copies repeat). */
export function memoiseRealCounter(count: (text: string) => number): RealMessageCounter {
  const byObject = new WeakMap<ChatMessage, number>();
  const byContent = new Map<string, number>();
  return (message) => {
    const known = byObject.get(message);
    if (known !== undefined) return known;
    const key = contentKey(message);
    let tokens = byContent.get(key);
    if (tokens === undefined) {
      tokens = messageOverheadTokens;
      for (const text of tokenizedTexts(message)) tokens += count(text);
      for (const part of message.parts) if (part.type === "picture") tokens += pictureTokens;
      byContent.set(key, tokens);
    }
    byObject.set(message, tokens);
    return tokens;
  };
}
