/**
 * `pnpm bench`: measures the context arithmetic against baselines run in the same process.
 * Tables go to stdout (to stderr with `--json`, where stdout carries exactly one JSON object).
 */
import { parseArgs } from "./args.js";
import type { BenchContext } from "./section.js";
import { sections } from "./sections/index.js";
import { sharedDataDirectory } from "./shared-data.js";
import { formatTable } from "./table.js";

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const log = (message: string) => process.stderr.write(`[bench] ${message}\n`);
  const print = (text: string) => (args.json ? process.stderr : process.stdout).write(`${text}\n`);
  const context: BenchContext = { args, log };
  for (const input of [args.dataDir, args.corpusFile]) {
    if (!input.startsWith(sharedDataDirectory)) log(`reading ${input}: figures not comparable with docs/bench.md`);
  }
  const unknown = args.only.filter((id) => !sections.some((section) => section.id === id));
  if (unknown.length > 0) throw new Error(`unknown section ${unknown.join(", ")}`);
  const started = performance.now();
  const json: Record<string, unknown> = {
    node: process.version,
    dataDir: args.dataDir,
    corpusFile: args.corpusFile,
    quick: args.quick,
  };
  for (const section of sections) {
    if (args.only.length > 0 && !args.only.includes(section.id)) continue;
    const sectionStarted = performance.now();
    log(`${section.title}...`);
    const result = await section.run(context);
    for (const [key, value] of Object.entries(result.json)) {
      if (key in json) throw new Error(`section ${section.id} repeats the JSON key ${key}`);
      json[key] = value;
    }
    print(`## ${section.title}\n`);
    for (const table of result.tables) print(formatTable(table));
    log(`${section.title} done in ${((performance.now() - sectionStarted) / 1000).toFixed(1)} s`);
  }
  json.seconds = Math.round((performance.now() - started) / 100) / 10;
  if (args.json) process.stdout.write(`${JSON.stringify(json)}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
