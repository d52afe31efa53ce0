import {
  type ChatMessage,
  emptyUsage,
  type ModelInfo,
  type SummaryState,
  type TurnInput,
  type TurnProblem,
} from "@conch/engine-client";
import {
  chatLogFrom,
  createMockChatStore,
  createMockEngine,
  generateLongChatScript,
  type MockChatSeed,
  type MockEngine,
  type MockTurnScript,
} from "@conch/engine-client/mock";
import type { DemoTranscript } from "./transcript-plugin.js";

export const demoChatId = "demo";

export const demoModels: readonly ModelInfo[] = [
  { id: "mock-small", displayName: "Mock Small", context: 8_000, ready: true, local: true, provider: "mock" },
  { id: "mock-large", displayName: "Mock Large", context: 32_000, ready: true, local: false, provider: "mock" },
];

/**
 * What the next typed turns do, in a cycle of five: a fold, a quiet retry, a plain answer, a "too long" refusal, a
 * reply cut off at the output limit (then Continue answers it as a new turn).
 */
export const demoCycle = ["fold", "quiet-retry", "answer", "too-long", "cut-off"] as const;
export type DemoStep = (typeof demoCycle)[number];

function roughTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

function logFromTranscript(transcript: DemoTranscript): ChatMessage[] {
  return transcript.messages.map((message, seq) =>
    message.role === "tool"
      ? { seq, role: "tool", parts: [{ type: "tool-result", callId: `call-${seq}`, text: message.content }] }
      : {
          seq,
          role: message.role,
          parts: [{ type: "text", text: message.content }],
          ...(message.role === "assistant" ? { model: "mock-large" } : {}),
        },
  );
}

/** The summary the chat starts with: what the person asked before the model's memory starts. */
function seededSummary(messages: readonly ChatMessage[], firstKeptSeq: number, title: string): SummaryState {
  const folded = messages.filter((message) => message.seq < firstKeptSeq);
  const kept = messages.filter((message) => message.seq >= firstKeptSeq);
  const asks = folded
    .filter((message) => message.role === "user")
    .map((message) => (message.parts[0]?.type === "text" ? message.parts[0].text : ""))
    .map((text) => text.replace(/\s+/g, " ").trim())
    .filter(Boolean)
    .map((text) => `- ${text.length > 140 ? `${text.slice(0, 139)}…` : text}`);
  const text = [
    `The person is working on “${title}” with the assistant. What they asked so far:`,
    ...asks,
    "Decided: keep going in small steps, with tests for each command.",
  ].join("\n");
  const size = (list: readonly ChatMessage[]) =>
    list.reduce(
      (sum, message) =>
        sum + 4 + message.parts.reduce((part, p) => part + roughTokens("text" in p ? (p.text as string) : ""), 0),
      0,
    );
  return {
    text,
    model: "mock-small",
    firstKeptSeq,
    reason: "budget",
    before: { messages: messages.length, tokens: size(messages) },
    after: { messages: kept.length, tokens: size(kept) + roughTokens(text) },
    at: Date.UTC(2026, 9, 3, 9, 30),
  };
}

/** The demo chat: a real transcript when there is one, else a generated long chat; folded up to a late turn. */
export function demoSeed(transcript: DemoTranscript | null): { seed: MockChatSeed; title: string } {
  if (transcript) {
    const messages = logFromTranscript(transcript);
    const turnStarts = messages.filter((message) => message.role === "user").map((message) => message.seq);
    const firstKeptSeq = turnStarts[Math.max(0, turnStarts.length - 3)] ?? 0;
    return {
      title: transcript.title,
      seed: { messages, summary: seededSummary(messages, firstKeptSeq, transcript.title) },
    };
  }
  const history = generateLongChatScript({ turns: 40, compactEvery: 0, seed: 3 });
  const messages = chatLogFrom(history.prompts.map((prompt, index) => [prompt, history.turns[index]?.reply ?? ""]));
  const firstKeptSeq = messages.length - 6;
  return {
    title: "A long generated chat",
    seed: { messages, summary: seededSummary(messages, firstKeptSeq, "a web app, module by module") },
  };
}

function scriptedTooLongProblem(model: ModelInfo, models: readonly ModelInfo[], input: TurnInput): TurnProblem {
  const window = model.context ?? 8_000;
  // The ready model that reads clearly more (twice or more), else a new chat with the message in its box.
  const bigger = models
    .filter((candidate) => candidate.ready && (candidate.context ?? 0) >= window * 2)
    .sort((a, b) => (b.context ?? 0) - (a.context ?? 0))[0];
  return {
    kind: "too-long",
    title: "This chat is too long for the model",
    providerMessage: `This model's maximum context length is ${window} tokens. However, your messages resulted in ${
      window + 1_377
    } tokens. Please reduce the length of the messages.`,
    status: 400,
    window,
    // The provider counted far more than the estimate said (the story of a wrong estimate): the card says both.
    countedTokens: window + 1_377,
    estimatedTokens: Math.round(window * 0.04),
    next: bigger
      ? { type: "switch-model", model: bigger, readsTimes: Math.floor((bigger.context ?? 0) / window) }
      : { type: "new-chat", message: input.text },
  };
}

