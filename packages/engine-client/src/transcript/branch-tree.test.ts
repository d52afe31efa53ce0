import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import type { ChatMessage, MessageRole } from "../messages.js";
import {
  branchTree,
  childrenOf,
  forkOf,
  forkPointOf,
  isOnPath,
  newestLeaf,
  pageOfRanges,
  parentOf,
  pathRanges,
  rangesFrom,
  treeOfLog,
  versionsOf,
} from "./branch-tree.js";
import type { ChatStore } from "./chat-store.js";
import { createFileChatStore } from "./file-store.node.js";
import { createMemoryChatStore } from "./memory-store.js";
import { buildTranscriptFile } from "./transcript-file.js";

/** What a person does to a chat: each op's number picks its target among the candidates. */
type Op =
  | { readonly kind: "send" }
  | { readonly kind: "edit"; readonly pick: number }
  | { readonly kind: "regenerate"; readonly pick: number }
  | { readonly kind: "switch"; readonly pick: number };

const opArbitrary: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.constant({ kind: "send" } as const) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("edit" as const), pick: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("regenerate" as const), pick: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("switch" as const), pick: fc.nat() }) },
);

/** The tree kept the plain way (every parent listed), against which the forks-only answers are checked. */
interface Reference {
  readonly log: ChatMessage[];
  readonly parents: number[];
  leaf: number;
}

function referencePath(reference: Reference, leaf: number): number[] {
  const path: number[] = [];
  for (let seq = leaf; seq >= 0; seq = reference.parents[seq] as number) path.push(seq);
  return path.reverse();
}

function referenceNewestLeaf(reference: Reference, seq: number): number {
  let newest = seq;
  for (let other = seq; other < reference.log.length; other++) {
    if (referencePath(reference, other).includes(seq)) newest = other;
  }
  return newest;
}

function append(reference: Reference, role: MessageRole, parent: number): void {
  const seq = reference.log.length;
  const message: ChatMessage = {
    seq,
    role,
    parts: [{ type: "text", text: `m${seq}` }],
    ...(parent !== seq - 1 ? { parent } : {}),
  };
  reference.log.push(message);
  reference.parents.push(parent);
  reference.leaf = seq;
}

/** Plays the ops as the API engine does: a send is a person's message and its answer. */
function play(ops: readonly Op[]): Reference {
  const reference: Reference = { log: [], parents: [], leaf: -1 };
  for (const op of ops) {
    const path = referencePath(reference, reference.leaf);
    const people = path.filter((seq) => reference.log[seq]?.role === "user");
    if (op.kind === "send" || people.length === 0) {
      append(reference, "user", reference.leaf);
      append(reference, "assistant", reference.leaf);
    } else if (op.kind === "edit") {
      const edited = people[op.pick % people.length] as number;
      append(reference, "user", reference.parents[edited] as number);
      append(reference, "assistant", reference.leaf);
    } else if (op.kind === "regenerate") {
      append(reference, "assistant", people[op.pick % people.length] as number);
    } else {
      reference.leaf = referenceNewestLeaf(reference, op.pick % reference.log.length);
    }
  }
  return reference;
}

const expand = (ranges: readonly { from: number; to: number }[]) =>
  ranges.flatMap(({ from, to }) => Array.from({ length: to - from }, (_, index) => from + index));

