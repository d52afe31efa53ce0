// A Next.js route handler: save as app/api/engine/[...path]/route.ts. The handler is web-standard, so each
// method is the handler itself. (Node runtime: the file store needs node:fs.)
import { createOpenAI } from "@conch/engine-client";
import { createExampleHandler } from "./engine-handler.js";

export const runtime = "nodejs";

const apiKey = process.env.OPENAI_API_KEY;
const handler = createExampleHandler({
  provider: createOpenAI({ apiKey }),
  model: process.env.ENGINE_MODEL ?? "gpt-5",
  dataDir: process.env.ENGINE_DATA_DIR ?? ".nacre-data",
  people: new Map([[process.env.ENGINE_TOKEN ?? "", "me"]].filter(([token]) => token !== "") as [string, string][]),
  ...(apiKey ? { apiKey } : {}),
});

export const GET = handler;
export const POST = handler;
export const DELETE = handler;
export const OPTIONS = handler;
