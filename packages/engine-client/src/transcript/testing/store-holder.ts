// A child of the lock test: opens the real file store on a folder, appends one message at the log's end, says "ready" and then
// either stays until it is killed (`stay`) or ends normally (`exit`). Run with `node --import tsx store-holder.ts <root> <stay|exit>`.
import { createFileChatStore } from "../file-store.node.js";

const [root, mode] = process.argv.slice(2);
if (root === undefined || (mode !== "stay" && mode !== "exit"))
  throw new Error("usage: store-holder.ts <root> <stay|exit>");
const store = createFileChatStore({ root });
try {
  const seq = (await store.readLog("held")).length;
  await store.appendLog("held", [{ seq, role: "user", parts: [{ type: "text", text: `from ${process.pid}` }] }]);
  process.stdout.write("ready\n");
} catch (error) {
  process.stdout.write(`refused ${(error as Error).name}\n`);
  process.exit(3);
}
if (mode === "stay") setInterval(() => undefined, 60_000);
