/**
 * Windows named in "too long" refusals, remembered per provider and model. A refusal's number is the limit
 * the provider actually applied, which can be smaller than what its model list advertises (OpenRouter's
 * routed endpoint, Anthropic 1M variants, LM Studio's loaded instance), so the smaller one wins.
 */
export interface RememberedWindows {
  /** The remembered window of a model, or `undefined` when no refusal named one. */
  get(provider: string, model: string): number | undefined;
  /**
   * Remembers a window named in a refusal; keeps the smaller of it and what was remembered before.
   * A window below {@link minimumRememberedWindow} is ignored (a misprinted number, not a window).
   * Returns the window now remembered.
   */
  remember(provider: string, model: string, window: number): number | undefined;
  /** Forgets one model's window, or everything. */
  forget(provider?: string, model?: string): void;
}

/** The smallest window worth remembering: vLLM 0.15 printed `max_model_len - max_tokens` (3) as the window. */
export const minimumRememberedWindow = 256;

/** The part of the Web Storage API the remembered windows need (`localStorage` fits). */
export interface StorageLike {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

/** The key under which a `localStorage`-backed store keeps its map. */
export const rememberedWindowsStorageKey = "conch.engine-client.remembered-windows.v1";

function keyOf(provider: string, model: string): string {
  return `${provider}\u0000${model}`;
}

function isUsableWindow(window: number): boolean {
  return Number.isSafeInteger(window) && window >= minimumRememberedWindow;
}

/**
 * A store of remembered windows. With no argument it lives in memory; given a `Storage`-like object
 * (`localStorage`) it is kept there under {@link rememberedWindowsStorageKey} and survives reloads.
 * A storage that throws or holds malformed data never breaks a turn: it is read as empty.
 */
export function createRememberedWindows(storage?: StorageLike): RememberedWindows {
  const memory = new Map<string, number>();

  function load(): Map<string, number> {
    if (!storage) return memory;
    const loaded = new Map<string, number>();
    try {
      const raw = storage.getItem(rememberedWindowsStorageKey);
      if (!raw) return loaded;
      const parsed: unknown = JSON.parse(raw);
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return loaded;
      for (const [key, value] of Object.entries(parsed)) {
        if (typeof value === "number" && isUsableWindow(value)) loaded.set(key, value);
      }
    } catch {
      // Storage disabled or malformed: behave as if nothing was remembered.
    }
    return loaded;
  }

  function save(map: Map<string, number>): void {
    if (!storage) return;
    try {
      if (map.size === 0) storage.removeItem(rememberedWindowsStorageKey);
      else storage.setItem(rememberedWindowsStorageKey, JSON.stringify(Object.fromEntries(map)));
    } catch {
      // Quota or privacy mode: remembering is a help, never a gate.
    }
  }

  return {
    get(provider, model) {
      return load().get(keyOf(provider, model));
    },
    remember(provider, model, window) {
      const map = load();
      const key = keyOf(provider, model);
      const before = map.get(key);
      if (!isUsableWindow(window)) return before;
      if (before !== undefined && before <= window) return before;
      map.set(key, window);
      save(map);
      return window;
    },
    forget(provider, model) {
      const map = load();
      if (provider === undefined) map.clear();
      else if (model === undefined) {
        for (const key of [...map.keys()]) if (key.startsWith(`${provider}\u0000`)) map.delete(key);
      } else map.delete(keyOf(provider, model));
      save(map);
    },
  };
}

/** The smaller of a listed window and a remembered one, either of which may be unknown. */
export function smallerWindow(listed: number | undefined, remembered: number | undefined): number | undefined {
  if (listed === undefined) return remembered;
  if (remembered === undefined) return listed;
  return Math.min(listed, remembered);
}

/**
 * Whether a window named in a refusal is doubtful: smaller than a request this model already served
 * (`largestServed`, prompt tokens of a success). A real small window (512 tokens is llama-cpp-python's
 * default) is never doubtful on its own; only a success above it makes it so.
 */
export function isDoubtfulWindow(window: number, largestServed: number | undefined): boolean {
  return largestServed !== undefined && Number.isFinite(largestServed) && window < largestServed;
}

/**
 * The remembered window after a success: a request that fit with `servedTokens` (prompt and answer) shows
 * the window is at least that, so a remembered window below it is raised to it. Never lowers a window.
 */
export function windowAfterSuccess(remembered: number | undefined, servedTokens: number): number | undefined {
  if (remembered === undefined || !Number.isFinite(servedTokens) || servedTokens <= remembered) return remembered;
  return Math.ceil(servedTokens);
}
