import type { SummaryState } from "../events.js";
import { type BranchTree, forkPointOf } from "./branch-tree.js";
import { type BranchFold, keptSeqs, type TranscriptFile } from "./transcript-file.js";

/** The fold a branch reads from: a summary of a prefix of its path, and where its kept part starts. */
export interface FoldOfBranch {
  /** The branch whose fold it is: the active one's (the file's own fields) or a left branch's leaf. */
  readonly from: "active" | number;
  /** The summary, or undefined when nothing of the branch is folded. */
  readonly summary?: SummaryState;
  /** The first seq of the branch's kept part: everything of its path below it is in the summary. */
  readonly firstKeptSeq: number;
  /** The fold as stored (the left branch's entry, with the engine's own fields), or null for the active one. */
  readonly stored: BranchFold | null;
}

/**
 * The fold the branch ending at `leaf` reads from (`activeLeaf` being the transcript's active branch): its own,
 * when it is the active branch or was left with one; else the deepest fold it shares, one whose summarised prefix
 * lies on its path (it forks at or after that fold's point); else none (it reads its own history from the root,
 * and is folded for itself when it must be).
 */
export function branchFoldOf(
  file: TranscriptFile | null,
  tree: BranchTree,
  activeLeaf: number,
  leaf: number,
): FoldOfBranch | null {
  if (file === null) return null;
  const activeSeqs = keptSeqs(file, tree.nextSeq);
  const candidates: Array<FoldOfBranch & { readonly leaf: number }> = [
    {
      from: "active",
      leaf: activeLeaf,
      ...(file.summary ? { summary: file.summary } : {}),
      firstKeptSeq: file.summary?.firstKeptSeq ?? activeSeqs?.[0] ?? 0,
      stored: null,
    },
  ];
  for (const [key, stored] of Object.entries(file.branches?.folds ?? {})) {
    const storedLeaf = Number(key);
    if (storedLeaf >= tree.nextSeq) continue;
    candidates.push({
      from: storedLeaf,
      leaf: storedLeaf,
      ...(stored.summary ? { summary: stored.summary } : {}),
      firstKeptSeq: stored.summary?.firstKeptSeq ?? stored.seqs[0] ?? 0,
      stored,
    });
  }
  const own = candidates.find((candidate) => candidate.leaf === leaf);
  if (own) return withoutLeaf(own);
  let best: (FoldOfBranch & { readonly leaf: number }) | null = null;
  for (const candidate of candidates) {
    if (candidate.summary === undefined) continue;
    if (forkPointOf(tree, candidate.leaf, leaf) < candidate.firstKeptSeq - 1) continue;
    if (best === null || candidate.firstKeptSeq > best.firstKeptSeq) best = candidate;
  }
  return best ? withoutLeaf(best) : null;
}

function withoutLeaf({ leaf: _leaf, ...fold }: FoldOfBranch & { readonly leaf: number }): FoldOfBranch {
  return fold;
}
