import "./nacre.css";
import { chatLogFrom, createMockEngine } from "@conch/engine-client/mock";
import { cleanup, render } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { ConversationProvider } from "./conversation.js";
import { MessageListRoot } from "./message-list.js";

afterEach(cleanup);

function longLog(turns: number) {
  return chatLogFrom(
    Array.from({ length: turns }, (_, index) => [
      `Question ${index}: how does part ${index} work?`,
      `Answer ${index}: it reads its input, checks it, and writes one line per record.\nThen it stops.`,
    ]),
  );
}

function mount(engine: ReturnType<typeof createMockEngine>) {
  const view = render(
    <div style={{ height: "400px", display: "grid" }}>
      <ConversationProvider engine={engine} chatId="c">
        <MessageListRoot style={{ minHeight: 0 }} />
      </ConversationProvider>
    </div>,
  );
  return view.container.querySelector("[data-nacre-message-list]") as HTMLDivElement;
}

const distanceFromBottom = (node: HTMLElement) => node.scrollHeight - node.scrollTop - node.clientHeight;

// Rendering 2,000 rows on a shared, loaded machine can take a while: wait on conditions, generously.
describe("MessageList in Chromium", { timeout: 90_000 }, () => {
  describe("given a 2,000-message chat", () => {
    it("should show its end first, then have every message in the page", async () => {
      const engine = createMockEngine({ chats: { c: { messages: longLog(1000) } } });
      const list = mount(engine);
      await expect.poll(() => list.querySelector('[data-seq="1999"]'), { timeout: 30_000 }).not.toBeNull();
      expect(distanceFromBottom(list)).toBeLessThan(60);
      await expect.poll(() => list.querySelectorAll("[data-nacre-message]").length, { timeout: 30_000 }).toBe(2000);
      expect(list.querySelector("[data-rendering]")).toBeNull();
      // Older rows arrived above without moving the view off the end.
      await expect.poll(() => distanceFromBottom(list), { timeout: 30_000 }).toBeLessThan(60);
    });
  });

  describe("when a reply streams while the person is at the bottom", () => {
    it("should follow the new text", async () => {
      const engine = createMockEngine({
        chats: { c: { messages: longLog(30) } },
        turns: { reply: "A long streamed answer. ".repeat(80) },
        chunkSize: 24,
      });
      const list = mount(engine);
      await expect.poll(() => list.querySelectorAll("[data-nacre-message]").length, { timeout: 30_000 }).toBe(60);
      await engine.sendTurn({ chatId: "c", seq: 60, text: "go on" }).done;
      await expect.poll(() => list.querySelector('[data-seq="61"]'), { timeout: 30_000 }).not.toBeNull();
      await expect.poll(() => distanceFromBottom(list), { timeout: 30_000 }).toBeLessThan(60);
    });
  });

  describe("when the person scrolled up to read", () => {
    it("should stay where they are while a reply streams", async () => {
      const engine = createMockEngine({
        chats: { c: { messages: longLog(30) } },
        turns: { reply: "A long streamed answer. ".repeat(80) },
        chunkSize: 24,
      });
      const list = mount(engine);
      await expect.poll(() => list.querySelectorAll("[data-nacre-message]").length, { timeout: 30_000 }).toBe(60);
      list.scrollTop = 100;
      list.dispatchEvent(new Event("scroll"));
      await expect.poll(() => list.hasAttribute("data-pinned"), { timeout: 30_000 }).toBe(false);
      await engine.sendTurn({ chatId: "c", seq: 60, text: "go on" }).done;
      await expect.poll(() => list.querySelector('[data-seq="61"]'), { timeout: 30_000 }).not.toBeNull();
      expect(list.scrollTop).toBe(100);
    });
  });
});
