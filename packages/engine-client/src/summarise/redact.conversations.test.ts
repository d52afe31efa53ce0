import { loadConversations } from "@conch/fake-provider";
import { describe, expect, it } from "vitest";
import { toPlainLines } from "./plain-lines.js";
import { redactedMarker, redactSecrets } from "./redact.js";

/** Characters of `text` that redaction replaced (each marker stands for what it removed). */
function redactedCharacters(text: string): number {
  const redacted = redactSecrets(text);
  const markers = redacted.split(redactedMarker).length - 1;
  return text.length - (redacted.length - markers * redactedMarker.length);
}

describe("redactSecrets on the real conversations of test-fixtures/chats", () => {
  it("should redact less than 0.01% of their characters", () => {
    let total = 0;
    let redacted = 0;
    for (const conversation of loadConversations()) {
      const text = toPlainLines(conversation.messages);
      total += text.length;
      redacted += redactedCharacters(text);
    }
    const share = redacted / total;
    console.info(`redacted ${redacted} of ${total} characters (${(share * 100).toFixed(4)}%)`);
    expect(total).toBeGreaterThan(400_000);
    expect(share).toBeLessThan(0.0001);
  });
});
