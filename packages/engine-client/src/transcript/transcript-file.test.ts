import { describe, expect, it } from "vitest";
import { InvalidChatRecordError } from "../errors.js";
import { sampleLog, sampleSummary } from "./testing/fixtures.js";
import {
  buildTranscriptFile,
  decodeLogMessage,
  decodeTranscript,
  encodeTranscript,
  keptSeqs,
} from "./transcript-file.js";

describe("buildTranscriptFile", () => {
  describe("given kept log messages", () => {
    it("should hold them without their seq, and their seqs beside them", () => {
      const log = sampleLog();
      const file = buildTranscriptFile({ id: "c", kept: log.slice(3), summary: sampleSummary(3), factor: 1.5 });
      expect(file.version).toBe(1);
      expect(file.seqs).toEqual([3, 4]);
      expect(file.messages).toEqual(log.slice(3).map(({ seq: _seq, ...message }) => message));
      expect(file.summary?.firstKeptSeq).toBe(3);
      expect(file.factor).toBe(1.5);
    });
  });

  describe("given a previous file with a summary and fields of a later version", () => {
    it("should carry them over and replace only messages and seqs", () => {
      const log = sampleLog();
      const previous = {
        ...buildTranscriptFile({ id: "c", kept: log.slice(3, 4), summary: sampleSummary(3), factor: 1.2 }),
        readUntil: 2,
        learned: [{ at: 5 }],
      };
      const next = buildTranscriptFile({ id: "c", kept: log.slice(3), previous, updatedAt: 9 });
      expect(next).toMatchObject({ readUntil: 2, learned: [{ at: 5 }], factor: 1.2, updatedAt: 9, seqs: [3, 4] });
      expect(next.summary).toEqual(sampleSummary(3));
    });
  });
});

describe("keptSeqs", () => {
  describe("given a file with seqs", () => {
    it("should return them as they are", () => {
      expect(keptSeqs({ messages: [{ role: "user", parts: [] }], seqs: [7] }, 20)).toEqual([7]);
    });
  });

  describe("given a file without seqs (version 1 before them, or rewritten by a writer that dropped them)", () => {
    it("should place the kept messages at the end of the log", () => {
      const messages = [
        { role: "user" as const, parts: [] },
        { role: "assistant" as const, parts: [] },
      ];
      expect(keptSeqs({ messages }, 5)).toEqual([3, 4]);
      expect(keptSeqs({ messages: [] }, 5)).toEqual([]);
    });

    it("should return null when the file holds more messages than the log", () => {
      expect(keptSeqs({ messages: [{ role: "user", parts: [] }] }, 0)).toBeNull();
    });
  });
});

describe("encodeTranscript and decodeTranscript", () => {
  describe("given a transcript with every kind of part and unknown fields at every level", () => {
    it("should read back exactly what was written, thinking signatures byte for byte", () => {
      const file = {
        ...buildTranscriptFile({ id: "c", kept: sampleLog(), summary: sampleSummary(0), factor: 1 }),
        readUntil: 3,
        window: { model: "m", tokens: 8192 },
      };
      const withExtras = {
        ...file,
        messages: file.messages.map((message) => ({
          ...message,
          providerId: "msg_1",
          parts: message.parts.map((part) => ({ ...part, cache: { ephemeral: true } })),
        })),
      };
      const decoded = decodeTranscript("c", encodeTranscript("c", withExtras));
      expect(decoded).toEqual({ ok: true, file: withExtras });
    });
  });

  describe("given text that is not a version-1 transcript of this chat", () => {
    it.each([
      ["not JSON", "{", "not JSON"],
      ["JSON but not an object", "[]", "not a version-1 transcript"],
      ["another version", '{"version":2,"id":"c","messages":[]}', "version"],
      ["no messages", '{"version":1,"id":"c"}', "messages"],
      [
        "a part of an unknown type",
        '{"version":1,"id":"c","messages":[{"role":"user","parts":[{"type":"x"}]}]}',
        "type",
      ],
      ["seqs that do not match messages", '{"version":1,"id":"c","messages":[],"seqs":[1]}', "seqs"],
      [
        "seqs that do not increase",
        '{"version":1,"id":"c","messages":[{"role":"user","parts":[]},{"role":"user","parts":[]}],"seqs":[4,4]}',
        "seqs.1",
      ],
      ["a factor below 1", '{"version":1,"id":"c","messages":[],"factor":0.5}', "factor"],
      ["another chat's id", '{"version":1,"id":"other","messages":[]}', "other"],
    ])("should say why for %s", (_case, text, why) => {
      const decoded = decodeTranscript("c", text);
      expect(decoded.ok).toBe(false);
      expect(decoded.ok ? "" : decoded.reason).toContain(why);
    });
  });

  describe("given a transcript a reader would refuse", () => {
    it("should refuse to encode it, with a typed error", () => {
      const file = buildTranscriptFile({ id: "c", kept: sampleLog() });
      const refused = [
        () => encodeTranscript("other", file),
        () => encodeTranscript("c", { ...file, seqs: [1] }),
        () => encodeTranscript("c", { ...file, factor: 0 }),
      ];
      for (const encode of refused) {
        expect(encode).toThrow(InvalidChatRecordError);
        try {
          encode();
        } catch (error) {
          expect(InvalidChatRecordError.isInstance(error)).toBe(true);
        }
      }
    });
  });
});

describe("decodeLogMessage", () => {
  describe("given how a reply ended, as this version writes it or a later one might", () => {
    it("should keep a known reason and leave out one it does not know, reading the message still", () => {
      const cutOff = { seq: 4, role: "assistant", parts: [{ type: "text", text: "and" }], finishReason: "length" };
      expect(decodeLogMessage(cutOff, 4)).toEqual({ ok: true, message: cutOff });
      const later = decodeLogMessage({ ...cutOff, finishReason: "paused-by-later-version" }, 4);
      expect(later.ok).toBe(true);
      expect(later.ok && later.message.finishReason).toBeUndefined();
      expect(later.ok && later.message.parts).toEqual(cutOff.parts);
    });
  });
});
