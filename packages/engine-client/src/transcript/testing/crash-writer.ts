// The child of the crash test: replaces one transcript over and over with the real file store, alternating two
// big contents, until it is killed. Run with `node --import tsx crash-writer.ts <root>`.
import { createFileChatStore } from "../file-store.node.js";
import { bigTranscript } from "./fixtures.js";

const root = process.argv[2];
if (root === undefined) throw new Error("usage: crash-writer.ts <root>");
const store = createFileChatStore({ root });
const contents = [bigTranscript("crash", "new", 5), bigTranscript("crash", "old", 3)];
for (let round = 0; ; round++) {
  await store.writeTranscript("crash", contents[round % 2]!);
}
