import { defaultConversations, defaultCorpus } from "./shared-data.js";

/** Command-line options of `pnpm bench`. */
export interface BenchArgs {
  /** Print one JSON object on stdout (tables go to stderr). */
  readonly json: boolean;
  /** Folder of conversation JSONL files (the format of test-fixtures/chats; see its README). */
  readonly dataDir: string;
  /** Token corpus JSONL with real counts (the format of test-fixtures/token-corpus/train.jsonl). */
  readonly corpusFile: string;
  /** Section ids to run; empty runs all. */
  readonly only: readonly string[];
  /** Shorter timings and a sampled corpus, for a quick look (not for the figures). */
  readonly quick: boolean;
}

export const usage = `pnpm bench [--json] [--data DIR] [--corpus FILE] [--only SECTION[,SECTION]] [--quick]

  --json         one JSON object on stdout; tables and progress go to stderr
  --data DIR     conversation JSONL files to replay (default ../shared/data/conversations, or
                 test-fixtures/chats when that is missing)
  --corpus FILE  token corpus with real counts (default ../shared/data/token-corpus/train.jsonl, or
                 test-fixtures/token-corpus/train.jsonl when that is missing)
  --only IDS     run only these sections (planning, prompt-cache, estimate, ui, store, redaction, scale, real-server, hostile)
  --quick        shorter timings, sampled corpus: a quick look, not the figures`;

export function parseArgs(argv: readonly string[]): BenchArgs {
  let json = false;
  let quick = false;
  let dataDir = defaultConversations.path;
  let corpusFile = defaultCorpus.path;
  let only: string[] = [];
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index];
    const value = () => {
      const next = argv[++index];
      if (next === undefined) throw new Error(`${arg} needs a value\n\n${usage}`);
      return next;
    };
    switch (arg) {
      case "--":
        break;
      case "--json":
        json = true;
        break;
      case "--quick":
        quick = true;
        break;
      case "--data":
        dataDir = value();
        break;
      case "--corpus":
        corpusFile = value();
        break;
      case "--only":
        only = value()
          .split(",")
          .map((id) => id.trim())
          .filter(Boolean);
        break;
      case "--help":
      case "-h":
        process.stderr.write(`${usage}\n`);
        process.exit(0);
        break;
      default:
        throw new Error(`unknown option ${arg}\n\n${usage}`);
    }
  }
  return { json, dataDir, corpusFile, only, quick };
}
