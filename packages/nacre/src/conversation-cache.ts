import {
  type ChatSnapshot,
  type ContextUsage,
  type ConversationCache,
  ConversationStore,
  type Engine,
} from "@conch/engine-client";
import type { QueryClient } from "@tanstack/react-query";
import { contextUsageQueryKey, conversationQueryKey, conversationQueryOptions } from "./query.js";

/** A chat's snapshot and context usage in a TanStack QueryClient, under Nacre's query keys. */
export function queryConversationCache(queryClient: QueryClient, engine: Engine, chatId: string): ConversationCache {
  const key = conversationQueryKey(engine, chatId);
  const usageKey = contextUsageQueryKey(engine, chatId);
  let readAgainPending = false;
  const invalidate = () => void queryClient.invalidateQueries({ queryKey: key, refetchType: "all" });
  return {
    peek: () => queryClient.getQueryData<ChatSnapshot>(key),
    ensure: () => queryClient.ensureQueryData(conversationQueryOptions(engine, chatId)),
    refetch: () => queryClient.fetchQuery({ ...conversationQueryOptions(engine, chatId), staleTime: 0 }),
    put: (snapshot) => {
      queryClient.setQueryData(key, snapshot);
    },
    /**
     * Invalidating while a load is under way would not do: TanStack Query joins that load instead of starting
     * another, and its result clears the invalidation. So wait for it (once, however many events came).
     */
    readAgain() {
      const loading = queryClient.getQueryState(key)?.fetchStatus;
      if (loading === undefined || loading === "idle") {
        invalidate();
        return;
      }
      if (readAgainPending) return;
      readAgainPending = true;
      void queryClient
        .fetchQuery(conversationQueryOptions(engine, chatId))
        .catch(() => undefined)
        .then(() => {
          readAgainPending = false;
          // A load that failed or was cancelled left nothing stale behind: the next one reads afresh.
          if (queryClient.getQueryData(key)) invalidate();
        });
    },
    putUsage: (usage: ContextUsage) => {
      queryClient.setQueryData(usageKey, usage);
    },
    invalidateUsage: () => void queryClient.invalidateQueries({ queryKey: usageKey }),
  };
}

const stores = new WeakMap<QueryClient, WeakMap<Engine, Map<string, ConversationStore>>>();

/** The one store of a chat on an engine within a QueryClient. */
export function conversationStore(queryClient: QueryClient, engine: Engine, chatId: string): ConversationStore {
  let byEngine = stores.get(queryClient);
  if (!byEngine) {
    byEngine = new WeakMap();
    stores.set(queryClient, byEngine);
  }
  let byChat = byEngine.get(engine);
  if (!byChat) {
    byChat = new Map();
    byEngine.set(engine, byChat);
  }
  let store = byChat.get(chatId);
  if (!store) {
    store = new ConversationStore(engine, chatId, queryConversationCache(queryClient, engine, chatId));
    byChat.set(chatId, store);
  }
  return store;
}
