import type { InferUIMessageChunk } from "ai";
import type { EngineEvent, MessageEndEvent } from "../events.js";
import { answerMessageId, type NacreFoldData, type NacreMessageMetadata, type NacreUIMessage } from "./ui-message.js";

/** A chunk of the AI SDK's UI message stream, typed for {@link NacreUIMessage}. */
export type NacreUIMessageChunk = InferUIMessageChunk<NacreUIMessage>;

/** Options of {@link createTurnChunkMapper}. */
export interface TurnChunkMapperOptions {
  /**
   * The person's message the answer belongs to. Default: the turn's opening message when it is the person's.
   * A turn that continues with tool results opens with the tool message, so its caller names the seq.
   */
  readonly answers?: number;
}

/** Maps one turn's engine events to UI message chunks, one event at a time. */
export interface TurnChunkMapper {
  /** The chunks one event becomes, in order (often none, or one). */
  map(event: EngineEvent): NacreUIMessageChunk[];
  /** The chunks that close what is still open when the events end without `turn-end` (a broken stream). */
  end(): NacreUIMessageChunk[];
}

type OpenBlock = { readonly kind: "text" | "reasoning"; readonly id: string } | null;

/**
 * One mapper from a turn's events to the chunks `useChat` reads: text and reasoning in blocks, tool calls as
 * tool parts, a fold as one `data-nacre-fold` part updated in place by its id, health notes as transient
 * `data-nacre-health` parts, a problem as a `data-nacre-problem` part, seqs and usage as message metadata, and
 * `finish` or `abort` at the turn's end.
 */
