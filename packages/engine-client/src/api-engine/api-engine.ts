import { abortReason } from "../abort.js";
import type {
  BranchCapability,
  ChatSnapshot,
  CompactOptions,
  CompactResult,
  ContextCapability,
  ContextUsage,
} from "../engine.js";
import { assertSafeChatId, ChatBusyError, isAbortError } from "../errors.js";
import type { EngineEvent, EngineEventOf, SummaryState } from "../events.js";
import { createAnswer } from "../kit/answer.js";
import { createFanOut } from "../kit/fan-out.js";
import { endTurn, failTurn, startTurn } from "../kit/turn-book.js";
import { createTurnRunner, type Turn } from "../kit/turn-runner.js";
import { addUsage, type BranchMessage, type ChatMessage, emptyUsage, messageText } from "../messages.js";
import type { TurnProblem } from "../problems.js";
import { type BranchTree, parentOf, versionsOf } from "../transcript/branch-tree.js";
import type { ChatStore } from "../transcript/chat-store.js";
import { acceptTurn, createChatCache, type LogPage, saveTranscript } from "./chat-loading.js";
import { type ChatRuntime, keptFromLog } from "./chat-state.js";
import { createEngineParts } from "./engine-parts.js";
import { createFoldsAhead } from "./fold-ahead.js";
import { applyFold, type FoldContext, planAndFold } from "./fold-step.js";
import { believableRefusal, fixedCostsProblem, healAfterRefusal, refusedAgainProblem, sayHealed } from "./heal.js";
import type { ApiEngine, ApiEngineOptions } from "./options.js";
import { buildTurnRequest } from "./request.js";
import { measureChat, planFor, sizeRequest } from "./sizing.js";
import { type Attempt, keepAnswer, streamAnswer, type TurnTally } from "./stream-answer.js";

export type { ApiEngine, ApiEngineOptions } from "./options.js";

/**
 * The branch's messages, each with `siblings` when it has other versions. A version's role comes from the forks, or
 * from a message at hand; the few of neither (a child that continues its parent, on another branch) are read, one
 * message each.
 */
async function withVersions(
  store: ChatStore,
  chatId: string,
  tree: BranchTree,
  messages: readonly ChatMessage[],
  held: readonly ChatMessage[],
): Promise<BranchMessage[]> {
  if (tree.forks.length === 0) return [...messages];
  const roles = new Map<number, ChatMessage["role"]>();
  for (const message of [...held, ...messages]) roles.set(message.seq, message.role);
  const unknown = new Set<number>();
  for (const message of messages) {
    if (!tree.forksFrom.has(parentOf(tree, message.seq))) continue;
    versionsOf(tree, message.seq, message.role, (seq) => {
      if (!roles.has(seq)) unknown.add(seq);
      return roles.get(seq);
    });
  }
  for (const seq of unknown) {
    const reading = await store.readChat(chatId, { kept: false, leaf: seq, page: { limit: 1 } });
    for (const message of reading.page) roles.set(message.seq, message.role);
  }
  return messages.map((message) => {
    const siblings = versionsOf(tree, message.seq, message.role, (seq) => roles.get(seq));
    return siblings.length > 1 ? { ...message, siblings } : message;
  });
}

/** Resolves a task later: what is already queued (a turn's reader getting its `turn-end`) goes first. */
const nextTask = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

/**
 * The engine that keeps the transcript for a model API (ADR 0055): every turn it fits the chat into the
 * model's real window, folds whole turns from the front into a summary written by the cheapest model,
 * heals a "too long" refusal by itself, and lets the host learn the person's words before they are folded.
 * This is the orchestrator: each step of a turn lives in its own module beside it (see docs/engine.md).
 */
