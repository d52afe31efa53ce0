import { describe, expect, it } from "vitest";
import {
  createRememberedWindows,
  minimumRememberedWindow,
  rememberedWindowsStorageKey,
  type StorageLike,
  smallerWindow,
} from "./remembered-windows.js";

function memoryStorage(): StorageLike & { readonly items: Map<string, string> } {
  const items = new Map<string, string>();
  return {
    items,
    getItem: (key) => items.get(key) ?? null,
    setItem: (key, value) => void items.set(key, value),
    removeItem: (key) => void items.delete(key),
  };
}

describe("createRememberedWindows", () => {
  describe("given the in-memory default", () => {
    it("should remember a window per provider and model, and keep the smaller one", () => {
      const windows = createRememberedWindows();
      expect(windows.get("openrouter", "qwen")).toBeUndefined();
      expect(windows.remember("openrouter", "qwen", 262000)).toBe(262000);
      expect(windows.remember("openrouter", "qwen", 1048576)).toBe(262000);
      expect(windows.remember("openrouter", "qwen", 131072)).toBe(131072);
      expect(windows.get("openrouter", "qwen")).toBe(131072);
      expect(windows.get("openrouter", "other")).toBeUndefined();
      expect(windows.get("together", "qwen")).toBeUndefined();
    });

    it("should ignore a misprinted window below the minimum (vLLM 0.15 printed 3)", () => {
      const windows = createRememberedWindows();
      expect(windows.remember("vllm", "m", 3)).toBeUndefined();
      expect(windows.get("vllm", "m")).toBeUndefined();
      expect(windows.remember("vllm", "m", minimumRememberedWindow)).toBe(minimumRememberedWindow);
    });

    it("should forget one model, one provider, or everything", () => {
      const windows = createRememberedWindows();
      windows.remember("a", "1", 1000);
      windows.remember("a", "2", 1000);
      windows.remember("b", "1", 1000);
      windows.forget("a", "1");
      expect(windows.get("a", "1")).toBeUndefined();
      expect(windows.get("a", "2")).toBe(1000);
      windows.forget("a");
      expect(windows.get("a", "2")).toBeUndefined();
      expect(windows.get("b", "1")).toBe(1000);
      windows.forget();
      expect(windows.get("b", "1")).toBeUndefined();
    });
  });

  describe("given a localStorage-like storage", () => {
    it("should keep windows across stores on the same storage", () => {
      const storage = memoryStorage();
      createRememberedWindows(storage).remember("lmstudio", "gemma", 4096);
      expect(createRememberedWindows(storage).get("lmstudio", "gemma")).toBe(4096);
      expect(storage.items.has(rememberedWindowsStorageKey)).toBe(true);
    });

    it("should read malformed data as empty", () => {
      const storage = memoryStorage();
      storage.setItem(rememberedWindowsStorageKey, "{not json");
      const windows = createRememberedWindows(storage);
      expect(windows.get("x", "y")).toBeUndefined();
      expect(windows.remember("x", "y", 8192)).toBe(8192);
      expect(createRememberedWindows(storage).get("x", "y")).toBe(8192);
    });

    it("should never throw when the storage does", () => {
      const broken: StorageLike = {
        getItem: () => {
          throw new Error("SecurityError");
        },
        setItem: () => {
          throw new Error("QuotaExceededError");
        },
        removeItem: () => {
          throw new Error("SecurityError");
        },
      };
      const windows = createRememberedWindows(broken);
      expect(() => windows.remember("x", "y", 8192)).not.toThrow();
      expect(windows.get("x", "y")).toBeUndefined();
      expect(() => windows.forget()).not.toThrow();
    });
  });
});

describe("smallerWindow", () => {
  it("should take the smaller of two known windows, or whichever is known", () => {
    expect(smallerWindow(1048576, 1048575)).toBe(1048575);
    expect(smallerWindow(undefined, 8192)).toBe(8192);
    expect(smallerWindow(8192, undefined)).toBe(8192);
    expect(smallerWindow(undefined, undefined)).toBeUndefined();
  });
});
