import { type FakeChatRequest, type FakeProvider, type FakeReply, startFakeProvider } from "@conch/fake-provider";
import { afterEach, describe, expect, it } from "vitest";
import { computeBudget } from "../context/budget.js";
import { estimateTokens } from "../context/estimate.js";
import type { ChatMessage } from "../messages.js";
import { createProvider } from "../providers/create-provider.js";
import { summariseFolded } from "./summariser.js";

// The summariser on a small real window with a tokenizer unlike BPE (#26), as llama.cpp's llama-server with a
// 512-token vocabulary showed it: long text 2.5× the estimate, the chat template a fixed 40 tokens a request. The
// fake server plays llama.cpp (its `/props` window, its real `exceed_context_size_error` refusal naming the window
// and the prompt's tokens) and refuses what is over the window, as the real one does.
const contentRatio = 2.5;
const countLike = (ratio: number) => (text: string) => Math.ceil(estimateTokens(text) * ratio) + 40;
/** The chat's factor such a model teaches (the chat's own requests of at least an eighth of the window). */
const chatFactor = 2.7;

const servers: FakeProvider[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function llamaCpp(window: number, ratio = contentRatio, replyText?: (request: FakeChatRequest) => FakeReply) {
  // The requests the server took (it answers only what fits; what it refuses never reaches the reply).
  const answered: FakeChatRequest[] = [];
  const server = await startFakeProvider({
    dialect: "openai",
    row: "llama.cpp",
    models: [{ id: "stories", window }],
    countTokens: countLike(ratio),
    // A summary of one line, as the model with its end-token override writes.
    reply: (request: FakeChatRequest) => {
      answered.push(request);
      return replyText?.(request) ?? { text: `Once upon a time ${request.lastUserText.length % 97} people met.` };
    },
  });
  servers.push(server);
  const provider = createProvider("llama.cpp", { baseURL: server.baseURL });
  return { server, answered, provider, models: await provider.listModels() };
}

const english =
  "Please check the harbour schedule for Tuesday: the ferry to the island leaves at 07:40 and 16:15, and I need " +
  "to know whether the 16:15 one takes bicycles. ";
const chinese =
  "请帮我看一下周二的港口时刻表：去岛上的渡轮早上七点四十和下午四点十五出发，我想知道下午那班能不能带自行车。";

function foldedTurns(): ChatMessage[] {
  const texts = [english.repeat(3), "The 16:15 ferry takes bicycles.", chinese.repeat(2), "可以带自行车。", english];
  return texts.map((text, seq) => ({
    seq,
    role: seq % 2 === 0 ? "user" : "assistant",
    parts: [{ type: "text", text }],
  }));
}

/** How many requests the server refused, and how many were sent twice in a row. */
function refusedAndRepeated(server: FakeProvider, answered: readonly FakeChatRequest[]) {
  const bodies = server.chatRequests().map((request) => JSON.stringify(request.body));
  return {
    refused: bodies.length - answered.length,
    repeated: bodies.filter((body, index) => index > 0 && body === bodies[index - 1]).length,
  };
}

describe("summariseFolded on a small window with a tokenizer unlike BPE", () => {
  it.each([512, 2048])(
    "given a %i-token window and the chat's factor, should fit every request (lean prompt) and be refused none",
    async (window) => {
      const { server, answered, provider, models } = await llamaCpp(window);
      const result = await summariseFolded({
        provider,
        chatModel: "stories",
        models,
        folded: foldedTurns(),
        previousSummary: "The person plans a trip to the island.",
        budget: computeBudget({ window }).budget,
        factor: chatFactor,
      });
      expect(result.attempts).toEqual([]);
      expect(result.status).toBe("summarised");
      expect(refusedAndRepeated(server, answered)).toEqual({ refused: 0, repeated: 0 });
      expect(answered.length).toBeGreaterThan(0);
      for (const request of answered) {
        // The prompt and the answer's room within the window: the server refuses nothing and cuts no summary short.
        expect(request.inputTokens + (request.maxOutputTokens ?? 0)).toBeLessThanOrEqual(window);
        // Still a summariser request, and it says so.
        expect(JSON.stringify(request.body)).toContain("You summarise the start of a chat");
      }
    },
  );

  it("given a refusal that names the window the summariser already knew, should size the one retry to it: never the same request twice", async () => {
    const window = 2048;
    // Text this tokenizer counts at 4× the estimate, and no factor: the first request is refused, naming the window
    // (the one /props already gave) and the tokens sent.
    const { server, answered, provider, models } = await llamaCpp(window, 4);
    const result = await summariseFolded({
      provider,
      chatModel: "stories",
      models,
      folded: Array.from({ length: 6 }, (_, round) =>
        foldedTurns().map((message) => ({
          ...message,
          seq: message.seq + 5 * round,
          parts: message.parts.map((part) =>
            part.type === "text" ? { ...part, text: `${round}: ${part.text}` } : part,
          ),
        })),
      ).flat(),
      previousSummary: null,
      budget: computeBudget({ window }).budget,
    });
    expect(refusedAndRepeated(server, answered)).toEqual({ refused: 1, repeated: 0 });
    expect(result.attempts.map((attempt) => attempt.rejection)).toEqual(["error"]);
    expect(result.status).toBe("summarised");
  });

  it("given a summary cut off at its small answer room, should keep its finished sentences", async () => {
    const { provider, models } = await llamaCpp(512, contentRatio, () => ({
      text: "The person asks about the 16:15 ferry. It takes bicycles. They also wan",
      finishReason: "length",
    }));
    const result = await summariseFolded({
      provider,
      chatModel: "stories",
      models,
      folded: foldedTurns().slice(0, 2),
      previousSummary: null,
      budget: computeBudget({ window: 512 }).budget,
      factor: chatFactor,
    });
    expect(result.status === "summarised" && result.text).toBe(
      "The person asks about the 16:15 ferry. It takes bicycles.",
    );
  });
});
