import "./nacre.css";
import { createMockEngine } from "@conch/engine-client/mock";
import { QueryClient } from "@tanstack/react-query";
import { cleanup, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ConversationProvider } from "./conversation.js";
import { Message, MessageActions, MessageCopy } from "./message.js";

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

describe("MessageActions in Chromium", () => {
  it("should be hidden until the message is hovered or focused, never mounted then, and copy plain text on request", async () => {
    const written = vi.spyOn(navigator.clipboard, "writeText").mockResolvedValue(undefined);
    const message = { seq: 3, role: "assistant" as const, parts: [{ type: "text" as const, text: "**Hi** there" }] };
    render(
      <ConversationProvider engine={createMockEngine()} chatId="actions" queryClient={new QueryClient()}>
        <ol>
          <Message message={message}>
            <div data-nacre-message-text="">
              <p>
                <strong>Hi</strong> there
              </p>
              <p>and more</p>
            </div>
            <MessageActions>
              <MessageCopy format="text">Copy text</MessageCopy>
              <MessageCopy />
            </MessageActions>
          </Message>
        </ol>
      </ConversationProvider>,
    );
    const actions = document.querySelector("[data-nacre-message-actions]") as HTMLElement;
    expect(getComputedStyle(actions).opacity).toBe("0");
    const asText = screen.getByRole("button", { name: "Copy text" });
    asText.focus();
    await expect.poll(() => getComputedStyle(actions).opacity).toBe("1");
    asText.click();
    await expect.poll(() => written.mock.calls.at(-1)?.[0]).toBe("Hi there\n\nand more");
    screen.getByRole("button", { name: "Copy" }).click();
    await expect.poll(() => written.mock.calls.at(-1)?.[0]).toBe("**Hi** there");
    await expect.poll(() => screen.queryAllByRole("button", { name: "Copied" }).length).toBe(1);
  });
});
