import { estimateTokens, utf8Length } from "@conch/engine-client/context";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { adrEstimateTokens } from "../adr-estimate.js";
import { type CorpusSample, type CorpusTokenizer, corpusTokenizers, loadCorpus } from "../data.js";
import { medianOf, ratiosOf, timeInRounds } from "../measure.js";
import type { BenchSection } from "../section.js";
import { median, percent, round } from "../stats.js";

/** A ratio below this is "more than 10% short": a request filled to the margin overflows. */
const shortRatio = 0.9;

/** The family name the library uses for each tokenizer of the corpus. */
const familyOf: Readonly<Record<CorpusTokenizer, string>> = {
  o200k: "o200k",
  cl100k: "cl100k",
  claude_legacy: "claude-legacy",
  qwen3: "qwen3",
  gemma3: "gemma3",
  llama3: "llama3",
  deepseek_v3: "deepseek-v3",
  mistral_v1: "mistral-v1",
};

const estimators = ["ours", "oursFamily", "adr"] as const;
type EstimatorName = (typeof estimators)[number];

interface RatioStats {
  /** Median estimate / real. */
  readonly median: number;
  /** Share of samples more than 10% short. */
  readonly under: number;
  readonly samples: number;
}

function statsOf(ratios: readonly number[]): RatioStats {
  return {
    median: round(median(ratios), 3),
    under: round(ratios.filter((ratio) => ratio < shortRatio).length / ratios.length, 4),
    samples: ratios.length,
  };
}

function estimate(name: EstimatorName, text: string, tokenizer: CorpusTokenizer): number {
  switch (name) {
    case "ours":
      return estimateTokens(text);
    case "oursFamily":
      return estimateTokens(text, familyOf[tokenizer]);
    case "adr":
      return adrEstimateTokens(text);
    default:
      return name satisfies never;
  }
}

/** The samples whose place in their category (0, 1, 2, ...) passes `keep`. */
function perCategory(samples: readonly CorpusSample[], keep: (place: number) => boolean): CorpusSample[] {
  const seen = new Map<string, number>();
  return samples.filter((sample) => {
    const place = seen.get(sample.category) ?? 0;
    seen.set(sample.category, place + 1);
    return keep(place);
  });
}

