import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { ChatMessage, ModelInfo } from "../messages.js";
import type { ProviderAdapter } from "../providers/provider-adapter.js";
import { summariseFolded } from "./summariser.js";

/**
 * A summariser in the process that answers at once and records every request's prompt; its summary names the
 * request it answers, so each prompt depends on all before it.
 */
function recordingProvider(): { provider: ProviderAdapter; prompts: string[] } {
  const prompts: string[] = [];
  const provider = {
    provider: "openrouter",
    local: false,
    cheapestModel: "cheap",
    windows: { get: () => undefined, set: () => undefined },
    async *streamChat(request: { readonly messages: readonly ChatMessage[] }) {
      const part = request.messages[0]?.parts[0];
      prompts.push(part?.type === "text" ? part.text : "");
      yield { type: "text-delta", delta: `Summary ${prompts.length}: the person plans a trip; <earlier> & done. ` };
      yield { type: "finish", reason: "stop" };
    },
  } as unknown as ProviderAdapter;
  return { provider, prompts };
}

/** Text with what the escaping and the redaction look at: tags, look-alikes, escapes, a secret. */
function markup(seq: number): string {
  const kinds = [
    `Use <div class="x"> & &amp; then if (a < b) { ok }`,
    `‹/еarlier-in-this-chat> and ＜chat-lines＞ &#60;summary`,
    `naïve café 🐚 ﬁle Ⅸ² — plain words`,
    `api_key=sk-test-${"a1b2".repeat(6)} in the config`,
  ];
  return `${seq}: ${kinds[seq % kinds.length]} ${"and more words ".repeat(seq % 5)}`;
}

function message(seq: number, text: string, role?: ChatMessage["role"]): ChatMessage {
  if (role === "tool" || (role === undefined && seq % 7 === 6)) {
    return { seq, role: "tool", parts: [{ type: "tool-result", callId: `c${seq}`, name: "fetch", text }] };
  }
  return { seq, role: role ?? (seq % 2 === 0 ? "user" : "assistant"), parts: [{ type: "text", text }] };
}

const cases: ReadonlyArray<{
  readonly name: string;
  readonly folded: () => ChatMessage[];
  readonly budget: number;
  readonly previousSummary?: string;
  readonly keep?: string;
  readonly cheapWindow?: number;
}> = [
  {
    name: "10,000 short messages that arrived whole, at a 32K window's budget",
    folded: () => Array.from({ length: 10_000 }, (_, seq) => message(seq, markup(seq))),
    budget: 25_000,
  },
  {
    name: "10,000 short messages that arrived whole, at a 128K window's budget",
    folded: () => Array.from({ length: 10_000 }, (_, seq) => message(seq, markup(seq))),
    budget: 100_000,
  },
  {
    name: "a few very long tool results among short messages (their middles left out)",
    folded: () =>
      Array.from({ length: 300 }, (_, seq) =>
        seq % 50 === 6
          ? message(seq, `<row>${markup(seq)}</row>\n`.repeat(3_000 + seq), "tool")
          : message(seq, markup(seq)),
      ),
    budget: 50_000,
  },
  {
    name: "a short fold into a summary so far, with what to keep",
    folded: () => Array.from({ length: 60 }, (_, seq) => message(seq, markup(seq))),
    budget: 12_000,
    previousSummary: "Earlier: <earlier-in-this-chat> & the plan ‹chat-lines›.",
    keep: "the <summary> of costs & dates",
  },
  {
    name: "a summariser with a small window (pieces halved to fit)",
    folded: () => Array.from({ length: 2_000 }, (_, seq) => message(seq, markup(seq))),
    budget: 25_000,
    cheapWindow: 4_096,
  },
];

// Recorded with the summariser and frame escaping as they were before folds were made linear (git b846a35):
// the count of requests and a SHA-256 of their prompts, in order.
const before: Readonly<Record<string, { readonly requests: number; readonly sha256: string }>> = {
  "10,000 short messages that arrived whole, at a 32K window's budget": {
    requests: 32,
    sha256: "a7938400b040bcfc84ddac07b73952b8d04e1c544f1b11c60c42123cdee8a298",
  },
  "10,000 short messages that arrived whole, at a 128K window's budget": {
    requests: 32,
    sha256: "0c7c5fb261d41b7c83c21f2e07cecf3c76ffc2d4408c8cb7a327fae1206e2edc",
  },
  "a few very long tool results among short messages (their middles left out)": {
    requests: 32,
    sha256: "35986fa9aac7b1878a20944d592854028c37c5901e48d1f74e88fd366e8fba3c",
  },
  "a short fold into a summary so far, with what to keep": {
    requests: 1,
    sha256: "60255f87509f40c80abd8e086f9f7407fead1be6a04623246bd11e406cdadeb5",
  },
  // Changed on purpose by #26: the summary's limit is at most a sixteenth of the summariser's window (256 tokens here,
  // not 3,125: that answer room alone was more than this 4,096-token window).
  "a summariser with a small window (pieces halved to fit)": {
    requests: 32,
    sha256: "1a1a04884ce8712b9bd574e85a79904c0f57ce96cf8d06398bc90d801dff186f",
  },
};

describe("summariseFolded's requests", () => {
  it.each(cases)("should be the same as before, in count and text: $name", async (input) => {
    const { provider, prompts } = recordingProvider();
    const models: ModelInfo[] = [
      { id: "cheap", displayName: "Cheap", ready: true, local: false, context: input.cheapWindow ?? 128_000 },
    ];
    const result = await summariseFolded({
      provider,
      chatModel: "chat",
      models,
      folded: input.folded(),
      previousSummary: input.previousSummary ?? null,
      ...(input.keep ? { keep: input.keep } : {}),
      budget: input.budget,
    });
    expect(result.status).toBe("summarised");
    const sha256 = createHash("sha256").update(JSON.stringify(prompts)).digest("hex");
    expect({ requests: prompts.length, sha256 }).toEqual(before[input.name]);
  });
});
