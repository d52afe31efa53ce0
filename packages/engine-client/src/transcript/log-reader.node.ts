import { constants as bufferConstants, isUtf8 } from "node:buffer";
import type { FileHandle } from "node:fs/promises";
import type { ChatMessage } from "../messages.js";
import { decodeLogMessage } from "./transcript-file.js";

/**
 * The longest log line this runtime can read: one line becomes one string, and a string holds at most this many
 * characters (UTF-8 never has fewer bytes than characters, so a line of at most this many bytes always fits).
 * The log as a whole has no such limit: it is read line by line.
 */
export const longestLogLineBytes = bufferConstants.MAX_STRING_LENGTH;

/** What reading a log repaired: a seq written twice (two writers at once) kept under the next seq, or dropped. */
export type LogRepair =
  | {
      readonly kind: "renumbered";
      /** The 1-based line. */
      readonly line: number;
      /** The seq it carried, already held by an earlier line. */
      readonly from: number;
      readonly to: number;
    }
  | {
      readonly kind: "dropped";
      readonly line: number;
      readonly seq: number;
      /** The earlier line it is a byte-for-byte copy of. */
      readonly copyOf: number;
    };

export type LogReading =
  | {
      readonly ok: true;
      readonly messages: ChatMessage[];
      /** Bytes of the complete lines (what an append follows). */
      readonly completeBytes: number;
      /** Complete lines read. */
      readonly lines: number;
      /** Bytes after the last newline: an append that never finished. */
      readonly tornBytes: number;
      readonly repairs: readonly LogRepair[];
    }
  | {
      readonly ok: false;
      readonly line: number;
      readonly reason: string;
      readonly cause?: unknown;
      /** Messages before the line. */
      readonly keptMessages: number;
    };

/** The most read at once. */
const largestChunkBytes = 16 * 1024 * 1024;

/**
 * Complete lines of a log file, joined by their newlines (the last one's left off), as read: one piece per chunk
 * read, plus one for each line that ran past a chunk. A piece of one line over the limit has `bytes: null`.
 */
interface LinesPiece {
  /** The byte offset where the first line starts. */
  readonly start: number;
  /** Its bytes: a view into the read buffer, valid until the next piece is asked for. */
  readonly bytes: Buffer | null;
  /** Its length in bytes. */
  readonly length: number;
  /** False for the last line when no newline ends it (an append that never finished). */
  readonly complete: boolean;
}

/**
 * Reads a file a chunk at a time and yields its complete lines in pieces, never the file as one string. A line
 * running past a chunk is held whole only up to `maxLineBytes`.
 */
async function* linePieces(handle: FileHandle, maxLineBytes: number, chunkBytes: number): AsyncGenerator<LinesPiece> {
  const chunk = Buffer.allocUnsafe(chunkBytes);
  let position = 0;
  // The line that runs past the chunk read: its start, and its bytes so far (copied, as the chunk is read into again).
  let start = 0;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let over = false;
  for (;;) {
    const { bytesRead } = await handle.read(chunk, 0, chunkBytes, position);
    if (bytesRead === 0) break;
    const view = chunk.subarray(0, bytesRead);
    let from = 0;
    const first = view.indexOf(0x0a);
    if (pendingBytes > 0 && first !== -1) {
      const length = pendingBytes + first;
      const bytes = over || length > maxLineBytes ? null : Buffer.concat([...pending, view.subarray(0, first)], length);
      yield { start, bytes, length, complete: true };
      pending = [];
      pendingBytes = 0;
      over = false;
      from = first + 1;
      start = position + from;
    }
    const last = first === -1 ? -1 : view.lastIndexOf(0x0a);
    if (last >= from) {
      yield { start: position + from, bytes: view.subarray(from, last), length: last - from, complete: true };
      from = last + 1;
      start = position + from;
    }
    if (from < bytesRead) {
      pendingBytes += bytesRead - from;
      if (!over && pendingBytes > maxLineBytes) {
        over = true;
        pending = [];
      }
      if (!over) pending.push(Buffer.from(view.subarray(from)));
    }
    position += bytesRead;
  }
  if (pendingBytes > 0) {
    yield { start, bytes: over ? null : Buffer.concat(pending, pendingBytes), length: pendingBytes, complete: false };
  }
}