export function createTurnChunkMapper(options: TurnChunkMapperOptions = {}): TurnChunkMapper {
  let answers = options.answers;
  let started = false;
  let finished = false;
  let open: OpenBlock = null;
  let blocks = 0;
  let folds = 0;
  let foldId: string | null = null;
  // How the turn's last message ended: a turn that is done on a cut-off message finishes with `length`.
  let lastFinish: MessageEndEvent["finishReason"] | null = null;

  function start(seq: number): NacreUIMessageChunk[] {
    if (started) return [];
    started = true;
    answers ??= seq;
    return [{ type: "start", messageId: answerMessageId(answers), messageMetadata: { seq: answers } }];
  }

  /** Chunks that need a message: the first event of a turn read from its middle starts it too. */
  function begin(seq: number): NacreUIMessageChunk[] {
    return started ? [] : start(answers ?? seq);
  }

  function close(): NacreUIMessageChunk[] {
    if (open === null) return [];
    const block = open;
    open = null;
    return [block.kind === "text" ? { type: "text-end", id: block.id } : { type: "reasoning-end", id: block.id }];
  }

  function openBlock(kind: "text" | "reasoning", seq: number): NacreUIMessageChunk[] {
    if (open?.kind === kind) return [];
    const chunks = close();
    blocks += 1;
    open = { kind, id: `${kind}-${seq}-${blocks}` };
    chunks.push(kind === "text" ? { type: "text-start", id: open.id } : { type: "reasoning-start", id: open.id });
    return chunks;
  }

  /** A fold of this turn: it comes after `turn-start`, so the answer has started; its part is updated by id. */
  function fold(data: NacreFoldData): NacreUIMessageChunk[] {
    if (!started || answers === undefined) return [];
    // A fold's progress updates its part; a new fold opens a part of its own.
    if ((data.status === "compacting" && data.piece === undefined) || foldId === null) {
      folds += 1;
      foldId = `fold-${answers}-${folds}`;
    }
    const chunks: NacreUIMessageChunk[] = [{ type: "data-nacre-fold", id: foldId, data }];
    if (data.status !== "compacting") foldId = null;
    return chunks;
  }

  function metadata(messageMetadata: Partial<NacreMessageMetadata>): NacreUIMessageChunk {
    // The SDK merges metadata chunks into what the message holds; `seq` came with `start`.
    return { type: "message-metadata", messageMetadata: messageMetadata as NacreMessageMetadata };
  }

  function map(event: EngineEvent): NacreUIMessageChunk[] {
    if (finished) return [];
    switch (event.type) {
      case "turn-start": {
        const chunks = start(event.message.role === "user" ? event.message.seq : (answers ?? event.message.seq));
        chunks.push(metadata({ lastSeq: event.message.seq }));
        return chunks;
      }
      case "message-start":
        return [...begin(event.seq), ...close(), { type: "start-step" }];
      case "text-delta":
        return [
          ...begin(event.seq),
          ...openBlock("text", event.seq),
          { type: "text-delta", id: openId(), delta: event.delta },
        ];
      case "thinking-delta":
        return [
          ...begin(event.seq),
          ...openBlock("reasoning", event.seq),
          { type: "reasoning-delta", id: openId(), delta: event.delta },
        ];
      case "tool-call": {
        const chunks = [...begin(event.seq), ...close()];
        const input = parseArguments(event.arguments);
        chunks.push(
          input.ok
            ? { type: "tool-input-available", toolCallId: event.id, toolName: event.name, input: input.value }
            : {
                type: "tool-input-error",
                toolCallId: event.id,
                toolName: event.name,
                input: event.arguments,
                errorText: "The model wrote arguments that are not JSON",
              },
        );
        return chunks;
      }
      case "message-end": {
        const chunks = [...begin(event.message.seq), ...close(), { type: "finish-step" as const }];
        lastFinish = event.finishReason;
        chunks.push(
          metadata({
            lastSeq: event.message.seq,
            ...(event.message.model ? { model: event.message.model } : {}),
            finishReason: event.finishReason,
          }),
        );
        return chunks;
      }
      case "usage":
        return started ? [metadata({ usage: event.usage })] : [];
      case "compacting":
        return fold({
          status: "compacting",
          reason: event.reason,
          ...(event.piece !== undefined && event.pieces !== undefined
            ? { piece: event.piece, pieces: event.pieces }
            : {}),
        });
      case "compacted": {
        const { type: _type, chatId: _chatId, ...summary } = event;
        return fold({ status: "compacted", reason: event.reason, summary });
      }
      case "compaction-skipped":
        return fold({ status: "skipped", reason: event.reason, why: event.why });
      case "healed":
        // The health note that follows says it in words; the heal itself changes nothing the person sees.
        return [];
      case "health-note":
        return [{ type: "data-nacre-health", id: event.note.id, data: event.note, transient: true }];
      case "turn-problem":
        return [
          ...begin(event.seq),
          ...close(),
          { type: "data-nacre-problem", id: `problem-${event.seq}`, data: { seq: event.seq, problem: event.problem } },
        ];
      case "turn-end": {
        const chunks = [...begin(event.seq), ...close()];
        finished = true;
        const turnMetadata = {
          usage: event.usage,
          ...(event.contextUsage ? { contextUsage: event.contextUsage } : {}),
        } as NacreMessageMetadata;
        switch (event.status) {
          case "aborted":
            chunks.push(metadata(turnMetadata), { type: "abort", reason: "aborted" });
            return chunks;
          case "done":
            chunks.push({
              type: "finish",
              finishReason: lastFinish === "length" ? "length" : "stop",
              messageMetadata: turnMetadata,
            });
            return chunks;
          case "tool-calls":
            chunks.push({ type: "finish", finishReason: "tool-calls", messageMetadata: turnMetadata });
            return chunks;
          case "problem":
            chunks.push({ type: "finish", finishReason: "error", messageMetadata: turnMetadata });
            return chunks;
          default:
            return event.status satisfies never;
        }
      }
      default:
        return event satisfies never;
    }
  }

  function openId(): string {
    // Only called right after openBlock, which leaves a block open.
    return open?.id ?? "";
  }

  return {
    map,
    end() {
      if (finished || !started) return [];
      finished = true;
      return close();
    },
  };
}

/**
 * The UI message stream of one turn. A turn that fails outright (a stale seq, a busy chat) errors the stream,
 * which `useChat` shows as its `error`; the log is untouched.
 */
export function turnToUIMessageStream(
  events: AsyncIterable<EngineEvent>,
  options: TurnChunkMapperOptions = {},
): ReadableStream<NacreUIMessageChunk> {
  const mapper = createTurnChunkMapper(options);
  const iterator = events[Symbol.asyncIterator]();
  return new ReadableStream<NacreUIMessageChunk>({
    async pull(controller) {
      // Pull until an event gives chunks, so that the reader is never left waiting on an empty pull.
      for (;;) {
        const next = await iterator.next();
        if (next.done) {
          for (const chunk of mapper.end()) controller.enqueue(chunk);
          controller.close();
          return;
        }
        const chunks = mapper.map(next.value);
        for (const chunk of chunks) controller.enqueue(chunk);
        if (chunks.length > 0) return;
      }
    },
    async cancel() {
      await iterator.return?.();
    },
  });
}

function parseArguments(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: text.trim() === "" ? {} : JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}
