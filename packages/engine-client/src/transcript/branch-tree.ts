import type { ChatMessage, MessageRole } from "../messages.js";

/**
 * A message whose parent is not the message before it: an edit (a person's message beside the one it replaces),
 * a regenerated answer (beside the answer it replaces), or a turn on a branch that is not the log's newest.
 * `parent` is -1 for a message with no parent (an edit of the chat's first message).
 */
export interface ForkEntry {
  readonly seq: number;
  readonly parent: number;
  /** The message's role, so its versions can be told without reading it. */
  readonly role: MessageRole;
}

/**
 * A chat's log as a tree, described by its exceptions: every message's parent is the one before it (`seq - 1`)
 * except the forks'. Everything below (a message's parent, a branch's path, a message's versions, the newest leaf
 * through a message) is answered from the forks alone, without reading the log; its cost grows with the forks,
 * never with the log.
 */
export interface BranchTree {
  /** The log's length: seqs 0 to `nextSeq - 1`. */
  readonly nextSeq: number;
  /** The forks, in seq order. */
  readonly forks: readonly ForkEntry[];
  /** The forks by seq. */
  readonly forkAt: ReadonlyMap<number, ForkEntry>;
  /** The forks by parent, each list in seq order. */
  readonly forksFrom: ReadonlyMap<number, readonly ForkEntry[]>;
}

/** A run of consecutive seqs, `from` to `to` (excluded), each the parent of the next. */
export interface SeqRange {
  readonly from: number;
  readonly to: number;
}

/** The tree of a log of `nextSeq` messages with these forks (any order; each seq below `nextSeq`). */
export function branchTree(nextSeq: number, forks: readonly ForkEntry[]): BranchTree {
  const sorted = [...forks].sort((a, b) => a.seq - b.seq);
  const forkAt = new Map<number, ForkEntry>();
  const forksFrom = new Map<number, ForkEntry[]>();
  for (const fork of sorted) {
    forkAt.set(fork.seq, fork);
    const siblings = forksFrom.get(fork.parent);
    if (siblings) siblings.push(fork);
    else forksFrom.set(fork.parent, [fork]);
  }
  return { nextSeq, forks: sorted, forkAt, forksFrom };
}

/** The seq a message follows: its `parent`, absent meaning the one before it (-1 for a log's first: the root). */
export function messageParent(message: Pick<ChatMessage, "seq" | "parent">): number {
  return message.parent ?? message.seq - 1;
}

/** The message's fork entry when its parent is not `seq - 1`, else null. */
export function forkOf(message: Pick<ChatMessage, "seq" | "parent" | "role">): ForkEntry | null {
  const { seq, role } = message;
  const parent = messageParent(message);
  return parent === seq - 1 ? null : { seq, parent, role };
}

/** The tree grown by messages appended after its end (in seq order, the first at `tree.nextSeq`). */
export function growTree(tree: BranchTree, appended: readonly ChatMessage[]): BranchTree {
  const last = appended.at(-1);
  if (last === undefined) return tree;
  const added = appended.map(forkOf).filter((fork): fork is ForkEntry => fork !== null);
  if (added.length === 0) return { ...tree, nextSeq: last.seq + 1 };
  return branchTree(last.seq + 1, [...tree.forks, ...added]);
}

/** The tree of a whole log read in seq order (a log without forks is one branch). */
export function treeOfLog(log: readonly ChatMessage[]): BranchTree {
  return growTree(branchTree(0, []), log);
}

/** The seq of the message `seq` follows: -1 for a message with no parent. */
export function parentOf(tree: BranchTree, seq: number): number {
  return tree.forkAt.get(seq)?.parent ?? seq - 1;
}

/** The last fork at or below `seq`, or null (binary search over the forks). */
function forkAtOrBelow(tree: BranchTree, seq: number): ForkEntry | null {
  const { forks } = tree;
  let low = 0;
  let high = forks.length - 1;
  let found: ForkEntry | null = null;
  while (low <= high) {
    const middle = (low + high) >> 1;
    const fork = forks[middle] as ForkEntry;
    if (fork.seq <= seq) {
      found = fork;
      low = middle + 1;
    } else high = middle - 1;
  }
  return found;
}

/**
 * The path from the root to `leaf` as runs of consecutive seqs, oldest first: the branch's messages are exactly
 * the seqs of these ranges. One range per fork on the path, plus one. Empty for -1.
 */
export function pathRanges(tree: BranchTree, leaf: number): SeqRange[] {
  const ranges: SeqRange[] = [];
  let current = leaf;
  while (current >= 0) {
    const fork = forkAtOrBelow(tree, current);
    const from = fork?.seq ?? 0;
    ranges.push({ from, to: current + 1 });
    current = fork ? fork.parent : -1;
  }
  return ranges.reverse();
}