export function createApiEngine(options: ApiEngineOptions): ApiEngine {
  const parts = createEngineParts(options);
  const events = createFanOut<EngineEvent>(parts.onError);
  /** Turns, folds on request and learning writes of a chat run one after another. */
  const runner = createTurnRunner({ emit: events.emit });
  const chats = createChatCache(parts);
  const folds: FoldContext = { parts, chats, queued: runner.queued };
  const ahead = createFoldsAhead(folds, events.emit, (chatId, apply) => {
    void runner
      .queued(chatId, async () => apply(await chats.get(chatId)))
      .catch((error: unknown) => parts.onError(error, { during: "fold-ahead", chatId }));
  });
  const foldAhead = options.foldAhead ?? true;
  /** The fold ahead being planned after a chat's last turn: whether one runs (see `foldAheadPlanned`). */
  const plans = new Map<string, Promise<boolean>>();
  /** How many turns began on each chat, so that a plan knows whether a turn came since the one it follows. */
  const turnsBegun = new Map<string, number>();

  /** A turn, then (when it answered) the fold the next turn would need, begun now in the background. */
  async function runTurnAndFoldAhead(turn: Turn): Promise<EngineEventOf<"turn-end">> {
    const { chatId } = turn;
    const turnNumber = (turnsBegun.get(chatId) ?? 0) + 1;
    turnsBegun.set(chatId, turnNumber);
    const forget = () => {
      if (turnsBegun.get(chatId) === turnNumber) turnsBegun.delete(chatId);
    };
    let ended: EngineEventOf<"turn-end">;
    try {
      ended = await runTurn(turn);
    } catch (error) {
      forget();
      throw error;
    } finally {
      ahead.leaveTurn(chatId);
    }
    if (!foldAhead || ended.status !== "done") forget();
    else {
      // Planned in the chat's queue, after a macrotask (and after `foldAheadAfter`: a server's `turn-end` going
      // out): the turn's reader gets its `turn-end` first (the plan measures the whole chat), and the chat takes a
      // new turn at once meanwhile.
      const planned: Promise<boolean> = Promise.resolve(turn.input.foldAheadAfter)
        .then(nextTask, nextTask)
        .then(() =>
          runner.queued(chatId, async () => {
            // A turn begun since (sent the moment this one ended) plans its own, after its answer: this plan would
            // only hold that answer's `turn-end` back, in the queue right behind it.
            if (turnsBegun.get(chatId) !== turnNumber) return ahead.pending(chatId);
            const rt = await chats.get(chatId);
            return ahead.start(rt, await sizeRequest(parts, rt));
          }),
        )
        .catch((error: unknown) => {
          parts.onError(error, { during: "fold-ahead", chatId });
          return false;
        });
      plans.set(chatId, planned);
      void planned.then(() => {
        if (plans.get(chatId) === planned) plans.delete(chatId);
        // No turn since: nothing to tell apart any more (plans are made in the order their turns ended).
        forget();
      });
    }
    return ended;
  }

  /** One turn, its steps in order: accept, size, fold, then request and stream, healing one refusal. */
  async function runTurn(turn: Turn): Promise<EngineEventOf<"turn-end">> {
    const { input, send } = turn;
    const signal = input.abortSignal;
    const { rt, opened } = await acceptTurn(parts, chats, input);
    startTurn(turn, rt, opened.message);
    const tally: TurnTally = { usage: emptyUsage, kept: keptFromLog(rt) };
    // After the message answered: at the log's end (a regenerated answer goes beside the one it replaces).
    const answer = createAnswer(turn, parts.model(), { seq: rt.tree.nextSeq, parent: opened.message.seq });
    // The person's message for a "new chat" next step: the text of the turn's opening person message.
    const turnOpening = rt.log.findLast((message) => message.role === "user");
    const carriedMessage = turnOpening ? messageText(turnOpening) : input.text;
    const ending = {
      // Written with the answer already, when the store writes turns whole: one transcript write a turn.
      save: () => (tally.savedWithAnswer ? Promise.resolve() : saveTranscript(parts, rt, tally.kept)),
      contextUsage: async () => (await measureChat(parts, rt)).usage,
      onError: parts.onError,
    };
    const end = (status: EngineEventOf<"turn-end">["status"]) => endTurn(turn, rt, status, tally.usage, ending);
    const problem = (turnProblem: TurnProblem) => failTurn(turn, rt, turnProblem, tally.usage, ending);
    const step = { parts, turn, rt, answer, tally };
    const keepPartial = (turnProblem: TurnProblem | null = null) =>
      answer.parts.length > 0 ? keepAnswer(step, "aborted", turnProblem) : Promise.resolve();
    try {
      if (signal?.aborted) throw abortReason(signal);
      let size = await sizeRequest(parts, rt);
      if (size.budget.uncapped <= 0) return await problem(await fixedCostsProblem(parts, size, carriedMessage));
      // A fold begun ahead of this turn: waited for only when this turn must fold, and then used.
      const aheadUsage = await ahead.joinTurn(turn, rt, () => planFor(rt, size, "auto").fold, signal);
      tally.usage = addUsage(tally.usage, aheadUsage);
      let { planned, usage: foldUsage } = await planAndFold(folds, rt, size, "auto", signal, send);
      tally.usage = addUsage(tally.usage, foldUsage);
      for (let healedWindow: number | null | undefined; ; ) {
        const request = buildTurnRequest(options, size, planned, rt.summary, signal, rt.cache);
        tally.kept = planned.kept;
        const attempt: Attempt = { ...step, size, request };
        const outcome = await streamAnswer(attempt);
        if (outcome.type === "answered") {
          if (healedWindow !== undefined) sayHealed(parts, turn, rt, size, healedWindow);
          await keepAnswer(
            step,
            outcome.finish === "tool-calls" || outcome.finish === "length" ? outcome.finish : "stop",
          );
          return await end(outcome.finish === "tool-calls" ? "tool-calls" : "done");
        }
        if (outcome.type === "failed") {
          await keepPartial(outcome.problem);
          return await problem(outcome.problem);
        }
        if (healedWindow !== undefined) {
          return await problem(await refusedAgainProblem(parts, size, request, carriedMessage, outcome.error));
        }
        ({ size, planned, usage: foldUsage } = await healAfterRefusal(folds, { ...attempt, refusal: outcome.refusal }));
        tally.usage = addUsage(tally.usage, foldUsage);
        healedWindow = believableRefusal(parts, size.modelId, outcome.refusal).window ?? null;
      }
    } catch (error) {
      if (!isAbortError(error)) throw error;
      // What was written stays in the log, marked as cut short; the transcript stays consistent.
      await keepPartial();
      return await end("aborted");
    }
  }

  const context: ContextCapability = {
    async compact(chatId: string, compactOptions: CompactOptions = {}): Promise<CompactResult> {
      const rt = await chats.get(chatId);
      // Asked for, a fold folds at once: one begun ahead stops, changing nothing.
      ahead.cancel(chatId);
      return runner.queued(chatId, async () => {
        if (options.handOverCompaction && (await options.handOverCompaction(chatId, compactOptions.keep))) {
          events.emit({ type: "compaction-skipped", chatId, reason: "manual", why: "handed-over" });
          return { status: "handed-over" };
        }
        const size = await sizeRequest(parts, rt);
        const planned = planFor(rt, size, "manual");
        if (!planned.fold) {
          events.emit({ type: "compaction-skipped", chatId, reason: "manual", why: "nothing-to-fold" });
          return { status: "nothing-to-fold" };
        }
        try {
          const folded = await applyFold(folds, {
            rt,
            planned,
            size,
            reason: "manual",
            keep: compactOptions.keep,
            abortSignal: compactOptions.abortSignal,
            send: events.emit,
            // The person asked for a summary: without one, drop only what an automatic fold must (nothing under
            // the budget).
            withoutSummary: () => {
              const automatic = planFor(rt, size, "auto");
              return automatic.fold ? automatic : null;
            },
          });
          rt.usage = addUsage(rt.usage, folded.usage);
          if (!folded.applied) return { status: "no-summary" };
        } catch (error) {
          if (!isAbortError(error)) throw error;
          return { status: "aborted" };
        }
        return { status: "compacted", summary: rt.summary as SummaryState };
      });
    },
    async usage(chatId: string): Promise<ContextUsage> {
      return (await measureChat(parts, await chats.get(chatId))).usage;
    },
    stopFoldAhead(chatId: string): boolean {
      return ahead.cancel(chatId);
    },
    async foldAheadPlanned(chatId: string): Promise<boolean> {
      return (await plans.get(chatId)) ?? ahead.pending(chatId);
    },
  };

  /** The chat as the UI shows it: the active branch's page, each message with its versions. */
  async function snapshotOf(
    chatId: string,
    rt: ChatRuntime,
    tree: BranchTree,
    leaf: number,
    read: LogPage,
    paged: boolean,
  ): Promise<ChatSnapshot> {
    const { size, usage } = await measureChat(parts, rt);
    return {
      chatId,
      messages: await withVersions(parts.store, chatId, tree, read.messages, rt.log),
      nextSeq: tree.nextSeq,
      ...(leaf >= 0 ? { activeLeaf: leaf } : {}),
      ...(paged ? { hasOlder: read.hasOlder } : {}),
      summary: rt.summary,
      healthNotes: [...rt.healthNotes],
      model: size.info,
      contextUsage: usage,
      problem: rt.problem,
      usage: rt.usage,
    };
  }

  const branches: BranchCapability = {
    async selectBranch(chatId, seq, selectOptions = {}) {
      assertSafeChatId(chatId);
      if (runner.isBusy(chatId)) throw new ChatBusyError(chatId);
      selectOptions.abortSignal?.throwIfAborted();
      const page = selectOptions.page ?? { limit: Number.POSITIVE_INFINITY };
      const loaded = await runner.queued(chatId, async () => {
        // A fold ahead belongs to the branch it began on: the branch is left, so it stops.
        ahead.cancel(chatId);
        const chat = await chats.reload(chatId, page, { branch: seq });
        // The chosen branch is the active one from now on, here and for every reader of the store.
        await saveTranscript(parts, chat.rt, keptFromLog(chat.rt));
        return chat;
      });
      const { rt } = loaded;
      const read = loaded.page ?? { messages: [], hasOlder: false };
      return snapshotOf(chatId, rt, rt.tree, rt.leaf, read, selectOptions.page !== undefined);
    },
  };

  return {
    specificationVersion: "v1",
    id: options.id ?? "api",
    displayName: options.displayName ?? options.provider.provider,
    capabilities: { context, branches },
    get model() {
      return parts.model();
    },
    setModel: parts.setModel,
    listModels: parts.listModels,

    async loadChat(chatId, loadOptions = {}): Promise<ChatSnapshot> {
      assertSafeChatId(chatId);
      // Without a page, the whole log: the person reads it all.
      const page = loadOptions.page ?? { limit: Number.POSITIVE_INFINITY };
      // Read from the store each time (another engine over it may have written), unless a turn runs here: then
      // the chat as held, and the page as stored (the turn's messages come in its events).
      if (runner.isBusy(chatId)) {
        const rt = await chats.get(chatId);
        const reading = await parts.store.readChat(chatId, { kept: false, page });
        const read = { messages: reading.page, hasOlder: reading.hasOlder };
        return snapshotOf(chatId, rt, reading.tree, reading.leaf, read, loadOptions.page !== undefined);
      }
      const loaded = await runner.queued(chatId, () => chats.reload(chatId, page));
      const { rt } = loaded;
      const read = loaded.page ?? { messages: [], hasOlder: false };
      return snapshotOf(chatId, rt, rt.tree, rt.leaf, read, loadOptions.page !== undefined);
    },

    subscribe: events.subscribe,
    sendTurn: (input) => runner.start(input, runTurnAndFoldAhead),
  };
}
