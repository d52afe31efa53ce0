import { constants as bufferConstants } from "node:buffer";
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

/** One line of a log file, as split from the bytes. */
interface RawLine {
  /** 1-based. */
  readonly line: number;
  /** The byte offset where the line starts. */
  readonly start: number;
  /** Its length in bytes, without the newline. */
  readonly length: number;
  /** Its bytes; null when longer than the limit (they were not kept). */
  readonly bytes: Buffer | null;
  /** False for the last line when no newline ends it. */
  readonly complete: boolean;
}

/** Splits a file into lines as it reads it, a chunk at a time; a line is held whole only up to `maxLineBytes`. */
async function* splitLines(handle: FileHandle, maxLineBytes: number, chunkBytes: number): AsyncGenerator<RawLine> {
  const chunk = Buffer.allocUnsafe(chunkBytes);
  let position = 0;
  let line = 1;
  let start = 0;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let over = false;
  for (;;) {
    const { bytesRead } = await handle.read(chunk, 0, chunkBytes, position);
    if (bytesRead === 0) break;
    const view = chunk.subarray(0, bytesRead);
    let from = 0;
    while (from < bytesRead) {
      const newline = view.indexOf(0x0a, from);
      const end = newline === -1 ? bytesRead : newline;
      if (!over && pendingBytes + (end - from) > maxLineBytes) {
        over = true;
        pending = [];
      }
      if (!over) pending.push(Buffer.from(view.subarray(from, end)));
      pendingBytes += end - from;
      if (newline === -1) break;
      const bytes = over ? null : pending.length === 1 ? (pending[0] as Buffer) : Buffer.concat(pending, pendingBytes);
      yield { line, start, length: pendingBytes, bytes, complete: true };
      line += 1;
      start = position + newline + 1;
      pending = [];
      pendingBytes = 0;
      over = false;
      from = newline + 1;
    }
    position += bytesRead;
  }
  if (pendingBytes > 0) {
    yield {
      line,
      start,
      length: pendingBytes,
      bytes: over ? null : Buffer.concat(pending, pendingBytes),
      complete: false,
    };
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
  const decoder = new TextDecoder("utf-8", { fatal: true });
  const messages: ChatMessage[] = [];
  // Where each message's line is, to compare a duplicate with it byte for byte.
  const places: { start: number; length: number; line: number }[] = [];
  const repairs: LogRepair[] = [];
  let completeBytes = 0;
  let lines = 0;
  for await (const raw of splitLines(handle, maxLineBytes, options.chunkBytes ?? 1024 * 1024)) {
    if (!raw.complete) {
      return { ok: true, messages, completeBytes, lines, tornBytes: raw.length, repairs };
    }
    const fail = (reason: string, cause?: unknown): LogReading => ({
      ok: false,
      line: raw.line,
      reason,
      keptMessages: messages.length,
      ...(cause === undefined ? {} : { cause }),
    });
    if (raw.bytes === null) {
      return fail(
        `the line is ${raw.length.toLocaleString("en")} bytes, over the longest log line read: ${maxLineBytes.toLocaleString("en")} bytes${maxLineBytes === longestLogLineBytes ? " (this runtime's longest string)" : ""}`,
      );
    }
    let text: string;
    try {
      text = decoder.decode(raw.bytes);
    } catch (cause) {
      return fail("the line is not UTF-8", cause);
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (cause) {
      return fail("the line is not JSON", cause);
    }
    const decoded = decodeLogMessage(value, null);
    if (!decoded.ok) return fail(decoded.reason, decoded.cause);
    const seq = decoded.message.seq;
    const expected = messages.length;
    if (seq > expected) return fail(`it carries seq ${seq} where ${expected} belongs`);
    if (seq < expected) {
      const earlier = places[seq] as { start: number; length: number; line: number };
      if (earlier.length === raw.length && (await sameBytes(handle, earlier.start, raw.bytes))) {
        repairs.push({ kind: "dropped", line: raw.line, seq, copyOf: earlier.line });
      } else {
        repairs.push({ kind: "renumbered", line: raw.line, from: seq, to: expected });
        messages.push({ ...decoded.message, seq: expected });
        places.push({ start: raw.start, length: raw.length, line: raw.line });
      }
    } else {
      messages.push(decoded.message);
      places.push({ start: raw.start, length: raw.length, line: raw.line });
    }
    completeBytes = raw.start + raw.length + 1;
    lines = raw.line;
  }
  return { ok: true, messages, completeBytes, lines, tornBytes: 0, repairs };
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
  for await (const raw of splitLines(from, options.maxLineBytes ?? longestLogLineBytes, 1024 * 1024)) {
    if (!raw.complete) break;
    const repair = byLine.get(raw.line);
    if (repair?.kind === "dropped") continue;
    let bytes = raw.bytes as Buffer;
    if (repair?.kind === "renumbered") {
      const value = JSON.parse(bytes.toString("utf8")) as Record<string, unknown>;
      bytes = Buffer.from(JSON.stringify({ ...value, seq: repair.to }), "utf8");
    }
    batch.push(bytes, newline);
    batchBytes += bytes.length + 1;
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

async function sameBytes(handle: FileHandle, start: number, bytes: Buffer): Promise<boolean> {
  const earlier = Buffer.allocUnsafe(bytes.length);
  let read = 0;
  while (read < bytes.length) {
    const { bytesRead } = await handle.read(earlier, read, bytes.length - read, start + read);
    if (bytesRead === 0) return false;
    read += bytesRead;
  }
  return earlier.equals(bytes);
}
