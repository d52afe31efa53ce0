// #34's "branch alone" check, shared by the examples' versions tests: what a linear chat of a branch is sent,
// replayed on a fresh API engine over the same fake provider, from the provider's own record of requests.
import { createApiEngine, createMemoryChatStore, createProvider } from "@conch/engine-client";
import { expect } from "vitest";
import { type DemoFakeProvider, firstChatModel, summariserModel } from "../dev/api/fake-provider.js";

/** The chat model's requests (not the summariser's), as the fake provider received them. */
export function chatModelBodies(fake: DemoFakeProvider): unknown[] {
  return fake.server
    .chatRequests()
    .filter((request) => request.model === firstChatModel)
    .map((request) => request.body);
}

/**
 * The chat model's requests for a linear chat of the person's `texts`, one turn each, on a fresh engine over
 * the same fake provider, folding in the turn that needs it (as the examples' versions tests run theirs).
 */
export async function linearChatRequests(fake: DemoFakeProvider, texts: readonly string[]): Promise<unknown[]> {
  const engine = createApiEngine({
    provider: createProvider("openrouter", {
      baseURL: fake.server.baseURL,
      local: false,
      cheapestModel: summariserModel,
    }),
    model: firstChatModel,
    store: createMemoryChatStore(),
    foldAhead: false,
  });
  const from = chatModelBodies(fake).length;
  for (const [index, text] of texts.entries()) {
    const end = await engine.sendTurn({ chatId: "linear", seq: index * 2, text }).done;
    expect(end.status).toBe("done");
  }
  return chatModelBodies(fake).slice(from);
}