/** The branch's seqs within the ranges, from `from` on (a kept part, say). */
export function rangesFrom(ranges: readonly SeqRange[], from: number): SeqRange[] {
  return ranges
    .filter((range) => range.to > from)
    .map((range) => (range.from >= from ? range : { from, to: range.to }));
}

/** How many seqs the ranges hold. */
export function rangesLength(ranges: readonly SeqRange[]): number {
  return ranges.reduce((sum, range) => sum + range.to - range.from, 0);
}

/** The last `limit` seqs of the ranges below `before`, as ranges, and whether seqs of the ranges lie below them. */
export function pageOfRanges(
  ranges: readonly SeqRange[],
  before: number,
  limit: number,
): { readonly ranges: SeqRange[]; readonly hasOlder: boolean } {
  const page: SeqRange[] = [];
  let left = limit;
  let index = ranges.length - 1;
  for (; index >= 0 && left > 0; index--) {
    const range = ranges[index] as SeqRange;
    const to = Math.min(range.to, before);
    if (to <= range.from) continue;
    const from = Math.max(range.from, to - left);
    page.push({ from, to });
    left -= to - from;
    if (from > range.from) return { ranges: page.reverse(), hasOlder: true };
  }
  const hasOlder = ranges.slice(0, index + 1).some((range) => range.from < before);
  return { ranges: page.reverse(), hasOlder };
}

/** Whether `seq` lies on the path from the root to `leaf`. */
export function isOnPath(tree: BranchTree, leaf: number, seq: number): boolean {
  if (seq < 0) return true;
  return pathRanges(tree, leaf).some((range) => seq >= range.from && seq < range.to);
}

/** The children of `parent` (-1: the messages with no parent), in seq order. */
export function childrenOf(tree: BranchTree, parent: number): number[] {
  const next = parent + 1;
  const children = next < tree.nextSeq && !tree.forkAt.has(next) ? [next] : [];
  for (const fork of tree.forksFrom.get(parent) ?? []) children.push(fork.seq);
  return children.sort((a, b) => a - b);
}

/**
 * The versions of the message at `seq`: its parent's children with its role, in seq order, itself included.
 * `roleOf` gives the role of a child the forks do not describe (the one at `parent + 1`), or undefined when it is
 * not known (then it counts as a version).
 */
export function versionsOf(
  tree: BranchTree,
  seq: number,
  role: MessageRole,
  roleOf: (seq: number) => MessageRole | undefined,
): number[] {
  return childrenOf(tree, parentOf(tree, seq)).filter((child) => {
    if (child === seq) return true;
    const childRole = tree.forkAt.get(child)?.role ?? roleOf(child);
    return childRole === undefined || childRole === role;
  });
}

/**
 * The newest leaf through `seq`: the highest seq whose path passes through it (itself when nothing follows it).
 * Walks the forks above `seq` once: between two forks, a message is on a path through `seq` exactly when the one
 * before it is.
 */
export function newestLeaf(tree: BranchTree, seq: number): number {
  // The seqs at or above `seq` whose path passes through it, as closed runs, and whether the current run is open.
  const runs: Array<[number, number]> = [];
  let openFrom: number | null = seq;
  const through = (candidate: number): boolean =>
    candidate === seq ||
    runs.some(([from, to]) => candidate >= from && candidate <= to) ||
    (openFrom !== null && candidate >= openFrom);
  for (const fork of tree.forks) {
    if (fork.seq <= seq) continue;
    if (openFrom !== null) {
      runs.push([openFrom, fork.seq - 1]);
      openFrom = null;
    }
    if (through(fork.parent)) openFrom = fork.seq;
  }
  if (openFrom !== null) return Math.max(seq, tree.nextSeq - 1);
  return runs.at(-1)?.[1] ?? seq;
}

/** The deepest message on both paths (-1 when they share none): where the branches of two leaves part. */
export function forkPointOf(tree: BranchTree, leafA: number, leafB: number): number {
  const a = pathRanges(tree, leafA);
  const b = pathRanges(tree, leafB);
  let shared = -1;
  for (let index = 0; index < Math.min(a.length, b.length); index++) {
    const rangeA = a[index] as SeqRange;
    const rangeB = b[index] as SeqRange;
    if (rangeA.from !== rangeB.from) break;
    shared = Math.min(rangeA.to, rangeB.to) - 1;
    if (rangeA.to !== rangeB.to) break;
  }
  return shared;
}
