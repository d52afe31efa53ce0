import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { repositoryRoot, testFixturesPath } from "@conch/fake-provider";

/**
 * The larger data the bench reads by default: `shared/data` beside the repository's folder (all the recorded chats
 * and the whole token corpus, where this project's workplace keeps them); `CONCH_SHARED_DATA_DIR` points it
 * elsewhere. Only the bench reads it (scripts/test-fixtures.test.ts fails on anything else that does): tests and
 * the demo read the project's own `test-fixtures`.
 */
export const sharedDataDirectory = process.env.CONCH_SHARED_DATA_DIR
  ? resolve(process.env.CONCH_SHARED_DATA_DIR)
  : resolve(repositoryRoot, "..", "shared", "data");

/** A path inside the shared data, e.g. `sharedDataPath("token-corpus", "train.jsonl")`. */
export function sharedDataPath(...segments: string[]): string {
  return join(sharedDataDirectory, ...segments);
}

/** Where a bench input comes from: the shared data, or (a clone without it) the project's smaller fixture. */
export interface BenchInput {
  readonly path: string;
  readonly from: "shared" | "test-fixtures";
}

/**
 * The shared data's path when it is there, else the fixture of the same format in `test-fixtures` (a subset:
 * the bench runs, but its figures are not the ones docs/bench.md reports).
 */
export function benchInput(shared: readonly string[], fixture: readonly string[]): BenchInput {
  const path = sharedDataPath(...shared);
  return existsSync(path) ? { path, from: "shared" } : { path: testFixturesPath(...fixture), from: "test-fixtures" };
}

/** The recorded chats the bench replays by default. */
export const defaultConversations = benchInput(["conversations"], ["chats"]);

/** The token corpus with real counts the bench reads by default. */
export const defaultCorpus = benchInput(["token-corpus", "train.jsonl"], ["token-corpus", "train.jsonl"]);
