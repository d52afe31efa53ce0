import type { ChatMessage } from "@conch/engine-client";
import {
  buildRequestMessages,
  computeBudget,
  createEstimateCache,
  type EstimateCache,
  type FoldState,
  planFold,
} from "@conch/engine-client/context";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { type Conversation, loadConversations } from "../data.js";
import { medianOf, ratiosOf, timeInRounds } from "../measure.js";
import type { BenchSection } from "../section.js";
import { standInSummary, tokenizedTexts } from "../simulate.js";
import { grouped, median, round } from "../stats.js";

const chatLength = 600;

/** The longest conversation's first 600 messages; conversations are joined when none is that long. */
function chatOf600(conversations: readonly Conversation[]): {
  readonly messages: ChatMessage[];
  readonly from: string;
} {
  const byLength = [...conversations].sort((a, b) => b.messages.length - a.messages.length);
  const messages: ChatMessage[] = [];
  const used: string[] = [];
  for (const conversation of byLength) {
    used.push(conversation.id);
    for (const message of conversation.messages) {
      if (messages.length === chatLength) break;
      messages.push({ ...message, seq: messages.length });
    }
    if (messages.length === chatLength) break;
  }
  if (messages.length < chatLength) throw new Error(`the data has only ${messages.length} messages in all`);
  return { messages, from: used.length === 1 ? (used[0] as string) : `${used.length} conversations joined` };
}

/** Section 1: what planning one more turn of a 600-message chat costs, warm and cold, against a real tokenizer. */
export const planningSection: BenchSection = {
  id: "planning",
  title: "Planning cost",
  async run({ args, log }) {
    const chat = chatOf600(loadConversations(args.dataDir));
    const messages = chat.messages;
    const texts = messages.flatMap(tokenizedTexts);
    const characters = texts.reduce((sum, text) => sum + text.length, 0);
    log(`600-message chat from ${chat.from}: ${grouped(characters)} characters`);
    const summary = standInSummary(1);
    const everything = Number.MAX_SAFE_INTEGER; // a budget that keeps all 600 messages: the most work a plan does
    const { budget: budget128k } = computeBudget({ window: 128_000, systemTokens: 2_000, toolTokens: 3_000 });

    // Steady state: a chat's cache holds the first 599 messages; each plan meets one new message object.
    const withNewLast = () => [...messages.slice(0, -1), { ...(messages.at(-1) as ChatMessage) }];
    const warmCache = createEstimateCache();
    planFold({ messages, summary, budget: everything, cache: warmCache });
    const warmCache128k = createEstimateCache();
    const settled = planFold({ messages, summary, budget: budget128k, cache: warmCache128k });
    const state128k: FoldState = settled.state;
    let current = withNewLast();
    let coldCache: EstimateCache = createEstimateCache();
    let sink = 0;

    // The cold plan and the tokenizer run back to back in each round, and their ratio is taken round by round.
    const quick = args.quick;
    const rounds = quick ? 2 : 7;
    const times = await timeInRounds(
      [
        {
          name: "steady",
          fn: () => {
            const plan = planFold({ messages: current, summary, budget: everything, cache: warmCache });
            sink += buildRequestMessages(plan.kept, summary).length;
          },
          beforeEach: () => {
            current = withNewLast();
          },
          time: quick ? 100 : 300,
          iterations: 20,
        },
        {
          name: "steady-128k",
          fn: () => {
            const plan = planFold({
              messages: current,
              summary,
              budget: budget128k,
              previous: state128k,
              cache: warmCache128k,
            });
            sink += buildRequestMessages(plan.kept, summary).length;
          },
          beforeEach: () => {
            current = withNewLast();
          },
          time: quick ? 100 : 300,
          iterations: 20,
        },
        {
          name: "cold",
          fn: () => {
            const plan = planFold({ messages, summary, budget: everything, cache: coldCache });
            sink += buildRequestMessages(plan.kept, summary).length;
          },
          beforeEach: () => {
            coldCache = createEstimateCache();
          },
          time: quick ? 150 : 400,
          iterations: 10,
        },
        {
          name: "gpt-tokenizer",
          fn: () => {
            for (const text of texts) sink += countTokens(text);
          },
          time: quick ? 150 : 400,
          iterations: 5,
        },
      ],
      rounds,
    );
    if (sink < 0) log("unreachable");
    const steady = medianOf(times, "steady");
    const steady128k = medianOf(times, "steady-128k");
    const cold = medianOf(times, "cold");
    const tokenizer = medianOf(times, "gpt-tokenizer");
    const ratios = ratiosOf(times, "gpt-tokenizer", "cold");
    const tokenizerRatio = median(ratios);
    const ms = (value: number) => value.toFixed(3);
    return {
      json: {
        planMsSteady600: round(steady, 4),
        planMsSteady600At128k: round(steady128k, 4),
        planMsCold600: round(cold, 3),
        tokenizerMs600: round(tokenizer, 2),
        tokenizerRatio: round(tokenizerRatio, 1),
        tokenizerRatioRange: [round(Math.min(...ratios), 1), round(Math.max(...ratios), 1)],
        planningRounds: rounds,
        planningChat: { from: chat.from, messages: messages.length, characters, keptAt128k: settled.kept.length },
      },
      tables: [
        {
          title: `Planning one more turn of a 600-message chat (${grouped(characters)} characters), median`,
          header: ["what", "ms", "vs cold plan"],
          rows: [
            ["plan, steady (599 estimates cached, all 600 kept)", ms(steady), `${(steady / cold).toFixed(3)}×`],
            [
              `plan, steady at 128K (state kept, ${settled.kept.length} messages kept)`,
              ms(steady128k),
              `${(steady128k / cold).toFixed(3)}×`,
            ],
            ["plan, cold (new cache: all 600 estimated)", ms(cold), "1×"],
            ["gpt-tokenizer o200k countTokens, same texts", ms(tokenizer), `${tokenizerRatio.toFixed(1)}×`],
          ],
          notes: [
            `Medians over ${rounds} rounds; in each round every task runs back to back, and the tokenizer/cold ratio (${tokenizerRatio.toFixed(1)}×) is the median of the rounds' ratios (${Math.min(...ratios).toFixed(1)}–${Math.max(...ratios).toFixed(1)}×).`,
            "A plan here is planFold + buildRequestMessages with a 4,000-character summary.",
            "gpt-tokenizer keeps its own merge cache between runs (left warm, in its favour).",
          ],
        },
      ],
    };
  },
};
