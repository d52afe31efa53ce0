import "./nacre.css";
import type { TurnProblem } from "@conch/engine-client";
import { chatLogFrom, createMockEngine } from "@conch/engine-client/mock";
import { act, cleanup, render } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConversationProvider } from "./conversation.js";
import { MessageListRoot } from "./message-list.js";

afterEach(cleanup);
// Test files run side by side in one page, sharing its sessionStorage: this file's chat has its own id, and
// only its own saved place is cleared.
const chatId = "send-again";
beforeEach(() => sessionStorage.removeItem(`nacre:message-list:mock:${chatId}`));

const tooLong: TurnProblem = {
  kind: "too-long",
  title: "This chat is too long for the model",
  window: 32_000,
  countedTokens: 41_200,
  estimatedTokens: 30_100,
  next: {
    type: "switch-model",
    model: { id: "mock-huge", displayName: "Mock Huge", context: 1_000_000, ready: true, local: false },
    readsTimes: 31,
  },
};

const distanceFromBottom = (node: HTMLElement) => node.scrollHeight - node.scrollTop - node.clientHeight;

// Rendering hundreds of rows on a shared, loaded machine can take a while: wait on conditions, generously.
describe("MessageList in Chromium, Send again", { timeout: 90_000 }, () => {
  describe("when the person presses Send again on a too-long card while scrolled up", () => {
    it("should bring them to the end and follow the answer, as for a sent message", async () => {
      const engine = createMockEngine({
        chats: {
          [chatId]: {
            messages: chatLogFrom(
              Array.from({ length: 200 }, (_, index) => [
                `Question ${index}: how does part ${index} work?`,
                `Answer ${index}: it reads its input, checks it, and writes one line per record.\nThen it stops.`,
              ]),
            ),
          },
        },
        turns: [{ problem: tooLong }, { reply: "A long streamed answer, line after line.\n".repeat(120) }],
      });
      const view = render(
        <div style={{ height: "400px", display: "grid" }}>
          <ConversationProvider engine={engine} chatId={chatId}>
            <MessageListRoot style={{ minHeight: 0 }} />
          </ConversationProvider>
        </div>,
      );
      const list = view.container.querySelector("[data-nacre-message-list]") as HTMLDivElement;
      // Every message is in the page: a row, or (far from the view) a span in a collapsed run.
      const messagesInPage = () => list.querySelectorAll("[data-nacre-message], [data-placeholder-seq]").length;
      await expect.poll(messagesInPage, { timeout: 30_000 }).toBe(400);
      await expect.poll(() => list.querySelector("[data-rendering]"), { timeout: 30_000 }).toBeNull();
      await act(async () => {
        await engine.sendTurn({ chatId, seq: 400, text: "the whole report, please" }).done;
      });
      const sendAgain = await expect
        .poll(() => list.querySelector("[data-nacre-turn-problem-send-again]"), { timeout: 30_000 })
        .not.toBeNull()
        .then(() => list.querySelector("[data-nacre-turn-problem-send-again]") as HTMLButtonElement);
      // The person scrolls up to read (the wheel ends following), then presses Send again.
      list.dispatchEvent(new WheelEvent("wheel", { deltaY: -100 }));
      list.scrollTop = 200;
      await new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
      await expect.poll(() => list.hasAttribute("data-pinned"), { timeout: 30_000 }).toBe(false);
      await act(async () => {
        sendAgain.click();
      });
      await expect.poll(() => list.querySelector('[data-seq="401"]'), { timeout: 30_000 }).not.toBeNull();
      expect(list.querySelector("[data-nacre-problem-row]")).toBeNull();
      await expect.poll(() => distanceFromBottom(list), { timeout: 30_000 }).toBeLessThan(60);
      expect(list).toHaveAttribute("data-pinned");
      // The person's message was answered in place, not repeated.
      expect(messagesInPage()).toBe(402);
      await expect.poll(() => list.querySelectorAll('[data-seq="400"]').length, { timeout: 30_000 }).toBe(1);
      const log = await engine.loadChat(chatId);
      expect(log.messages.filter((message) => message.role === "user")).toHaveLength(201);
    });
  });
});
