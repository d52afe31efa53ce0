import type { ChatSnapshot, ContextUsage, Engine } from "@conch/engine-client";
import { queryOptions } from "@tanstack/react-query";

/** The query key of a chat's snapshot. Engine ids must be unique within one QueryClient. */
export function conversationQueryKey(engine: Pick<Engine, "id">, chatId: string) {
  return ["nacre", "conversation", engine.id, chatId] as const;
}

/** The query key of a chat's context usage (under the chat's key, so invalidating the chat refreshes it). */
export function contextUsageQueryKey(engine: Pick<Engine, "id">, chatId: string) {
  return ["nacre", "conversation", engine.id, chatId, "context-usage"] as const;
}

/**
 * Query options for a chat's snapshot, for apps that keep their own QueryClient (prefetching, SSR, devtools).
 * Engine events keep the cached snapshot current, so it never goes stale by time.
 */
export function conversationQueryOptions(engine: Engine, chatId: string) {
  return queryOptions({
    queryKey: conversationQueryKey(engine, chatId),
    queryFn: ({ signal }): Promise<ChatSnapshot> => engine.loadChat(chatId, { abortSignal: signal }),
    staleTime: Number.POSITIVE_INFINITY,
  });
}

/**
 * Query options for how much of the window the next request will use: the engine's own count when it
 * declares `context`, else what the snapshot says (null when the engine cannot tell).
 */
export function contextUsageQueryOptions(engine: Engine, chatId: string) {
  return queryOptions({
    queryKey: contextUsageQueryKey(engine, chatId),
    queryFn: async ({ signal }): Promise<ContextUsage | null> => {
      const context = engine.capabilities.context;
      if (context) return context.usage(chatId);
      return (await engine.loadChat(chatId, { abortSignal: signal })).contextUsage;
    },
    staleTime: Number.POSITIVE_INFINITY,
  });
}
