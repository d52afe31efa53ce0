// A branched chat for the tests of the stores that keep one: its log, and its transcript's record of the tree.
import type { ChatMessage } from "../../messages.js";
import { type ForkEntry, forkOf } from "../branch-tree.js";
import type { TranscriptFile } from "../transcript-file.js";

const said = (seq: number, role: ChatMessage["role"], text: string, parent?: number): ChatMessage => ({
  seq,
  role,
  parts: [{ type: "text", text }],
  createdAt: 1_733_000_000_000 + seq,
  ...(parent !== undefined ? { parent } : {}),
});

/**
 * Two turns; the second person message edited (4, after 1) and its answer regenerated (6, after 4); the first
 * message edited too (7, no parent) and answered (8).
 */
export const branchedLog: readonly ChatMessage[] = [
  said(0, "user", "one"),
  said(1, "assistant", "Answer to one"),
  said(2, "user", "two"),
  said(3, "assistant", "Answer to two"),
  said(4, "user", "two, edited", 1),
  said(5, "assistant", "Answer to two, edited"),
  said(6, "assistant", "Answer to two, edited, again", 4),
  said(7, "user", "one, edited", -1),
  said(8, "assistant", "Answer to one, edited"),
];

/** The transcript with its record of `branchedLog`'s forks below `through`, and the active leaf. */
export function withBranches(file: TranscriptFile, through: number, activeLeaf: number): TranscriptFile {
  const forks = branchedLog
    .slice(0, through)
    .map(forkOf)
    .filter((fork): fork is ForkEntry => fork !== null);
  return { ...file, branches: { forks, through, activeLeaf } };
}
