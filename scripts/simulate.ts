// `pnpm simulate`: replays a real conversation through the API engine against the fake provider server.
// Progress goes to stderr; one JSON object goes to stdout.
import { parseArgs } from "node:util";
import { isProviderId } from "@conch/engine-client/providers";
import { simulateConversation } from "@conch/fake-provider";

const usage =
  "usage: pnpm simulate --conversation FILE [--id ID] [--turns N] --window N [--provider NAME] [--refuse-once]";

const { values } = parseArgs({
  options: {
    conversation: { type: "string" },
    id: { type: "string" },
    turns: { type: "string" },
    window: { type: "string" },
    provider: { type: "string" },
    "refuse-once": { type: "boolean", default: false },
    help: { type: "boolean", default: false },
  },
});

if (values.help || !values.conversation || !values.window) {
  console.error(usage);
  process.exit(values.help ? 0 : 2);
}
const window = Number(values.window);
if (!Number.isInteger(window) || window < 1_000) {
  console.error(`--window must be a whole number of tokens, at least 1000 (got ${values.window})`);
  process.exit(2);
}
const provider = values.provider ?? "openai";
if (!isProviderId(provider)) {
  console.error(`--provider must be one of the fourteen provider ids (got ${provider})`);
  process.exit(2);
}
const turns = values.turns === undefined ? undefined : Number(values.turns);

const result = await simulateConversation({
  conversation: values.conversation,
  ...(values.id ? { id: values.id } : {}),
  ...(turns !== undefined ? { turns } : {}),
  window,
  provider,
  refuseOnce: values["refuse-once"],
  progress: (line) => console.error(line),
});
process.stdout.write(`${JSON.stringify(result)}\n`);
