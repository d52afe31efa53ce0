import { readFileSync } from "node:fs";

// The conversations come from @conch/fake-provider's loader (one loader for tests, bench, dev and simulate).
export { type Conversation, isLongConversation, loadConversations } from "@conch/fake-provider";

/** Tokenizers with real counts in the token corpus. */
export const corpusTokenizers = [
  "o200k",
  "cl100k",
  "claude_legacy",
  "qwen3",
  "gemma3",
  "llama3",
  "deepseek_v3",
  "mistral_v1",
] as const;
export type CorpusTokenizer = (typeof corpusTokenizers)[number];

/** One sample of the token corpus with its real counts. */
export interface CorpusSample {
  readonly category: string;
  readonly text: string;
  readonly tokens: Readonly<Record<CorpusTokenizer, number>>;
}

/** Reads the token corpus (test-fixtures/README.md describes the format). */
export function loadCorpus(file: string): CorpusSample[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as CorpusSample);
}
