import {
  createApiEngine,
  createMemoryChatStore,
  createMemoryLearner,
  createProvider,
  type ProviderId,
} from "@conch/engine-client";
import { countTokens as countO200k } from "gpt-tokenizer/encoding/o200k_base";
import { type Conversation, loadConversationFile, loadConversations } from "./conversations.js";
import type { FakeDialect, FakeOpenAIRow } from "./fake-provider-dialects.js";
import { startFakeProvider } from "./fake-provider-server.js";
import { createReplayScript, replayTurns } from "./replay.js";
import { type RecordedTurn, recordedTurns } from "./scripted-models.js";
import { tooLongBodyFor } from "./too-long-bodies.js";

export interface SimulateOptions {
  /** A JSONL file of recorded chats (a path, or a file name in `test-fixtures/chats`), or `all` for every file there. */
  readonly conversation: string;
  /** Which conversation of the file. Default: the first. */
  readonly id?: string;
  /** Build a chat of this many turns by joining the file's conversations in order. Default: the one conversation. */
  readonly turns?: number;
  /** The model's real window, enforced by the fake server with o200k counts. */
  readonly window: number;
  /** The provider the fake server plays. Default `openai`. */
  readonly provider?: ProviderId;
  /** Refuse the first chat request once, in the provider's words. */
  readonly refuseOnce?: boolean;
  /** A progress line per turn. Default: none. */
  readonly progress?: (line: string) => void;
}

/** What `pnpm simulate` prints. */
export interface SimulateResult {
  readonly turns: number;
  readonly requests: number;
  readonly folds: number;
  readonly heals: number;
  readonly problems: number;
  /** Requests the server refused for length (chat and summariser alike). */
  readonly requestsOverWindow: number;
  /** The largest request to the chat's model the server answered, in o200k tokens (summariser requests aside). */
  readonly maxRequestTokens: number;
  readonly window: number;
}

function dialectOf(provider: ProviderId): { dialect: FakeDialect; row?: FakeOpenAIRow } {
  switch (provider) {
    case "anthropic":
    case "google":
    case "ollama":
      return { dialect: provider };
    default:
      return { dialect: "openai", row: provider };
  }
}

function chooseTurns(conversations: readonly Conversation[], options: SimulateOptions): RecordedTurn[] {
  if (options.id) {
    const found = conversations.find((conversation) => conversation.id === options.id);
    if (!found) throw new Error(`No conversation with id ${options.id} in ${options.conversation}`);
    return recordedTurns(found.messages);
  }
  if (options.turns === undefined) return recordedTurns(conversations[0]?.messages ?? []);
  const turns: RecordedTurn[] = [];
  for (const conversation of conversations) {
    turns.push(...recordedTurns(conversation.messages));
    if (turns.length >= options.turns) break;
  }
  return turns.slice(0, options.turns);
}

/**
 * Replays a real conversation through the API engine against the fake provider server on loopback, which
 * counts each request with a real tokenizer (o200k) and refuses with the provider's real "too long" body
 * when it is over the window.
 */
export async function simulateConversation(options: SimulateOptions): Promise<SimulateResult> {
  const providerId = options.provider ?? "openai";
  const conversations =
    options.conversation === "all" ? loadConversations() : loadConversationFile(options.conversation);
  const turns = chooseTurns(conversations, options);
  const script = createReplayScript(["cheap"]);
  let answered = 0;
  let maxRequestTokens = 0;
  const { dialect, row } = dialectOf(providerId);
  const server = await startFakeProvider({
    dialect,
    ...(row ? { row } : {}),
    models: [
      { id: "chat", window: options.window },
      { id: "cheap", window: Math.max(options.window, 32_000) },
    ],
    countTokens: (text) => countO200k(text),
    reply: (request) => {
      answered += 1;
      if (request.model === "chat") maxRequestTokens = Math.max(maxRequestTokens, request.inputTokens);
      return script.reply(request);
    },
  });
  try {
    const provider = createProvider(providerId, {
      baseURL: server.baseURL,
      // The fake server is on loopback; it plays this provider as it is, local or not by its kind.
      local: ["ollama", "lmstudio", "llama.cpp"].includes(providerId),
      cheapestModel: "cheap",
    });
    const engine = createApiEngine({
      provider,
      model: "chat",
      store: createMemoryChatStore(),
      learner: createMemoryLearner(),
      systemPrompt: "You are a helpful assistant. Answer the person's questions and use tools when asked.",
    });
    if (options.refuseOnce) {
      // The first request is refused although it fits, in the provider's words, naming the real window.
      const body = tooLongBodyFor(providerId, {
        window: options.window,
        inputTokens: options.window + 512,
        outputTokens: 0,
      });
      server.refuseNext(1, body ?? providerId);
    }
    const stats = await replayTurns(engine, "simulated", turns, script, {
      onTurn: (index, current) => {
        if (!options.progress) return;
        const last = current.lastTurnEvents.at(-1);
        const problem =
          last?.type === "turn-end" && last.status === "problem"
            ? current.lastTurnEvents.findLast((event) => event.type === "turn-problem")
            : undefined;
        options.progress(
          `turn ${index + 1}/${turns.length}: requests ${current.requests}, folds ${current.folds}, heals ${current.heals}, problems ${current.problems}` +
            (problem?.type === "turn-problem"
              ? ` (this turn: ${problem.problem.kind}: ${problem.problem.providerMessage ?? problem.problem.title})`
              : ""),
        );
      },
    });
    const chatRequests = server.chatRequests().length;
    return {
      turns: stats.turns,
      requests: stats.requests,
      folds: stats.folds,
      heals: stats.heals,
      problems: stats.problems,
      requestsOverWindow: chatRequests - answered - (options.refuseOnce ? 1 : 0),
      maxRequestTokens,
      window: options.window,
    };
  } finally {
    await server.close();
  }
}
