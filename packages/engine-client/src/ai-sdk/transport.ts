import type { ChatTransport } from "ai";
import type { Engine, TurnInput, TurnStream } from "../engine.js";
import type { EngineEvent } from "../events.js";
import { type Channel, createChannel } from "../kit/channel.js";
import { startCompact } from "./compact.js";
import { type NacreUIMessageChunk, type TurnChunkMapperOptions, turnToUIMessageStream } from "./map-turn.js";
import { type NacreTurnPlan, nacreTurnRequest, placeOnLog, planNacreTurn } from "./plan-turn.js";
import type { NacreUIMessage } from "./ui-message.js";

/**
 * A `ChatTransport` so that `useChat({ transport })` runs on an engine in the page. The seq comes from the log
 * (the messages' metadata, checked by the engine: a stale tab gets `TurnSequenceError`); tool results given with
 * `addToolOutput` continue the same answer; `regenerate` answers again only a message the log left unanswered;
 * an edit is refused (`NacreChatRefusedError`). `stop` aborts the turn.
 */
export function createNacreTransport(engine: Engine): ChatTransport<NacreUIMessage> {
  /**
   * This page's own last turn per chat. `stop` makes `useChat` stop reading at once, so the answer's last seq
   * never reaches its message: the transport remembers it (from the engine's events), and waits for the
   * stopped turn to end before the next one starts.
   */
  const ownTurns = new Map<string, { readonly done: Promise<unknown>; lastSeq: number }>();

  function remember(chatId: string, done: Promise<unknown>): void {
    const turn = { done, lastSeq: -1 };
    ownTurns.set(chatId, turn);
    const unsubscribe = engine.subscribe((event) => {
      if (event.chatId !== chatId) return;
      if (event.type === "turn-start") turn.lastSeq = Math.max(turn.lastSeq, event.message.seq);
      if (event.type === "message-end") turn.lastSeq = Math.max(turn.lastSeq, event.message.seq);
    });
    done.then(unsubscribe, unsubscribe);
  }

  const followed = isRemote(engine) ? follow(engine) : null;

  return {
    async sendMessages({ chatId, trigger, messageId, messages, abortSignal }) {
      const previous = ownTurns.get(chatId);
      await previous?.done.catch(() => undefined);
      const request = nacreTurnRequest({ trigger, messageId, messages });
      // A regenerate names the person's message itself, which the messages place right; an edit follows the
      // message before it, and the engine gives it the log's next seq.
      const editing = trigger === "submit-message" && messageId !== undefined && request.message.role === "user";
      const seq =
        trigger === "submit-message" && !editing ? Math.max(request.seq, (previous?.lastSeq ?? -1) + 1) : request.seq;
      const plan = await placeOnLog(engine, chatId, planNacreTurn({ ...request, seq }), abortSignal);
      if (plan.kind === "compact") {
        const compact = startCompact(engine, chatId, plan, { abortSignal });
        remember(chatId, compact.done);
        return compact.stream as ReadableStream<never>;
      }
      const turn = startPlannedTurn(engine, chatId, plan, abortSignal);
      remember(chatId, turn.done);
      return turnToUIMessageStream(turn, answersOf(plan)) as ReadableStream<never>;
    },
    async reconnectToStream({ chatId }) {
      // An engine in the page ran its turns in the page, which a reload ended: what they kept is in the loaded
      // chat. A remote engine's `loadChat` reads a turn still running on its server to its listeners, from its
      // `turn-start`: that turn, as read so far and then live, is the stream resumed.
      if (!followed) return null;
      await engine.loadChat(chatId);
      if (!followed.engine.isAnswering(chatId)) return null;
      const events = createChannel<EngineEvent>();
      for (const event of followed.running.get(chatId) ?? []) events.push(event);
      const readers = followed.readers.get(chatId) ?? new Set();
      readers.add(events);
      followed.readers.set(chatId, readers);
      const stream = turnToUIMessageStream(events);
      remember(
        chatId,
        new Promise<void>((resolve) => {
          const check = engine.subscribe((event) => {
            if (event.chatId === chatId && event.type === "turn-end") {
              check();
              resolve();
            }
          });
        }),
      );
      return stream as ReadableStream<never>;
    },
  };
}

/** An engine that can tell whether it reads a running turn of a chat (the remote engine). */
function isRemote(engine: Engine): engine is Engine & { isAnswering(chatId: string): boolean } {
  return typeof (engine as { isAnswering?: unknown }).isAnswering === "function";
}

interface FollowedTurns {
  readonly engine: Engine & { isAnswering(chatId: string): boolean };
  /** Each running turn's events so far, from its `turn-start`, by chat. */
  readonly running: Map<string, EngineEvent[]>;
  /** Resumed streams reading a chat's running turn. */
  readonly readers: Map<string, Set<Channel<EngineEvent>>>;
}

/**
 * Keeps every running turn's events from the transport's creation on (create it before loading the chat), so
 * that a resumed stream has the turn from its start; a turn's events are let go at its `turn-end`.
 */
function follow(engine: Engine & { isAnswering(chatId: string): boolean }): FollowedTurns {
  const followed: FollowedTurns = { engine, running: new Map(), readers: new Map() };
  engine.subscribe((event) => {
    const { chatId } = event;
    if (event.type === "turn-start") followed.running.set(chatId, [event]);
    else followed.running.get(chatId)?.push(event);
    for (const reader of followed.readers.get(chatId) ?? []) reader.push(event);
    if (event.type !== "turn-end") return;
    followed.running.delete(chatId);
    for (const reader of followed.readers.get(chatId) ?? []) reader.close();
    followed.readers.delete(chatId);
  });
  return followed;
}

/** A plan that is a turn of the engine (a `/compact` is not). */
export type NacreTurnOfPlan = Exclude<NacreTurnPlan, { kind: "compact" }>;

/** Starts the planned turn and maps its events; shared by the transport and the route. */
export function runPlannedTurn(
  engine: Engine,
  chatId: string,
  plan: NacreTurnOfPlan,
  abortSignal: AbortSignal | undefined,
): ReadableStream<NacreUIMessageChunk> {
  return turnToUIMessageStream(startPlannedTurn(engine, chatId, plan, abortSignal), answersOf(plan));
}

function startPlannedTurn(
  engine: Engine,
  chatId: string,
  plan: NacreTurnOfPlan,
  abortSignal: AbortSignal | undefined,
): TurnStream {
  return engine.sendTurn({ chatId, seq: plan.seq, ...(abortSignal ? { abortSignal } : {}), ...turnFields(plan) });
}

export function answersOf(plan: NacreTurnOfPlan): TurnChunkMapperOptions {
  return plan.kind === "tool-results" ? { answers: plan.answers } : {};
}

export function turnFields(
  plan: NacreTurnOfPlan,
): Pick<TurnInput, "text" | "attachments" | "toolResults" | "retry" | "continuation" | "parent"> {
  switch (plan.kind) {
    case "message":
      return {
        text: plan.text,
        ...(plan.attachments.length > 0 ? { attachments: plan.attachments } : {}),
        ...(plan.continuation ? { continuation: true } : {}),
      };
    case "tool-results":
      return { text: "", toolResults: plan.toolResults };
    case "retry":
      return { text: plan.text, retry: true };
    case "edit":
      return {
        text: plan.text,
        parent: plan.parent,
        ...(plan.attachments.length > 0 ? { attachments: plan.attachments } : {}),
      };
    default:
      return plan satisfies never;
  }
}
