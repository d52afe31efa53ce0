// The person's messages sent to a real llama-server (test-fixtures/real-server/README.md says where they come from).
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const turnKinds = ["english", "chinese", "tool"] as const;
export type TurnKind = (typeof turnKinds)[number];

export interface RealServerTurn {
  readonly kind: TurnKind;
  readonly text: string;
  readonly source: string;
}

const turnsFile = join(dirname(fileURLToPath(import.meta.url)), "..", "test-fixtures", "real-server", "turns.json");

type TurnsFile = Record<TurnKind, readonly { readonly text: string; readonly source: string }[]>;

/** `count` turns round-robin over the three kinds (English, Chinese, tool output, English, …), repeating after 30. */
export function roundRobinTurns(count: number): RealServerTurn[] {
  const file = JSON.parse(readFileSync(turnsFile, "utf8")) as TurnsFile;
  const turns: RealServerTurn[] = [];
  for (let index = 0; index < count; index++) {
    const kind = turnKinds[index % turnKinds.length] as TurnKind;
    const texts = file[kind];
    const chosen = texts[Math.floor(index / turnKinds.length) % texts.length];
    if (!chosen) throw new Error(`${turnsFile} has no ${kind} turns`);
    turns.push({ kind, text: chosen.text, source: chosen.source });
  }
  return turns;
}
