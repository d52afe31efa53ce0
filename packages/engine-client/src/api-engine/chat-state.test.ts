import { apiEngineUnderTest } from "@conch/fake-provider";
import { afterEach, describe, expect, it } from "vitest";
import { messageText } from "../messages.js";
import { buildTranscriptFile } from "../transcript/transcript-file.js";

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

describe("the API engine's own fields in the transcript", () => {
  it.each([
    { field: "health", value: 5 },
    { field: "fold", value: { firstKeptSeq: 1e9, textLimit: null } },
    { field: "answerRooms", value: { chat: -4 } },
    { field: "answerRooms", value: { chat: "big" } },
    { field: "usage", value: { inputTokens: "many" } },
  ])(
    "given $field = $value, should treat the file as corrupt: a health note, and the chat goes on from its log",
    async ({ field, value }) => {
      const under = await apiEngineUnderTest([{ reply: "Answered from the log." }]);
      closers.push(() => under.close?.() ?? Promise.resolve());
      const log = [
        { seq: 0, role: "user" as const, parts: [{ type: "text" as const, text: "Earlier question" }], createdAt: 1 },
        {
          seq: 1,
          role: "assistant" as const,
          parts: [{ type: "text" as const, text: "Earlier answer" }],
          createdAt: 2,
        },
      ];
      await under.store.appendLog("bad", log);
      const file = buildTranscriptFile({ id: "bad", kept: log, previous: null });
      await under.store.writeTranscript("bad", { ...file, [field]: value } as never);
      const chat = await under.engine.loadChat("bad");
      expect(chat.healthNotes[0]?.kind).toBe("summary-failed");
      expect(chat.healthNotes[0]?.text).toContain(field);
      const end = await under.engine.sendTurn({ chatId: "bad", seq: 2, text: "And now?" }).done;
      expect(end.status).toBe("done");
      // Everything of the log was sent: not only the system prompt (a fold past the log's end), not max_tokens 0.
      const request = under.server.chatRequests().at(-1)?.body as { messages: unknown[]; max_tokens?: number };
      expect(request.messages.length).toBeGreaterThanOrEqual(4);
      expect(request.max_tokens ?? 1).toBeGreaterThan(0);
      const after = await under.engine.loadChat("bad");
      expect(messageText(after.messages.at(-1) as never)).toBe("Answered from the log.");
    },
  );
});