describe("the branch tree, from its forks alone", () => {
  it("answers as the whole tree does: parents, paths, children, versions, newest leaves, fork points", () => {
    fc.assert(
      fc.property(fc.array(opArbitrary, { maxLength: 30 }), (ops) => {
        const reference = play(ops);
        const tree = treeOfLog(reference.log);
        expect(tree.nextSeq).toBe(reference.log.length);
        // Only the exceptions are kept.
        expect(tree.forks.length).toBe(reference.log.filter((message) => forkOf(message) !== null).length);
        const roleOf = (seq: number) => reference.log[seq]?.role;
        for (const message of reference.log) {
          const { seq } = message;
          expect(parentOf(tree, seq)).toBe(reference.parents[seq]);
          // The path is a path: each message's parent is the one before it on the path.
          const path = expand(pathRanges(tree, seq));
          expect(path).toEqual(referencePath(reference, seq));
          // Every message is reachable: it lies on the branch its newest leaf ends.
          const leaf = newestLeaf(tree, seq);
          expect(leaf).toBe(referenceNewestLeaf(reference, seq));
          expect(isOnPath(tree, leaf, seq)).toBe(true);
          const children = reference.parents.flatMap((parent, child) => (parent === seq ? [child] : []));
          expect(childrenOf(tree, seq)).toEqual(children);
          const versions = reference.parents.flatMap((parent, other) =>
            parent === reference.parents[seq] && reference.log[other]?.role === message.role ? [other] : [],
          );
          expect(versionsOf(tree, seq, message.role, roleOf)).toEqual(versions);
          const activePath = referencePath(reference, reference.leaf);
          const shared = path.filter((step) => activePath.includes(step)).at(-1) ?? -1;
          expect(forkPointOf(tree, seq, reference.leaf)).toBe(shared);
        }
      }),
      { numRuns: 150 },
    );
  });

  it("pages a branch from its leaf back, and cuts it at a kept part's start", () => {
    fc.assert(
      fc.property(
        fc.array(opArbitrary, { minLength: 1, maxLength: 25 }),
        fc.nat(),
        fc.integer({ min: 1, max: 12 }),
        fc.nat(),
        (ops, beforePick, limit, fromPick) => {
          const reference = play(ops);
          const tree = treeOfLog(reference.log);
          const ranges = pathRanges(tree, reference.leaf);
          const path = referencePath(reference, reference.leaf);
          const before = beforePick % (reference.log.length + 1);
          const below = path.filter((seq) => seq < before);
          const page = pageOfRanges(ranges, before, limit);
          expect(expand(page.ranges)).toEqual(below.slice(Math.max(0, below.length - limit)));
          expect(page.hasOlder).toBe(below.length > limit);
          const from = fromPick % (reference.log.length + 1);
          expect(expand(rangesFrom(ranges, from))).toEqual(path.filter((seq) => seq >= from));
        },
      ),
      { numRuns: 150 },
    );
  });

  it("takes forks in any order, and a tree without forks is the log itself", () => {
    const tree = branchTree(5, [
      { seq: 4, parent: 1, role: "user" },
      { seq: 3, parent: -1, role: "user" },
    ]);
    expect(tree.forks.map((fork) => fork.seq)).toEqual([3, 4]);
    expect(expand(pathRanges(tree, 4))).toEqual([0, 1, 4]);
    expect(childrenOf(tree, -1)).toEqual([0, 3]);
    expect(expand(pathRanges(branchTree(3, []), 2))).toEqual([0, 1, 2]);
    expect(pathRanges(branchTree(0, []), -1)).toEqual([]);
  });
});

