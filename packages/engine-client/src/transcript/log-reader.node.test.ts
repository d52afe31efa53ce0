import { mkdtemp, open, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { ChatMessage } from "../messages.js";
import { type LogReading, readLogFile } from "./log-reader.node.js";

const folders: string[] = [];
afterAll(async () => {
  await Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true })));
});

async function readBytes(bytes: Buffer, options: { maxLineBytes?: number; chunkBytes?: number }): Promise<LogReading> {
  const folder = await mkdtemp(join(tmpdir(), "conch-log-reader-"));
  folders.push(folder);
  const path = join(folder, "c.jsonl");
  await writeFile(path, bytes);
  const handle = await open(path, "r");
  try {
    return await readLogFile(handle, options);
  } finally {
    await handle.close();
  }
}

const said = (seq: number, text: string): ChatMessage => ({ seq, role: "user", parts: [{ type: "text", text }] });
const messages = Array.from({ length: 40 }, (_, seq) => said(seq, `${seq} ${"é🐚 ".repeat(seq % 7)}`));
const log = Buffer.from(messages.map((message) => `${JSON.stringify(message)}\n`).join(""), "utf8");

describe("readLogFile, reading a chunk at a time", () => {
  // Chunks smaller than a line, splitting lines and code points anywhere, up to the whole file at once.
  it.each([1, 7, 64, 333, 4096, log.length + 1])(
    "should read every line whole with %i-byte chunks",
    async (chunkBytes) => {
      const reading = await readBytes(log, { chunkBytes });
      expect(reading).toEqual({
        ok: true,
        messages,
        completeBytes: log.length,
        lines: 40,
        tornBytes: 0,
        repairs: [],
      });
    },
  );

  it.each([5, 50, 4096])("should report a torn last line, whatever the chunk (%i)", async (chunkBytes) => {
    const torn = Buffer.concat([log, Buffer.from('{"seq":40,"ro')]);
    const reading = await readBytes(torn, { chunkBytes });
    expect(reading).toMatchObject({ ok: true, completeBytes: log.length, lines: 40, tornBytes: 13 });
  });

  it.each([3, 64, 100_000])(
    "should find a line that is not UTF-8 at its own line (%i-byte chunks)",
    async (chunkBytes) => {
      const lines = messages.slice(0, 5).map((message) => Buffer.from(`${JSON.stringify(message)}\n`));
      lines.splice(3, 0, Buffer.from([0x7b, 0xc3, 0x28, 0x7d, 0x0a]));
      const reading = await readBytes(Buffer.concat(lines), { chunkBytes });
      expect(reading).toMatchObject({ ok: false, line: 4, reason: "the line is not UTF-8", keptMessages: 3 });
    },
  );

  it.each([16, 256, 100_000])(
    "should refuse a line over the limit, spanning chunks or not (%i)",
    async (chunkBytes) => {
      const long = said(2, "x".repeat(500));
      const bytes = Buffer.from(
        [said(0, "a"), said(1, "b"), long, said(3, "c")].map((message) => `${JSON.stringify(message)}\n`).join(""),
      );
      const reading = await readBytes(bytes, { chunkBytes, maxLineBytes: 200 });
      const length = Buffer.byteLength(JSON.stringify(long));
      expect(reading).toMatchObject({
        ok: false,
        line: 3,
        keptMessages: 2,
        reason: `the line is ${length} bytes, over the longest log line read: 200 bytes`,
      });
    },
  );
});
