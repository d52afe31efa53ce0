import { afterEach, describe, expect, it } from "vitest";
import { ChatBusyError, TurnSequenceError } from "../errors.js";
import { createBranchingEngine } from "../server/testing/branching-engine.js";
import { servedAuth as auth, serveEngine } from "../server/testing/serve-engine.js";
import { createRemoteEngine } from "./remote-engine.js";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function serve(engine: Parameters<typeof serveEngine>[0]): Promise<string> {
  const served = await serveEngine(engine);
  closers.push(served.close);
  return served.baseURL;
}

describe("the remote engine's branches", () => {
  describe("given the remote engine on a server whose engine has branches", () => {
    it("should declare branches and edit, regenerate and select over the wire", async () => {
      const base = await serve(createBranchingEngine());
      const remote = await createRemoteEngine({ baseURL: base, headers: auth });
      const branches = remote.capabilities.branches;
      expect(branches).toBeDefined();
      const send = async (input: Omit<Parameters<typeof remote.sendTurn>[0], "chatId">) => {
        const end = await remote.sendTurn({ chatId: "c", ...input }).done;
        expect(end.status).toBe("done");
      };
      await send({ seq: 0, text: "one" });
      await send({ seq: 2, text: "two" });
      await send({ seq: 4, parent: 1, text: "two, edited" });
      await send({ seq: 4, text: "", retry: true });
      const loaded = await remote.loadChat("c");
      expect(loaded.messages.map((message) => message.seq)).toEqual([0, 1, 4, 6]);
      expect(loaded.messages.at(-1)?.siblings).toEqual([5, 6]);

      const first = await branches?.selectBranch("c", 2);
      expect(first?.messages.map((message) => [message.seq, message.siblings])).toEqual([
        [0, undefined],
        [1, undefined],
        [2, [2, 4]],
        [3, undefined],
      ]);
      expect(first).toMatchObject({ nextSeq: 7, activeLeaf: 3 });
      const paged = await branches?.selectBranch("c", 5, { page: { limit: 2 } });
      expect(paged?.messages.map((message) => message.seq)).toEqual([4, 5]);
      expect(paged?.hasOlder).toBe(true);

      const unknown = await branches?.selectBranch("c", 70).catch((error: unknown) => error);
      expect(TurnSequenceError.isInstance(unknown)).toBe(true);
      expect(unknown).toMatchObject({ expectedSeq: 7, actualSeq: 70 });
    });

    it("should refuse a switch while its own turn of the chat runs (ChatBusyError)", async () => {
      let answer: () => void = () => undefined;
      const held = new Promise<void>((resolve) => {
        answer = resolve;
      });
      const base = await serve(createBranchingEngine({ beforeAnswer: () => held }));
      const remote = await createRemoteEngine({ baseURL: base, headers: auth });
      const running = remote.sendTurn({ chatId: "c", seq: 0, text: "one" });
      const refused = await remote.capabilities.branches?.selectBranch("c", 0).catch((error: unknown) => error);
      expect(ChatBusyError.isInstance(refused)).toBe(true);
      answer();
      expect((await running.done).status).toBe("done");
    });
  });
});