function stepScript(
  step: DemoStep,
  model: ModelInfo,
  models: readonly ModelInfo[],
  input: TurnInput,
  title: string,
): MockTurnScript {
  switch (step) {
    case "fold":
      return {
        compaction: {
          summary: `The person and the assistant worked on “${title}”: the project was set up, its commands were designed and tested one by one, and a changelog is kept. Still open: publishing, and the last two requests.`,
          keepTurns: 2,
        },
        reply: `I summarised the start of this chat so that ${model.displayName} keeps reading it all. About “${input.text.slice(0, 60)}”: here is the answer, streamed piece by piece.`,
      };
    case "quiet-retry":
      return {
        healed: { provider: "mock", window: model.context ?? 8_000 },
        reply:
          "The provider first refused this request as too long; it was shortened and sent again, quietly. The Health list beside the chat keeps a note of it. Here is the answer.",
      };
    case "answer":
      return {
        reply: [
          `## A plain answer from ${model.displayName}`,
          "",
          "Replies are **Markdown**: lists, `inline code`, tables and code blocks with a copy button.",
          "",
          "- Type `/compact [what to keep]` to summarise the start of this chat now,",
          "- or press **⌘K / Ctrl+K**.",
          "",
          "| step | what it does |",
          "| --- | --- |",
          "| fold | summarises the oldest turns |",
          "| heal | shortens a refused request and sends it again |",
          "",
          "```ts",
          'const reply = await conversation.send("And the rate limiter?");',
          "```",
        ].join("\n"),
      };
    case "too-long":
      return { problem: scriptedTooLongProblem(model, models, input) };
    case "cut-off":
      return {
        reply: `${model.displayName} reached its output limit in the middle of this answer: the steps so far are 1. set up the project, 2. write the commands, 3. test each`,
        finishReason: "length",
      };
    default:
      return step satisfies never;
  }
}

/**
 * The demo's world: mock engines that share one script and carry the chats across when the model changes,
 * the way a real app would move a chat between models.
 */
export function createDemoWorld(options: {
  transcript: DemoTranscript | null;
  delayMs?: number;
  model?: ModelInfo;
  /** The chats to start with. Default: the seeded demo chat alone. */
  chats?: Record<string, MockChatSeed>;
}) {
  const delayMs = options.delayMs ?? 25;
  const { seed, title } = demoSeed(options.transcript);
  let typed = 0;
  let generation = 0;
  const listeners = new Set<() => void>();
  // One store for the world's engines: a chat moves to another model whole, every version of every message with it.
  const store = createMockChatStore();

  /** An edit, or another answer to a message already answered (not Send again after a problem). */
  function isNewVersion(input: TurnInput): boolean {
    if (input.parent !== undefined) return true;
    if (input.retry !== true) return false;
    const messages = store.chat(input.chatId).messages;
    return messages.some(
      (message) => message.role === "assistant" && (message.parent ?? message.seq - 1) === input.seq,
    );
  }

  function createEngine(model: ModelInfo, chats: Record<string, MockChatSeed>): MockEngine {
    generation += 1;
    return createMockEngine({
      id: `mock-${model.id}-${generation}`,
      displayName: "mock engine",
      model,
      models: demoModels,
      delayMs,
      chunkSize: 6,
      // A fold takes a couple of seconds, as a real summariser's does: long enough to read "Summarising…" (and for a
      // test on a loaded machine to see it).
      compactionDelayMs: delayMs * 80,
      chats,
      store,
      turns: (input) => {
        // A new version is answered plainly: the cycle's folds and problems are for new messages.
        if (isNewVersion(input)) {
          return {
            reply: `Another version from ${model.displayName}: about “${input.text.slice(0, 60)}”, here is an answer, streamed piece by piece.`,
          };
        }
        // Continue goes on with the cut-off reply; the cycle waits.
        if (input.continuation) return { reply: ", 4. publish. That is the whole list." };
        const step = demoCycle[typed % demoCycle.length] as DemoStep;
        typed += 1;
        for (const listener of listeners) listener();
        return stepScript(step, model, demoModels, input, title);
      },
    });
  }

  const initialModel = options.model ?? (demoModels[1] as ModelInfo);
  return {
    title,
    models: demoModels,
    /** The seeded demo chat, as the script makes it. */
    seed,
    engine: createEngine(initialModel, options.chats ?? { [demoChatId]: seed }),
    /** What the next typed turn will do. */
    nextStep(): DemoStep {
      return demoCycle[typed % demoCycle.length] as DemoStep;
    },
    onStep(listener: () => void): () => void {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    /** A new engine on `model` holding the chats of `from`. */
    async switchModel(_from: MockEngine, model: ModelInfo, chatIds: readonly string[]): Promise<MockEngine> {
      // The chats are in the world's store already; the new model starts with no standing problem nor usage.
      for (const chatId of chatIds) {
        const chat = store.chat(chatId);
        chat.problem = null;
        chat.usage = emptyUsage;
      }
      return createEngine(model, {});
    },
  };
}

export type DemoWorld = ReturnType<typeof createDemoWorld>;
