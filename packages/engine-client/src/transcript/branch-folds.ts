import type { SummaryState } from "../events.js";
import { type BranchTree, forkPointOf, isOnPath } from "./branch-tree.js";
import { type BranchFold, type EarlierFold, keptSeqs, keptStart, type TranscriptFile } from "./transcript-file.js";

/** The fold a branch reads from: a summary of a prefix of its path, and where its kept part starts. */
export interface FoldOfBranch {
  /**
   * Whose fold it is: `active`, the transcript's own (the branch is the active one, or continues it); `left`, the
   * fold the branch was left with (`stored` is that entry); `shared`, another branch's fold (or earlier fold) whose
   * folded prefix lies on this branch's path.
   */
  readonly kind: "active" | "left" | "shared";
  /** The summary, or undefined when nothing of the branch is folded. */
  readonly summary?: SummaryState;
  /** The first seq of the branch's kept part: everything of its path below it is folded. */
  readonly firstKeptSeq: number;
  /** The fold's record as stored, with the engine's own fields: the left branch's entry, or the earlier fold shared. */
  readonly stored: { readonly [field: string]: unknown } | null;
  /** The leaf of the branch the fold was made on. */
  readonly leaf: number;
  /** That branch's entry when it is a left one (what it learned rides on it), null for the active branch. */
  readonly branch: BranchFold | null;
  /** The branch's earlier folds with this one (oldest first). */
  readonly earlier: readonly EarlierFold[];
  /** The last message of the branch it was made on when it was made; undefined when not recorded. */
  readonly foldedAt?: number;
}

/** The leaf of the branch the transcript's own fields belong to (for a file written before branches, its last kept seq). */
export function recordedLeafOf(file: TranscriptFile, nextSeq: number): number {
  return file.branches?.activeLeaf ?? keptSeqs(file, nextSeq)?.at(-1) ?? nextSeq - 1;
}

type Candidate = FoldOfBranch;

/**
 * The fold the branch ending at `leaf` reads from: the transcript's own when the branch is the one it was written
 * for (or continues it); the fold it was left with; else the deepest fold (a branch's latest, or one of its earlier
 * ones) made on a path this branch shares up to the message the fold was made at (`foldedAt`), so that the branch
 * is folded as a chat of that branch alone would be; else none (null: it reads its own history from the root, and
 * is folded for itself when it must be).
 */
export function branchFoldOf(file: TranscriptFile | null, tree: BranchTree, leaf: number): FoldOfBranch | null {
  if (file === null) return null;
  const recordedLeaf = recordedLeafOf(file, tree.nextSeq);
  const activeEarlier = file.branches?.earlier ?? [];
  const active: Candidate = {
    kind: "active",
    leaf: recordedLeaf,
    ...(file.summary ? { summary: file.summary } : {}),
    firstKeptSeq: Math.min(keptStart(file, tree.nextSeq), Math.max(0, recordedLeaf)),
    stored: null,
    branch: null,
    earlier: activeEarlier,
    ...(file.branches?.foldedAt !== undefined ? { foldedAt: file.branches.foldedAt } : {}),
  };
  if (recordedLeaf < tree.nextSeq && isOnPath(tree, leaf, recordedLeaf)) return active;
  const candidates: Candidate[] = [active];
  for (const [key, stored] of Object.entries(file.branches?.folds ?? {})) {
    const storedLeaf = Number(key);
    if (storedLeaf >= tree.nextSeq) continue;
    const left: Candidate = {
      kind: "left",
      leaf: storedLeaf,
      ...(stored.summary ? { summary: stored.summary } : {}),
      firstKeptSeq: stored.seqs[0] ?? stored.summary?.firstKeptSeq ?? 0,
      stored,
      branch: stored,
      earlier: stored.earlier ?? [],
      ...(stored.foldedAt !== undefined ? { foldedAt: stored.foldedAt } : {}),
    };
    if (isOnPath(tree, leaf, storedLeaf)) return left;
    candidates.push(left);
  }
  let best: Candidate | null = null;
  const consider = (candidate: Candidate) => {
    if (candidate.firstKeptSeq === 0) return;
    if (best !== null && candidate.firstKeptSeq <= best.firstKeptSeq) return;
    // Shared only by a branch holding the message it was made at: such a branch, alone, would have made it too.
    if (forkPointOf(tree, candidate.leaf, leaf) < (candidate.foldedAt ?? candidate.firstKeptSeq - 1)) return;
    best = candidate;
  };
  for (const candidate of candidates) {
    consider({ ...candidate, kind: "shared" });
    candidate.earlier.forEach((fold, index) => {
      consider({
        kind: "shared",
        leaf: candidate.leaf,
        summary: fold.summary,
        firstKeptSeq: fold.summary.firstKeptSeq,
        stored: fold,
        branch: candidate.branch,
        earlier: candidate.earlier.slice(0, index),
        ...(fold.foldedAt !== undefined ? { foldedAt: fold.foldedAt } : {}),
      });
    });
  }
  return best;
}
