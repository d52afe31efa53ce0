import { memo, type ReactNode, useRef } from "react";
import { PlainText } from "./internal/plain-text.js";

/** Lines per chunk: a finished chunk never renders again, so a delta costs one chunk, not the whole reply. */
const linesPerChunk = 64;

/**
 * One block of a reply being written: a paragraph-like run of prose (ended by a blank line outside code), or a
 * code fence (from its opening line to its closing one). `chunks` joined are the block's exact source; every
 * chunk but the last is finished and keeps its identity from delta to delta.
 */
export interface StreamBlock {
  /** Offset of the block in the text: a stable key. */
  readonly start: number;
  readonly kind: "prose" | "code";
  /** A code fence's info string (`ts` in ```` ```ts ````), else "". */
  readonly lang: string;
  readonly chunks: readonly string[];
  /** No more text joins this block. */
  readonly closed: boolean;
}

interface OpenBlock {
  start: number;
  kind: "prose" | "code";
  lang: string;
  fence: string;
  /** Finished chunks, and where the open chunk starts. */
  chunks: string[];
  chunkStart: number;
  chunkLines: number;
  /** Whether a line other than blank ones has been seen. */
  hasText: boolean;
}

/** The state of splitting one growing text; feed it the whole text each time, it reads only what is new. */
export interface StreamSplitter {
  text: string;
  closed: StreamBlock[];
  open: OpenBlock;
  /** Offset of the first line not read yet (a line is read once its line break arrived). */
  lineStart: number;
}

const fenceOpen = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)/;

function openBlock(start: number, kind: "prose" | "code", fence = "", lang = ""): OpenBlock {
  return { start, kind, lang, fence, chunks: [], chunkStart: start, chunkLines: 0, hasText: false };
}

export function createStreamSplitter(): StreamSplitter {
  return { text: "", closed: [], open: openBlock(0, "prose"), lineStart: 0 };
}

function closeBlock(state: StreamSplitter, end: number): void {
  const { open } = state;
  if (end > open.start) {
    const chunks = end > open.chunkStart ? [...open.chunks, state.text.slice(open.chunkStart, end)] : open.chunks;
    state.closed.push({ start: open.start, kind: open.kind, lang: open.lang, chunks, closed: true });
  }
}

/** Reads one complete line (`start` to `end`, its line break included). */
function readLine(state: StreamSplitter, start: number, end: number): void {
  const line = state.text.slice(start, end - 1);
  const { open } = state;
  if (open.kind === "code") {
    const trimmed = line.trim();
    if (trimmed.length >= open.fence.length && trimmed === open.fence[0]?.repeat(trimmed.length)) {
      closeBlock(state, end);
      state.open = openBlock(end, "prose");
      return;
    }
  } else {
    const fence = fenceOpen.exec(line);
    if (fence) {
      closeBlock(state, start);
      state.open = openBlock(start, "code", fence[1] as string, fence[2] ?? "");
      state.open.chunkLines = 1;
      state.open.hasText = true;
      return;
    }
    if (line.trim() === "") {
      if (open.hasText) {
        closeBlock(state, end);
        state.open = openBlock(end, "prose");
      }
      return;
    }
    open.hasText = true;
  }
  open.chunkLines += 1;
  if (open.chunkLines >= linesPerChunk) {
    open.chunks = [...open.chunks, state.text.slice(open.chunkStart, end)];
    open.chunkStart = end;
    open.chunkLines = 0;
  }
}

/**
 * Splits `text` into blocks, reading only what arrived since the last call when `text` grew from the last one
 * (a reply only grows); any other text starts over. Closed blocks and finished chunks keep their identity.
 */
export function splitStream(state: StreamSplitter, text: string): StreamBlock[] {
  const grew = text.length >= state.text.length && text.startsWith(state.text.slice(state.lineStart), state.lineStart);
  if (!grew) Object.assign(state, createStreamSplitter());
  state.text = text;
  let lineEnd = text.indexOf("\n", state.lineStart);
  while (lineEnd !== -1) {
    readLine(state, state.lineStart, lineEnd + 1);
    state.lineStart = lineEnd + 1;
    lineEnd = text.indexOf("\n", state.lineStart);
  }
  const { open } = state;
  if (text.length <= open.start) return state.closed;
  const chunks = text.length > open.chunkStart ? [...open.chunks, text.slice(open.chunkStart)] : open.chunks;
  return [...state.closed, { start: open.start, kind: open.kind, lang: open.lang, chunks, closed: false }];
}

export interface StreamingTextProps {
  text: string;
  /**
   * Renders one block (a Markdown renderer renders prose as Markdown and code as a code block). Called for the
   * open block on every delta and for a closed block once. Default: the chunks as plain text.
   */
  renderBlock?: (block: StreamBlock) => ReactNode;
}

const TextChunk = memo(function TextChunk({ text }: { text: string }) {
  return <PlainText text={text} />;
});

/** The default block: plain text, chunk by chunk (finished chunks do not render again). */
export function PlainStreamBlock({ block }: { block: StreamBlock }) {
  return (
    <div data-nacre-stream-block="" data-kind={block.kind}>
      {block.chunks.map((chunk, index) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: chunks only append, their place is their identity
        <TextChunk key={index} text={chunk} />
      ))}
    </div>
  );
}

const Block = memo(function Block({
  block,
  renderBlock,
}: {
  block: StreamBlock;
  renderBlock: StreamingTextProps["renderBlock"];
}) {
  return renderBlock ? renderBlock(block) : <PlainStreamBlock block={block} />;
});

/**
 * The text of a reply being written, split into blocks so that a delta renders the open block only: closed
 * blocks are memoised and never render again, however long the reply grows.
 */
export function StreamingText({ text, renderBlock }: StreamingTextProps) {
  const splitter = useRef<StreamSplitter | null>(null);
  splitter.current ??= createStreamSplitter();
  const blocks = splitStream(splitter.current, text);
  return blocks.map((block) => <Block key={block.start} block={block} renderBlock={renderBlock} />);
}