/** The lines of a piece with their byte offsets, split on the bytes (the slow path: for a piece not UTF-8). */
function* bytesLines(piece: LinesPiece & { bytes: Buffer }): Generator<{ start: number; bytes: Buffer }> {
  let from = 0;
  for (;;) {
    const newline = piece.bytes.indexOf(0x0a, from);
    const end = newline === -1 ? piece.bytes.length : newline;
    yield { start: piece.start + from, bytes: piece.bytes.subarray(from, end) };
    if (newline === -1) return;
    from = newline + 1;
  }
}

/**
 * Reads a log file line by line (never as one string, so its size is not bounded by the longest string), checks
 * every line as the message at its place, and repairs a seq written twice: a line that is a byte-for-byte copy of
 * the earlier line with its seq is dropped, any other is kept under the next seq (nothing of the person's lost).
 * A line longer than `maxLineBytes` is reported with the limit. Does not change the file.
 */
export async function readLogFile(
  handle: FileHandle,
  options: { readonly maxLineBytes?: number; readonly chunkBytes?: number } = {},
): Promise<LogReading> {
  const maxLineBytes = options.maxLineBytes ?? longestLogLineBytes;
  const messages: ChatMessage[] = [];
  // Where each message's line is, to compare a duplicate with it byte for byte.
  const places: { start: number; length: number; line: number }[] = [];
  const repairs: LogRepair[] = [];
  let line = 0;
  let completeBytes = 0;
  const failure = (reason: string, cause?: unknown): LogReading => ({
    ok: false,
    line,
    reason,
    keptMessages: messages.length,
    ...(cause === undefined ? {} : { cause }),
  });
  const overLimit = (length: number) =>
    failure(
      `the line is ${length.toLocaleString("en")} bytes, over the longest log line read: ${maxLineBytes.toLocaleString("en")} bytes${maxLineBytes === longestLogLineBytes ? " (this runtime's longest string)" : ""}`,
    );
  /**
   * Takes one complete line (its text already known to be UTF-8): a failure, or null to go on. Synchronous but
   * for a duplicate, which is compared with the earlier line on disk (an await per line would cost more than the line).
   */
  const take = (text: string, start: number, length: number): LogReading | null | Promise<LogReading | null> => {
    line += 1;
    if (length > maxLineBytes) return overLimit(length);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (cause) {
      return failure("the line is not JSON", cause);
    }
    const decoded = decodeLogMessage(value, null);
    if (!decoded.ok) return failure(decoded.reason, decoded.cause);
    const message = decoded.message;
    const expected = messages.length;
    if (message.seq > expected) return failure(`it carries seq ${message.seq} where ${expected} belongs`);
    if (message.seq === expected) {
      messages.push(message);
      places.push({ start, length, line });
      completeBytes = start + length + 1;
      return null;
    }
    const at = line;
    const earlier = places[message.seq] as { start: number; length: number; line: number };
    const copy = earlier.length === length ? sameText(handle, earlier.start, text, length) : Promise.resolve(false);
    return copy.then((same) => {
      if (same) {
        repairs.push({ kind: "dropped", line: at, seq: message.seq, copyOf: earlier.line });
      } else {
        repairs.push({ kind: "renumbered", line: at, from: message.seq, to: expected });
        messages.push({ ...message, seq: expected });
        places.push({ start, length, line: at });
      }
      completeBytes = start + length + 1;
      return null;
    });
  };

  // A log of a usual size is read at once; a large one 16 MiB at a time.
  const chunkBytes = options.chunkBytes ?? Math.min(Math.max((await handle.stat()).size, 1), largestChunkBytes);
  for await (const piece of linePieces(handle, maxLineBytes, chunkBytes)) {
    if (piece.bytes === null) {
      line += 1;
      return overLimit(piece.length);
    }
    if (!piece.complete) {
      return { ok: true, messages, completeBytes, lines: line, tornBytes: piece.length, repairs };
    }
    if (isUtf8(piece.bytes)) {
      // The fast path: the piece decoded once and split as text; a line's byte length only measured.
      let start = piece.start;
      for (const text of piece.bytes.toString("utf8").split("\n")) {
        const length = Buffer.byteLength(text, "utf8");
        const taken = take(text, start, length);
        const failed = taken instanceof Promise ? await taken : taken;
        if (failed) return failed;
        start += length + 1;
      }
      continue;
    }
    for (const lineBytes of bytesLines({ ...piece, bytes: piece.bytes })) {
      // Checked first, so bytes that are not UTF-8 are never quietly read as U+FFFD.
      if (!isUtf8(lineBytes.bytes)) {
        line += 1;
        return failure("the line is not UTF-8");
      }
      const failed = await take(lineBytes.bytes.toString("utf8"), lineBytes.start, lineBytes.bytes.length);
      if (failed) return failed;
    }
  }
  return { ok: true, messages, completeBytes, lines: line, tornBytes: 0, repairs };
}

