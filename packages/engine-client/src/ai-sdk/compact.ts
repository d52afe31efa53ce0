import { type CompactResult, type Engine, hasContext } from "../engine.js";
import { NacreChatRefusedError } from "../errors.js";
import type { EngineEvent } from "../events.js";
import type { NacreUIMessageChunk } from "./map-turn.js";
import type { NacreFoldData } from "./ui-message.js";

/** Options of {@link startCompact}. */
export interface StartCompactOptions {
  readonly abortSignal?: AbortSignal | undefined;
  /** Sees each of the chat's events while the fold runs (the route records them as the chat's running work). */
  readonly onEvent?: (event: EngineEvent) => void;
}

let compacts = 0;

/**
 * `/compact [what to keep]` typed into a `useChat` page: the engine's fold on request, never a message to the
 * model. The page gets one message holding the fold's `data-nacre-fold` part, `compacting` and then what came of
 * it, updated in place (the divider moves with it), and health notes as transient parts. The message sits after
 * the log's last one (its metadata say so), so the next seq still comes from the log; the log itself keeps no
 * message for it, only the summary. Refused (`no-compact`) when the engine keeps no transcript.
 */
export function startCompact(
  engine: Engine,
  chatId: string,
  plan: { readonly seq: number; readonly keep?: string },
  options: StartCompactOptions = {},
): { readonly stream: ReadableStream<NacreUIMessageChunk>; readonly done: Promise<CompactResult> } {
  if (!hasContext(engine)) throw new NacreChatRefusedError("no-compact");
  const capability = engine.capabilities.context;
  compacts += 1;
  const messageId = `nacre-compact-${plan.seq}-${compacts}`;
  const foldId = `fold-compact-${plan.seq}-${compacts}`;
  const last = plan.seq - 1;
  let settle: { resolve(result: CompactResult): void; reject(error: unknown): void } | null = null;
  const done = new Promise<CompactResult>((resolve, reject) => {
    settle = { resolve, reject };
  });
  done.catch(() => undefined);
  const stream = new ReadableStream<NacreUIMessageChunk>({
    async start(controller) {
      const fold = (data: NacreFoldData): NacreUIMessageChunk => ({ type: "data-nacre-fold", id: foldId, data });
      controller.enqueue({ type: "start", messageId, messageMetadata: { seq: last, lastSeq: last } });
      controller.enqueue(fold({ status: "compacting", reason: "manual" }));
      const unsubscribe = engine.subscribe((event) => {
        if (event.chatId !== chatId) return;
        options.onEvent?.(event);
        if (event.type === "health-note") {
          controller.enqueue({ type: "data-nacre-health", id: event.note.id, data: event.note, transient: true });
        }
      });
      try {
        const result = await capability.compact(chatId, {
          ...(plan.keep !== undefined ? { keep: plan.keep } : {}),
          ...(options.abortSignal ? { abortSignal: options.abortSignal } : {}),
        });
        controller.enqueue(fold(foldDataOf(result)));
        controller.enqueue({ type: "finish" });
        controller.close();
        settle?.resolve(result);
      } catch (error) {
        controller.error(error);
        settle?.reject(error);
      } finally {
        unsubscribe();
      }
    },
  });
  return { stream, done };
}

function foldDataOf(result: CompactResult): NacreFoldData {
  switch (result.status) {
    case "compacted":
      return { status: "compacted", reason: "manual", summary: result.summary };
    case "nothing-to-fold":
    case "no-summary":
    case "handed-over":
    case "aborted":
      return { status: "skipped", reason: "manual", why: result.status };
    default:
      return result satisfies never;
  }
}