describe("readChat on a branched log", () => {
  it("reads the active branch or the one asked for, whether the transcript recorded the forks or not", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(opArbitrary, { minLength: 1, maxLength: 20 }),
        fc.nat(),
        fc.nat(),
        fc.integer({ min: 1, max: 8 }),
        async (ops, recordPick, branchPick, limit) => {
          const reference = play(ops);
          const store = createMemoryChatStore();
          await store.appendLog("c", reference.log);
          // The transcript recorded the tree at some earlier point (a crash after appending loses nothing):
          // the messages appended since are read for their forks.
          const through = recordPick % (reference.log.length + 1);
          const recorded = treeOfLog(reference.log.slice(0, through));
          const recordedLeaf = through === reference.log.length ? reference.leaf : Math.max(0, through - 1);
          const activeLeaf = through === reference.log.length ? reference.leaf : reference.log.length - 1;
          await store.writeTranscript("c", {
            ...buildTranscriptFile({ id: "c", kept: [] }),
            branches: { forks: recorded.forks, through, activeLeaf: recordedLeaf },
          });
          const active = await store.readChat("c", { page: { limit } });
          const activePath = referencePath(reference, activeLeaf);
          expect(active.leaf).toBe(activeLeaf);
          expect(active.tree.forks).toEqual(treeOfLog(reference.log).forks);
          // The kept part is the end of the branch (the transcript keeps nothing: from where it was written).
          const kept = active.kept.map((message) => message.seq);
          expect(kept.length).toBeGreaterThan(0);
          expect(kept).toEqual(activePath.slice(-kept.length));
          expect(active.page.map((message) => message.seq)).toEqual(activePath.slice(-limit));
          expect(active.hasOlder).toBe(activePath.length > limit);
          const asked = branchPick % reference.log.length;
          const other = await store.readChat("c", { branch: asked, page: { limit: Infinity } });
          const otherPath = referencePath(reference, referenceNewestLeaf(reference, asked));
          expect(other.page).toEqual(otherPath.map((seq) => reference.log[seq]));
        },
      ),
      { numRuns: 60 },
    );
  });
});

const roots: string[] = [];
afterAll(async () => {
  await Promise.all(roots.map((root) => rm(root, { recursive: true, force: true })));
});

describe.each([
  ["memory", async (): Promise<ChatStore> => createMemoryChatStore()],
  [
    "file system",
    async (): Promise<ChatStore> => {
      const root = await mkdtemp(join(tmpdir(), "conch-branches-"));
      roots.push(root);
      return createFileChatStore({ root });
    },
  ],
])("a branched log and a reader that predates branches, on the %s store", (_name, createStore) => {
  it("should show today's reader every version in seq order and take its append after the highest seq, nothing lost", async () => {
    const store = await createStore();
    // 0 → 1 → 2 → 3, and an edit of 2 (at 4, parent 1) answered at 5; the active branch is 0, 1, 4, 5.
    const reference = play([{ kind: "send" }, { kind: "send" }, { kind: "edit", pick: 1 }]);
    expect(reference.log.map((message) => message.parent ?? null)).toEqual([null, null, null, null, 1, null]);
    await store.appendLog("old", reference.log);
    const tree = treeOfLog(reference.log);
    await store.writeTranscript("old", {
      ...buildTranscriptFile({
        id: "old",
        kept: reference.log.filter((message) => [0, 1, 4, 5].includes(message.seq)),
      }),
      branches: { forks: tree.forks, through: 6, activeLeaf: 5 },
    });
    // Today's reader: the whole log, in seq order, every version.
    expect((await store.readLog("old")).map((message) => message.seq)).toEqual([0, 1, 2, 3, 4, 5]);
    // Today's engine appends after the highest seq (no parent) and writes the transcript back with the fields it
    // does not know as they were.
    const appended: ChatMessage[] = [
      { seq: 6, role: "user", parts: [{ type: "text", text: "old" }] },
      { seq: 7, role: "assistant", parts: [{ type: "text", text: "engine" }] },
    ];
    await store.appendLog("old", appended);
    const previous = await store.readTranscript("old");
    await store.writeTranscript("old", buildTranscriptFile({ id: "old", kept: appended, previous }));
    // Read now: the old engine's turn continues the highest seq's branch, and every other version is reachable.
    const reading = await store.readChat("old", { page: { limit: Infinity } });
    expect(reading.leaf).toBe(7);
    expect(reading.page.map((message) => message.seq)).toEqual([0, 1, 4, 5, 6, 7]);
    const other = await store.readChat("old", { branch: 2, page: { limit: Infinity } });
    expect(other.page.map((message) => message.seq)).toEqual([0, 1, 2, 3]);
    expect(await store.readLog("old")).toHaveLength(8);
  });
});