/** Writes the log again with its repairs applied: every other line copied byte for byte. */
export async function writeRepairedLog(
  from: FileHandle,
  to: FileHandle,
  repairs: readonly LogRepair[],
  options: { readonly maxLineBytes?: number } = {},
): Promise<void> {
  const byLine = new Map(repairs.map((repair) => [repair.line, repair]));
  const batch: Buffer[] = [];
  let batchBytes = 0;
  const flush = async () => {
    if (batchBytes === 0) return;
    await to.write(Buffer.concat(batch, batchBytes));
    batch.length = 0;
    batchBytes = 0;
  };
  let line = 0;
  for await (const piece of linePieces(from, options.maxLineBytes ?? longestLogLineBytes, largestChunkBytes)) {
    if (!piece.complete || piece.bytes === null) break;
    for (const raw of bytesLines({ ...piece, bytes: piece.bytes })) {
      line += 1;
      const repair = byLine.get(line);
      if (repair?.kind === "dropped") continue;
      // Copied: the line is a view into the read buffer, read into again for the next lines.
      let bytes = Buffer.from(raw.bytes);
      if (repair?.kind === "renumbered") {
        const value = JSON.parse(bytes.toString("utf8")) as Record<string, unknown>;
        bytes = Buffer.from(JSON.stringify({ ...value, seq: repair.to }), "utf8");
      }
      batch.push(bytes, newline);
      batchBytes += bytes.length + 1;
    }
    if (batchBytes >= 1024 * 1024) await flush();
  }
  await flush();
}

const newline = Buffer.from("\n");

/** In words, for the error and the health note. */
export function describeRepairs(repairs: readonly LogRepair[]): string {
  const renumbered = repairs.filter((repair) => repair.kind === "renumbered");
  const dropped = repairs.filter((repair) => repair.kind === "dropped");
  const parts: string[] = [];
  if (renumbered.length > 0) {
    parts.push(
      `${renumbered.length} message${renumbered.length === 1 ? "" : "s"} carrying a seq an earlier line holds (two writers at once) kept under the next seq (${renumbered
        .slice(0, 3)
        .map((repair) => `line ${repair.line}: ${repair.from} → ${repair.to}`)
        .join(", ")}${renumbered.length > 3 ? ", …" : ""})`,
    );
  }
  if (dropped.length > 0) {
    parts.push(
      `${dropped.length} line${dropped.length === 1 ? "" : "s"} dropped as byte-for-byte copies of an earlier line (${dropped
        .slice(0, 3)
        .map((repair) => `line ${repair.line} = line ${repair.copyOf}`)
        .join(", ")}${dropped.length > 3 ? ", …" : ""})`,
    );
  }
  return parts.join("; ");
}

async function sameText(handle: FileHandle, start: number, text: string, length: number): Promise<boolean> {
  const earlier = Buffer.allocUnsafe(length);
  let read = 0;
  while (read < length) {
    const { bytesRead } = await handle.read(earlier, read, length - read, start + read);
    if (bytesRead === 0) return false;
    read += bytesRead;
  }
  // Both are UTF-8, so equal text is equal bytes.
  return earlier.toString("utf8") === text;
}
