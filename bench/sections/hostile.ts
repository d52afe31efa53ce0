import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { type ChatStore, createApiEngine, createMemoryChatStore, createProvider } from "@conch/engine-client";
import { createEngineHandler, type EngineHandler } from "@conch/engine-client/server";
import type { BenchSection } from "../section.js";
import { grouped, median, round } from "../stats.js";

const base = "http://127.0.0.1/api";

/** The handler as `pnpm serve` builds it (an engine per request over the person's store), with no provider behind it. */
function makeHandler(): EngineHandler {
  const provider = createProvider("openai", { baseURL: "http://127.0.0.1:9/v1", apiKey: "sk-bench", local: false });
  const stores = new Map<string, ChatStore>();
  const storeOf = (userId: string) => {
    let store = stores.get(userId);
    if (!store) {
      store = createMemoryChatStore();
      stores.set(userId, store);
    }
    return store;
  };
  return createEngineHandler({
    basePath: "/api",
    engineFor: (userId) =>
      createApiEngine({
        provider,
        model: "chat",
        store: storeOf(userId),
        models: [{ id: "chat", displayName: "Chat", ready: true, local: false, provider: "openai", context: 64_000 }],
      }),
    authorize: () => ({ userId: "mallory" }),
    onError: () => undefined,
  });
}

/** One request of the four that name a chat without writing to it. */
async function nameChat(handler: EngineHandler, chatId: string, endpoint: number): Promise<void> {
  const path = `${base}/chats/${chatId}`;
  let response: Response;
  switch (endpoint % 4) {
    case 0:
      response = await handler(new Request(`${path}/abort`, { method: "POST" }));
      break;
    case 1:
      response = await handler(new Request(`${path}/compact`, { method: "POST" }));
      break;
    case 2:
      response = await handler(new Request(`${path}/usage`));
      break;
    default: {
      const controller = new AbortController();
      response = await handler(new Request(`${path}/events`, { signal: controller.signal }));
      // The client goes away at once, as a probe's would.
      controller.abort();
      await response.body?.cancel();
      return;
    }
  }
  if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  await response.arrayBuffer();
}

/** The same four endpoints on one chat id, timed: the latency every person's request pays. */
async function probeLatency(handler: EngineHandler, requests: number): Promise<number> {
  const times: number[] = [];
  for (let index = 0; index < requests; index++) {
    const started = performance.now();
    await nameChat(handler, "probe", index);
    times.push(performance.now() - started);
  }
  return median(times);
}

function collectGarbage(): () => void {
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
}

async function heapMb(gc: () => void): Promise<number> {
  // Streams cancelled above finish on later ticks; then two collections settle what is left.
  await new Promise((resolve) => setTimeout(resolve, 50));
  gc();
  gc();
  return process.memoryUsage().heapUsed / 2 ** 20;
}

/**
 * Issue #28's ghost chats: a person names 40,000 chat ids nobody ever wrote (abort, `/compact`, usage, events,
 * 10,000 each) on one handler. The per-request latency of those endpoints on one chat and the heap, before and
 * after, say whether the server keeps anything for them: flat means within 1.5×.
 */
export const hostileSection: BenchSection = {
  id: "hostile",
  title: "Hostile probes: never-used chat ids",
  async run({ args, log }) {
    const gc = collectGarbage();
    const ids = args.quick ? 4_000 : 40_000;
    const probes = args.quick ? 400 : 2_000;
    const handler = makeHandler();
    await probeLatency(handler, probes); // warm-up
    const heapBefore = await heapMb(gc);
    const latencyBefore = await probeLatency(handler, probes);
    log(`hostile: naming ${grouped(ids)} never-used chat ids`);
    const naming: number[] = [];
    for (let index = 0; index < ids; index++) {
      const started = performance.now();
      await nameChat(handler, `ghost-${index}`, index);
      naming.push(performance.now() - started);
    }
    const heapAfter = await heapMb(gc);
    const latencyAfter = await probeLatency(handler, probes);
    const firstThousand = median(naming.slice(0, 1000));
    const lastThousand = median(naming.slice(-1000));
    const json = {
      ids,
      probes,
      latencyMsBefore: round(latencyBefore, 4),
      latencyMsAfter: round(latencyAfter, 4),
      latencyRatio: round(latencyAfter / latencyBefore, 2),
      namingMsFirst1000: round(firstThousand, 4),
      namingMsLast1000: round(lastThousand, 4),
      heapMbBefore: round(heapBefore, 2),
      heapMbAfter: round(heapAfter, 2),
      heapBytesPerId: Math.round(((heapAfter - heapBefore) * 2 ** 20) / ids),
    };
    return {
      json: { hostile: json },
      tables: [
        {
          title: `${grouped(ids)} never-used chat ids named (abort, /compact, usage, events), in-process handler`,
          header: ["", "before", "after", "after / before"],
          rows: [
            [
              "median request on one chat (ms)",
              round(latencyBefore, 3).toString(),
              round(latencyAfter, 3).toString(),
              round(latencyAfter / latencyBefore, 2).toString(),
            ],
            [
              "median naming request, first and last 1,000 (ms)",
              round(firstThousand, 3).toString(),
              round(lastThousand, 3).toString(),
              round(lastThousand / firstThousand, 2).toString(),
            ],
            [
              "heap used after GC (MB)",
              round(heapBefore, 1).toString(),
              round(heapAfter, 1).toString(),
              round(heapAfter / heapBefore, 2).toString(),
            ],
          ],
          notes: [`${json.heapBytesPerId} bytes of heap a named id; flat is within 1.5× on every row.`],
        },
      ],
    };
  },
};
