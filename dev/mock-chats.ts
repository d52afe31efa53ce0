// `pnpm dev:mock` keeps its chats across reloads: the mock engine holds them in memory, and every message it
// stores is copied into an IndexedDB store, whose directory is the page's chat list. On the next load the mock
// engines start from those logs (a fold's summary lives in the mock engine only: the seeded demo chat's comes
// back from its script, another chat's fold is not kept). The branch a person chose is kept too, as the store keeps
// an active leaf: in the transcript's record of the tree.
import {
  type BranchCapability,
  buildTranscriptFile,
  type ChatMessage,
  createIndexedDbChatStore,
  type Engine,
  type IndexedDbChatStore,
} from "@conch/engine-client";
import type { MockChatSeed } from "@conch/engine-client/mock";
import type { ChatDirectory } from "@conch/engine-client/remote";

const seededKey = "nacre-mock:seeded";

export interface MockChats {
  /** The chats of the page: the copies' directory, read once every copy begun before is stored. */
  readonly directory: ChatDirectory;
  /** The chats to start the mock engines with, by id. */
  readonly seeds: Record<string, MockChatSeed>;
  /**
   * Copies each message `engine` stores into the page's store, and the branch the person chooses; call before the
   * page listens to it, and give the page the engine it returns (whose branch choices are kept).
   */
  watch<E extends Engine>(engine: E): E;
}

interface MockChatsOptions {
  readonly databaseName: string;
  /** The seeded demo chat, stored on the first load only (a deleted one stays deleted). */
  /** Its title is the recorded chat's own (a person may rename it). */
  readonly demo: { readonly chatId: string; readonly seed: MockChatSeed; readonly title: string };
}

// One opening per database and page: React's StrictMode runs the page's effect twice, and two openings at once
// would both store the demo chat.
const opened = new Map<string, Promise<MockChats>>();

/** The page's chats in the database named, opened once per page. */
export function openMockChats(options: MockChatsOptions): Promise<MockChats> {
  let opening = opened.get(options.databaseName);
  if (!opening) {
    opening = open(options);
    opened.set(options.databaseName, opening);
    opening.catch(() => opened.delete(options.databaseName));
  }
  return opening;
}

async function open(options: MockChatsOptions): Promise<MockChats> {
  const store: IndexedDbChatStore = createIndexedDbChatStore({ databaseName: options.databaseName });
  if (localStorage.getItem(seededKey) !== options.databaseName) {
    if ((await store.readChat(options.demo.chatId, { kept: false })).nextSeq === 0) {
      await store.appendLog(options.demo.chatId, options.demo.seed.messages);
      await store.directory.rename(options.demo.chatId, options.demo.title);
    }
    localStorage.setItem(seededKey, options.databaseName);
  }

  const seeds: Record<string, MockChatSeed> = {};
  for (let offset = 0; ; offset += 100) {
    const page = await store.directory.list({ offset, limit: 100 });
    for (const chat of page.chats) {
      const messages = await store.readLog(chat.id);
      // The branch chosen last (or, after it, the one a turn went on with).
      const { leaf } = await store.readChat(chat.id, { kept: false });
      const activeLeaf = leaf >= 0 ? { activeLeaf: leaf } : {};
      seeds[chat.id] =
        chat.id === options.demo.chatId && messages.length >= options.demo.seed.messages.length
          ? { ...options.demo.seed, messages, ...activeLeaf }
          : { messages, ...activeLeaf };
    }
    if (offset + page.chats.length >= page.total || page.chats.length === 0) break;
  }

  // Copies run one after another; the list waits for those begun before it, so a turn's chat is listed.
  let copying: Promise<void> = Promise.resolve();
  const after = (what: string, step: () => Promise<void>) => {
    copying = copying
      .then(step)
      .catch((error: unknown) => console.error(`dev:mock could not keep ${what} for the next load`, error));
  };
  const copy = (chatId: string, messages: () => Promise<readonly ChatMessage[]>) =>
    after("a message", async () => {
      const { nextSeq } = await store.readChat(chatId, { kept: false });
      const newer = (await messages()).filter((message) => message.seq >= nextSeq);
      if (newer[0]?.seq === nextSeq) await store.appendLog(chatId, newer);
    });
  /** The branch chosen, once the messages copied before are stored: the record of the tree, with its leaf. */
  const keepLeaf = (chatId: string, activeLeaf: number) =>
    after("the branch chosen", async () => {
      const { tree } = await store.readChat(chatId, { kept: false });
      if (activeLeaf >= tree.nextSeq) return;
      const branches = { forks: tree.forks, through: tree.nextSeq, activeLeaf };
      await store.writeTranscript(chatId, { ...buildTranscriptFile({ id: chatId, kept: [] }), branches });
    });

  return {
    directory: {
      list: async (page) => {
        await copying;
        return store.directory.list(page);
      },
      rename: (chatId, title) => store.directory.rename(chatId, title),
      remove: (chatId) => store.directory.remove(chatId),
    },
    seeds,
    watch(engine) {
      engine.subscribe((event) => {
        if (event.type === "turn-start") copy(event.chatId, async () => [event.message]);
        if (event.type === "turn-end") {
          copy(event.chatId, async () => (await engine.loadChat(event.chatId)).messages);
        }
      });
      const branches = engine.capabilities.branches;
      if (!branches) return engine;
      // The same engine (its methods and fields through the prototype), its branch choices kept as they are made.
      const keeping: BranchCapability = {
        async selectBranch(chatId, seq, selectOptions) {
          const chosen = await branches.selectBranch(chatId, seq, selectOptions);
          if (chosen.activeLeaf !== undefined) keepLeaf(chatId, chosen.activeLeaf);
          return chosen;
        },
      };
      return Object.create(engine, {
        capabilities: { value: { ...engine.capabilities, branches: keeping }, enumerable: true },
      }) as typeof engine;
    },
  };
}
