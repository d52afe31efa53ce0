import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { EngineEvent } from "../events.js";
import { createStreamRedactor, redactWhole } from "./stream-redaction.js";

const delta = (text: string, seq = 1): EngineEvent => ({ type: "text-delta", chatId: "c", seq, delta: text });
const textOf = (events: readonly EngineEvent[]) =>
  events.map((event) => (event.type === "text-delta" ? event.delta : "")).join("");
const secret = "sk-live-ABCDEFGH12345678";

describe("createStreamRedactor", () => {
  it("given no secrets, should pass every event as it is, at once", () => {
    const redactor = createStreamRedactor([]);
    const event = delta("sk-live-ABC");
    expect(redactor.push(event)).toEqual([event]);
    expect(redactor.flush()).toEqual([]);
  });

  it("given text that could not start a secret, should hold nothing back", () => {
    const redactor = createStreamRedactor([secret]);
    expect(textOf(redactor.push(delta("Hello, ")))).toBe("Hello, ");
    expect(textOf(redactor.push(delta("world.")))).toBe("world.");
  });

  it("should hold back a possible start of the secret until the next event says what it is", () => {
    const redactor = createStreamRedactor([secret]);
    expect(textOf(redactor.push(delta("key: sk-li")))).toBe("key: ");
    expect(textOf(redactor.push(delta("ve-ABCDEFGH1234")))).toBe("");
    expect(textOf(redactor.push(delta("5678, done")))).toBe("[redacted], done");
    expect(textOf(redactor.push(delta(" sk-live")))).toBe(" ");
    const end: EngineEvent = {
      type: "message-end",
      chatId: "c",
      message: { seq: 1, role: "assistant", parts: [] },
      finishReason: "stop",
    };
    expect(redactor.push(end)).toEqual([delta("sk-live"), end]);
  });

  it('should send a start too short to say anything ("sk") at once, and the rest of a secret begun so as the marker', () => {
    const redactor = createStreamRedactor([secret]);
    expect(textOf(redactor.push(delta("the key is sk")))).toBe("the key is sk");
    expect(textOf(redactor.push(delta("-live-ABCD")))).toBe("");
    expect(textOf(redactor.push(delta("EFGH12345678 ok")))).toBe("[redacted] ok");
    expect(textOf(redactor.push(delta("answers")))).toBe("answers");
  });

  it("should give the text redacted whole, however it is split, holding back less than the secret (property)", () => {
    const words = fc.constantFrom("a", " ", "sk-", "sk-live-", secret, secret.slice(0, 10), secret.slice(10), "xyz");
    fc.assert(
      fc.property(
        fc.array(
          fc.array(words, { maxLength: 4 }).map((parts) => parts.join("")),
          { maxLength: 10 },
        ),
        (deltas) => {
          const redactor = createStreamRedactor([secret]);
          let sent = "";
          let given = "";
          for (const piece of deltas) {
            given += piece;
            const out = textOf(redactor.push(delta(piece)));
            sent += out;
            expect(redactWhole(given, [secret]).length - sent.length).toBeLessThan(secret.length);
          }
          sent += textOf(redactor.flush());
          // As redacted whole, but a secret's first characters (fewer than 4) may have gone out before its marker.
          expect(sent.replace(/(s|sk|sk-)?\[redacted\]/g, "[redacted]")).toBe(
            redactWhole(given, [secret]).replace(/(s|sk|sk-)?\[redacted\]/g, "[redacted]"),
          );
        },
      ),
    );
  });
});
