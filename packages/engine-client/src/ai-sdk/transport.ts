import type { ChatTransport } from "ai";
import type { Engine, TurnInput } from "../engine.js";
import { type NacreUIMessageChunk, turnToUIMessageStream } from "./map-turn.js";
import { checkRetry, type NacreTurnPlan, nacreTurnRequest, planNacreTurn } from "./plan-turn.js";
import type { NacreUIMessage } from "./ui-message.js";

/**
 * A `ChatTransport` so that `useChat({ transport })` runs on an engine in the page. The seq comes from the log
 * (the messages' metadata, checked by the engine: a stale tab gets `TurnSequenceError`); tool results given with
 * `addToolOutput` continue the same answer; `regenerate` answers again only a message the log left unanswered;
 * an edit is refused (`NacreChatRefusedError`). `stop` aborts the turn.
 */
export function createNacreTransport(engine: Engine): ChatTransport<NacreUIMessage> {
  return {
    async sendMessages({ chatId, trigger, messageId, messages, abortSignal }) {
      const plan = planNacreTurn(nacreTurnRequest({ trigger, messageId, messages }));
      if (plan.kind === "retry") await checkRetry(engine, chatId, plan.seq, abortSignal);
      return runPlannedTurn(engine, chatId, plan, abortSignal) as ReadableStream<never>;
    },
    async reconnectToStream() {
      // An engine in the page runs its turns in the page: after a reload nothing of them runs any more. A turn
      // running on a server reaches a reloaded page through the wire protocol (see `nacreChatResponse`).
      return null;
    },
  };
}

/** Starts the planned turn and maps its events; shared by the transport and the route. */
export function runPlannedTurn(
  engine: Engine,
  chatId: string,
  plan: NacreTurnPlan,
  abortSignal: AbortSignal | undefined,
): ReadableStream<NacreUIMessageChunk> {
  const input: TurnInput = {
    chatId,
    seq: plan.seq,
    ...(abortSignal ? { abortSignal } : {}),
    ...turnFields(plan),
  };
  const turn = engine.sendTurn(input);
  return turnToUIMessageStream(turn, plan.kind === "tool-results" ? { answers: plan.answers } : {});
}

function turnFields(plan: NacreTurnPlan): Pick<TurnInput, "text" | "attachments" | "toolResults" | "retry"> {
  switch (plan.kind) {
    case "message":
      return { text: plan.text, ...(plan.attachments.length > 0 ? { attachments: plan.attachments } : {}) };
    case "tool-results":
      return { text: "", toolResults: plan.toolResults };
    case "retry":
      return { text: plan.text, retry: true };
    default:
      return plan satisfies never;
  }
}