/** Section 3: the estimate against real token counts, and its speed. */
export const estimateSection: BenchSection = {
  id: "estimate",
  title: "Estimate against real token counts",
  async run({ args, log }) {
    const all = loadCorpus(args.corpusFile);
    // --quick: the first 6 samples of each category.
    const samples = args.quick ? perCategory(all, (place) => place < 6) : all;
    const categories = [...new Set(samples.map((sample) => sample.category))];
    log(`${samples.length} samples in ${categories.length} categories`);

    // ratios[estimator][tokenizer] = one ratio per sample, in sample order
    const ratios = Object.fromEntries(
      estimators.map((name) => [
        name,
        Object.fromEntries(
          corpusTokenizers.map((tokenizer) => [
            tokenizer,
            samples.map((sample) => estimate(name, sample.text, tokenizer) / sample.tokens[tokenizer]),
          ]),
        ),
      ]),
    ) as Record<EstimatorName, Record<CorpusTokenizer, number[]>>;

    const byTokenizer = Object.fromEntries(
      corpusTokenizers.map((tokenizer) => [
        tokenizer,
        Object.fromEntries(
          estimators.map((name) => {
            const values = ratios[name][tokenizer];
            const categoryStats = categories.map((category) =>
              statsOf(values.filter((_, index) => samples[index]?.category === category)),
            );
            return [
              name,
              {
                ...statsOf(values),
                worstCategoryUnder: Math.max(...categoryStats.map((stats) => stats.under)),
                worstCategoryMedian: Math.max(...categoryStats.map((stats) => stats.median)),
              },
            ];
          }),
        ),
      ]),
    ) as Record<
      CorpusTokenizer,
      Record<EstimatorName, RatioStats & { worstCategoryUnder: number; worstCategoryMedian: number }>
    >;

    const byCategory = categories.map((category) => ({
      category,
      ...Object.fromEntries(
        estimators.map((name) => [
          name,
          Object.fromEntries(
            corpusTokenizers.map((tokenizer) => [
              tokenizer,
              statsOf(ratios[name][tokenizer].filter((_, index) => samples[index]?.category === category)),
            ]),
          ),
        ]),
      ),
    })) as ({ category: string } & Record<EstimatorName, Record<CorpusTokenizer, RatioStats>>)[];

    // Throughput: every fourth sample of each category (a cross-section of all of them; gpt-tokenizer takes
    // seconds a pass over the whole corpus), each counted once per run, as a planner counts messages.
    const every = args.quick ? 8 : 4;
    const throughputSamples = perCategory(samples, (place) => place % every === 0);
    const texts = throughputSamples.map((sample) => sample.text);
    const megabytes = texts.reduce((sum, text) => sum + utf8Length(text), 0) / 1e6;
    let sink = 0;
    const rounds = args.quick ? 2 : 5;
    log(`throughput on ${megabytes.toFixed(1)} MB, ${rounds} rounds...`);
    // Each round times the three counters one after the other, so the machine's load falls on all alike.
    const times = await timeInRounds(
      [
        {
          name: "ours",
          fn: () => {
            for (const text of texts) sink += estimateTokens(text);
          },
          time: 300,
          iterations: 5,
        },
        {
          name: "adr",
          fn: () => {
            for (const text of texts) sink += adrEstimateTokens(text);
          },
          time: 300,
          iterations: 5,
        },
        {
          name: "gpt-tokenizer",
          fn: () => {
            for (const text of texts) sink += countTokens(text);
          },
          time: 1,
          iterations: 1,
        },
      ],
      rounds,
    );
    if (sink < 0) log("unreachable");
    const mbps = (name: string) => megabytes / (medianOf(times, name) / 1000);
    const throughput = {
      megabytes: round(megabytes, 2),
      samples: texts.length,
      ours: round(mbps("ours"), 1),
      adr: round(mbps("adr"), 1),
      gptTokenizer: round(mbps("gpt-tokenizer"), 1),
      tokenizerOverOurs: round(median(ratiosOf(times, "gpt-tokenizer", "ours")), 1),
    };

    const cell = (stats: RatioStats) => `${stats.median.toFixed(2)} / ${percent(stats.under, 0)}`;
    const summaryRows = corpusTokenizers.map((tokenizer) => {
      const row = byTokenizer[tokenizer];
      return [
        tokenizer,
        percent(row.ours.under),
        row.ours.median.toFixed(2),
        percent(row.ours.worstCategoryUnder, 0),
        percent(row.oursFamily.under),
        row.oursFamily.median.toFixed(2),
        percent(row.adr.under),
        row.adr.median.toFixed(2),
      ];
    });
    const categoryTable = (name: EstimatorName, title: string) => ({
      title,
      header: ["category", ...corpusTokenizers],
      rows: byCategory.map((row) => [row.category, ...corpusTokenizers.map((tokenizer) => cell(row[name][tokenizer]))]),
    });
    return {
      json: {
        estimate: {
          samples: samples.length,
          sampled: args.quick,
          tokenizers: byTokenizer,
          categories: byCategory,
        },
        throughputMBps: throughput,
      },
      tables: [
        {
          title: `Estimate / real tokens, ${samples.length} samples${args.quick ? " (sampled)" : ""}: share more than 10% short, median`,
          header: [
            "tokenizer",
            "ours short",
            "ours median",
            "ours worst category short",
            "ours per family short",
            "per family median",
            "ADR short",
            "ADR median",
          ],
          rows: summaryRows,
          notes: [
            "ours = the all-model table (the default); ours per family = the family's table, chosen by model id when the family is known; ADR = ceil(ASCII/4) + 1 per other code point.",
          ],
        },
        categoryTable("ours", "Ours (all-model table) by category: median estimate/real / share more than 10% short"),
        categoryTable("adr", "ADR's rule by category: median estimate/real / share more than 10% short"),
        {
          title: `Throughput on ${megabytes.toFixed(1)} MB of UTF-8 (${texts.length} samples, every ${every}th of each category, each counted once per run), median of ${rounds} rounds`,
          header: ["counter", "MB/s", "vs ours"],
          rows: [
            ["ours (all-model table)", throughput.ours.toFixed(0), "1×"],
            ["ADR's rule", throughput.adr.toFixed(0), `${(throughput.adr / throughput.ours).toFixed(2)}×`],
            [
              "gpt-tokenizer o200k countTokens",
              throughput.gptTokenizer.toFixed(1),
              `1/${throughput.tokenizerOverOurs.toFixed(0)}`,
            ],
          ],
        },
      ],
    };
  },
};
