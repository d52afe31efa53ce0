import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { apiEngineUnderTest } from "@conch/fake-provider";
import { afterEach, describe, expect, it } from "vitest";
import { TranscriptCorruptError } from "../errors.js";
import { messageText } from "../messages.js";
import type { ChatStore } from "../transcript/chat-store.js";
import { createFileChatStore } from "../transcript/file-store.node.js";
import { createMemoryChatStore } from "../transcript/memory-store.js";
import { buildTranscriptFile, type TranscriptFile } from "../transcript/transcript-file.js";
import { engineFieldsProblem } from "./chat-state.js";

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

async function fileStore(): Promise<{ store: ChatStore; folder: string }> {
  const folder = await mkdtemp(join(tmpdir(), "chat-state-"));
  closers.push(() => rm(folder, { recursive: true, force: true }));
  return { store: createFileChatStore({ root: folder }), folder };
}

const log = [
  { seq: 0, role: "user" as const, parts: [{ type: "text" as const, text: "Earlier question" }], createdAt: 1 },
  { seq: 1, role: "assistant" as const, parts: [{ type: "text" as const, text: "Earlier answer" }], createdAt: 2 },
];

const badFields = [
  { field: "health", value: 5 },
  { field: "fold", value: { firstKeptSeq: 1e9, textLimit: null } },
  { field: "answerRooms", value: { chat: -4 } },
  { field: "answerRooms", value: { chat: "big" } },
  { field: "usage", value: { inputTokens: "many" } },
];

describe("the API engine's own fields in the transcript", () => {
  describe.each(["memory", "file"] as const)("in the %s store", (kind) => {
    it.each(badFields)(
      "given $field = $value, should move the file aside as corrupt, say where, and go on from the log",
      async ({ field, value }) => {
        const { store, folder } = kind === "file" ? await fileStore() : { store: createMemoryChatStore(), folder: "" };
        const under = await apiEngineUnderTest([{ reply: "Answered from the log." }], { store });
        closers.push(() => under.close?.() ?? Promise.resolve());
        await store.appendLog("bad", log);
        const file = buildTranscriptFile({ id: "bad", kept: log, previous: null });
        const written = { ...file, [field]: value };
        await store.writeTranscript("bad", written as never);

        const chat = await under.engine.loadChat("bad");
        const note = chat.healthNotes[0];
        expect(note?.kind).toBe("summary-failed");
        expect(note?.text).toContain(`the field ${field}`);
        expect(note?.text).toMatch(kind === "file" ? /kept at .*bad\.json\.corrupt-/ : /kept at memory:\/\/corrupt\//);
        if (kind === "file") {
          // The bad file itself is kept, byte for byte, beside where it was.
          const names = await readdir(join(folder, "api-sessions"));
          const aside = names.find((name) => name.startsWith("bad.json.corrupt-"));
          expect(aside).toBeDefined();
          expect(JSON.parse(await readFile(join(folder, "api-sessions", aside ?? ""), "utf8"))).toEqual(written);
        }

        const end = await under.engine.sendTurn({ chatId: "bad", seq: 2, text: "And now?" }).done;
        expect(end.status).toBe("done");
        // Everything of the log was sent: not only the system prompt (a fold past the log's end), not max_tokens 0.
        const request = under.server.chatRequests().at(-1)?.body as { messages: unknown[]; max_tokens?: number };
        expect(request.messages.length).toBeGreaterThanOrEqual(4);
        expect(request.max_tokens ?? 1).toBeGreaterThan(0);
        const after = await under.engine.loadChat("bad");
        expect(messageText(after.messages.at(-1) as never)).toBe("Answered from the log.");
        // The turn wrote a good transcript in its place; it reads without a check failing.
        const check = (read: TranscriptFile) => engineFieldsProblem(read, after.messages.length);
        expect(await store.readTranscript("bad", { check })).not.toBeNull();
      },
    );
  });

  it("should give the typed error naming the field to a reader of the store", async () => {
    const store = createMemoryChatStore();
    await store.appendLog("bad", log);
    const file = buildTranscriptFile({ id: "bad", kept: log, previous: null });
    await store.writeTranscript("bad", { ...file, health: 5 } as never);
    const error = await store
      .readTranscript("bad", { check: (read) => engineFieldsProblem(read, log.length) })
      .catch((caught: unknown) => caught);
    expect(TranscriptCorruptError.isInstance(error)).toBe(true);
    expect((error as TranscriptCorruptError).reason).toContain("the field health is not valid");
    // Moved aside: the next read finds no transcript.
    expect(await store.readTranscript("bad")).toBeNull();
  });
});
