import { isUtf8 } from "node:buffer";
import type { FileHandle } from "node:fs/promises";
import type { ChatMessage } from "../messages.js";
import { decodeLogMessage } from "./transcript-file.js";

/**
 * Where the lines of a log file start, learned from its end backwards: a turn reads the log's end (its kept
 * part) and a person reads it page by page from the end, so neither reads the file from its start. In a log
 * as the store writes it, line `n` holds seq `n`; anything else is for the full read (`readLogFile`) to find,
 * report and repair, and every function here answers null or false for it.
 */
export interface LogLines {
  /** The file's size this is true for: it ends with a complete line there. */
  readonly size: number;
  /** The seq of the first line whose start is known. */
  readonly first: number;
  /** `starts[i]` is where the line of seq `first + i` starts; the last entry is `size`, the end of the last line. */
  readonly starts: readonly number[];
}

/** How many messages the log holds, by its lines. */
export function nextSeqOf(lines: LogLines): number {
  return lines.first + lines.starts.length - 1;
}

const newline = 0x0a;
/** Read backwards this much at a time: a few messages of a usual size. */
const chunkBytes = 64 * 1024;

async function readAt(handle: FileHandle, start: number, end: number): Promise<Buffer> {
  const buffer = Buffer.allocUnsafe(end - start);
  let read = 0;
  while (read < buffer.length) {
    const { bytesRead } = await handle.read(buffer, read, buffer.length - read, start + read);
    if (bytesRead === 0) break;
    read += bytesRead;
  }
  return buffer.subarray(0, read);
}

/** The seq a line's message carries, or null when the line is not a message. */
function seqOfLine(bytes: Buffer): number | null {
  if (!isUtf8(bytes)) return null;
  try {
    const decoded = decodeLogMessage(JSON.parse(bytes.toString("utf8")), null);
    return decoded.ok ? decoded.message.seq : null;
  } catch {
    return null;
  }
}

/**
 * The lines of a log file of `size` bytes as far as known: `known` carried forward over what was appended since
 * (the start of a file never changes under an append), or the last line alone, read from the end. Null when the
 * file does not end with a complete line whose seq follows (an append cut short, two writers at once).
 */
export async function tailLines(
  handle: FileHandle,
  size: number,
  known: LogLines | undefined,
): Promise<LogLines | null> {
  if (size === 0) return { size: 0, first: 0, starts: [0] };
  if (known !== undefined && known.size === size) return known;
  if (known !== undefined && known.size < size) {
    const added = await readAt(handle, known.size, size);
    if (added.length !== size - known.size || added[added.length - 1] !== newline) return null;
    const starts = [...known.starts];
    let lineStart = known.size;
    for (let at = added.indexOf(newline); at !== -1; at = added.indexOf(newline, at + 1)) {
      lineStart = starts[starts.length - 1] as number;
      starts.push(known.size + at + 1);
    }
    const lines: LogLines = { size, first: known.first, starts };
    return seqOfLine(await readAt(handle, lineStart, size - 1)) === nextSeqOf(lines) - 1 ? lines : null;
  }
  // The last line: from the newline before it (or the file's start) to the newline that ends the file.
  let scanEnd = size - 1;
  const last = await readAt(handle, scanEnd, size);
  if (last[0] !== newline) return null;
  let lineStart = 0;
  while (scanEnd > 0) {
    const chunkStart = Math.max(0, scanEnd - chunkBytes);
    const chunk = await readAt(handle, chunkStart, scanEnd);
    const at = chunk.lastIndexOf(newline);
    if (at !== -1) {
      lineStart = chunkStart + at + 1;
      break;
    }
    scanEnd = chunkStart;
  }
  const seq = seqOfLine(await readAt(handle, lineStart, size - 1));
  return seq === null ? null : { size, first: seq, starts: [lineStart, size] };
}

/**
 * `lines` with the starts of earlier lines read backwards, until the line of seq `seq` is known. False when the
 * file's start comes at another seq than 0 (its lines are not one per seq).
 */
export async function linesFrom(handle: FileHandle, lines: LogLines, seq: number): Promise<LogLines | false> {
  if (lines.first <= seq) return lines;
  const earlier: number[] = [];
  let first = lines.first;
  // The newline that ends the line before the first known one, and everything after it, is scanned.
  let scanEnd = (lines.starts[0] as number) - 1;
  while (first > seq && scanEnd >= 0) {
    const chunkStart = Math.max(0, scanEnd - chunkBytes);
    const chunk = await readAt(handle, chunkStart, scanEnd);
    let at = chunk.length;
    while (first > seq) {
      at = at === 0 ? -1 : chunk.lastIndexOf(newline, at - 1);
      if (at === -1) break;
      earlier.push(chunkStart + at + 1);
      first -= 1;
    }
    if (first > seq && chunkStart === 0) {
      // The file's start: the first line starts there.
      earlier.push(0);
      first -= 1;
      break;
    }
    scanEnd = at === -1 ? chunkStart : chunkStart + at;
  }
  if (first > seq || (earlier.at(-1) === 0 && first !== 0) || first < 0) return false;
  return { size: lines.size, first, starts: [...earlier.reverse(), ...lines.starts] };
}

/**
 * The messages of seqs `from` to `to` (excluded), each checked as the message at its place; null when one is not,
 * or is longer than `maxLineBytes` (the full read reports it).
 */
export async function readLines(
  handle: FileHandle,
  lines: LogLines,
  from: number,
  to: number,
  maxLineBytes: number,
): Promise<ChatMessage[] | null> {
  if (from < lines.first || to > nextSeqOf(lines) || from >= to) return from >= to ? [] : null;
  const start = lines.starts[from - lines.first] as number;
  const end = lines.starts[to - lines.first] as number;
  const bytes = await readAt(handle, start, end);
  if (bytes.length !== end - start || !isUtf8(bytes)) return null;
  const texts = bytes.toString("utf8").split("\n");
  texts.pop();
  if (texts.length !== to - from) return null;
  const messages: ChatMessage[] = [];
  for (const [index, text] of texts.entries()) {
    const length =
      (lines.starts[from - lines.first + index + 1] as number) -
      (lines.starts[from - lines.first + index] as number) -
      1;
    if (length > maxLineBytes) return null;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return null;
    }
    const decoded = decodeLogMessage(value, from + index);
    if (!decoded.ok) return null;
    messages.push(decoded.message);
  }
  return messages;
}
