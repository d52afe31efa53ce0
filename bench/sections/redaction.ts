import { redactSecrets } from "@conch/engine-client";
import { redactSecrets as redactSecretsBefore } from "../baseline/redact-before-27.js";
import { loadConversations } from "../data.js";
import { medianOf, ratiosOf, timeInRounds } from "../measure.js";
import type { BenchSection } from "../section.js";
import { grouped, median, percent, round } from "../stats.js";

const marker = "[redacted secret]";

/** Characters of `text` that `redact` replaced (each marker stands for what it removed). */
function changedCharacters(redact: (text: string) => string, text: string): number {
  const redacted = redact(text);
  const markers = redacted.split(marker).length - 1;
  return Math.max(0, text.length - (redacted.length - markers * marker.length));
}

/** The texts a summariser is sent: each conversation's messages, one text per conversation. */
function conversationTexts(dataDir: string): string[] {
  return loadConversations(dataDir).map((conversation) =>
    conversation.messages
      .flatMap((message) =>
        message.parts.map((part) =>
          "text" in part && typeof part.text === "string" ? part.text : JSON.stringify(part),
        ),
      )
      .join("\n"),
  );
}

/**
 * Redaction on the shared conversations (about 9.7 MB of real chats, code, shell output and Chinese): the
 * rules of issue #27 beside the rules before it, timed in alternating rounds, and the share of the text each
 * changes (the conversations hold no credential known to the authors: what changes is the cost to ordinary
 * text, an upper bound on false positives).
 */
export const redactionSection: BenchSection = {
  id: "redaction",
  title: "Secret redaction",
  async run({ args, log }) {
    const texts = conversationTexts(args.dataDir);
    const characters = texts.reduce((sum, text) => sum + text.length, 0);
    log(`redaction: ${texts.length} conversations, ${grouped(characters)} characters`);
    const all = () => {
      for (const text of texts) redactSecrets(text);
    };
    const allBefore = () => {
      for (const text of texts) redactSecretsBefore(text);
    };
    const time = args.quick ? 300 : 2000;
    const times = await timeInRounds(
      [
        { name: "now", fn: all, time, iterations: 2 },
        { name: "before", fn: allBefore, time, iterations: 2 },
      ],
      args.quick ? 2 : 5,
    );
    const ratio = median(ratiosOf(times, "now", "before"));
    const changedNow = texts.reduce((sum, text) => sum + changedCharacters(redactSecrets, text), 0);
    const changedBefore = texts.reduce((sum, text) => sum + changedCharacters(redactSecretsBefore, text), 0);
    const msNow = medianOf(times, "now");
    const msBefore = medianOf(times, "before");
    return {
      json: {
        redaction: {
          characters,
          conversations: texts.length,
          msNow: round(msNow, 1),
          msBefore: round(msBefore, 1),
          slowdown: round(ratio, 2),
          changedNow,
          changedBefore,
          changedShareNow: round(changedNow / characters, 7),
          changedShareBefore: round(changedBefore / characters, 7),
        },
      },
      tables: [
        {
          title: `Secret redaction on the shared conversations (${grouped(characters)} characters, ${texts.length} conversations)`,
          header: ["rules", "time (median ms)", "MB/s", "characters changed", "share changed"],
          rows: [
            [
              "before #27",
              round(msBefore, 1).toString(),
              round(characters / 1e6 / (msBefore / 1000), 1).toString(),
              grouped(changedBefore),
              percent(changedBefore / characters, 4),
            ],
            [
              "now",
              round(msNow, 1).toString(),
              round(characters / 1e6 / (msNow / 1000), 1).toString(),
              grouped(changedNow),
              percent(changedNow / characters, 4),
            ],
          ],
          notes: [
            `now / before, median of rounds: ${round(ratio, 2)}x (target: no more than 2x; changed share no more than 0.01%)`,
          ],
        },
      ],
    };
  },
};
