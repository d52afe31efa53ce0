import type { BenchArgs } from "./args.js";
import type { Table } from "./table.js";

/** What a section gets: the options, and a way to say what it is doing (stderr only). */
export interface BenchContext {
  readonly args: BenchArgs;
  readonly log: (message: string) => void;
}

/** What a section gives back: fields of the one JSON object, and tables to print. */
export interface SectionResult {
  /** Merged into the top level of the JSON object; keys must not clash with other sections'. */
  readonly json: Readonly<Record<string, unknown>>;
  readonly tables: readonly Table[];
}

/**
 * One part of `pnpm bench`. Sections run one after another in one process, so every ratio compares
 * figures measured side by side. Add one by writing a module that exports a `BenchSection` and listing
 * it in `sections/index.ts`.
 */
export interface BenchSection {
  /** Short id for `--only`. */
  readonly id: string;
  readonly title: string;
  run(context: BenchContext): Promise<SectionResult>;
}
