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

/** A loaded machine can take seconds to render: wait on conditions, generously. */
const patient = { timeout: 30_000 };

describe("MessageActions in Chromium", { timeout: 90_000 }, () => {
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
    // The fade in is a 120 ms transition that runs on animation frames, which a loaded machine can hold back for
    // seconds: its end is what the rule shows, so finish it and read that (with no focus, no transition: "0").
    await expect
      .poll(() => {
        for (const animation of actions.getAnimations()) animation.finish();
        return getComputedStyle(actions).opacity;
      }, patient)
      .toBe("1");
    asText.click();
    await expect.poll(() => written.mock.calls.at(-1)?.[0], patient).toBe("Hi there\n\nand more");
    screen.getByRole("button", { name: "Copy" }).click();
    await expect.poll(() => written.mock.calls.at(-1)?.[0], patient).toBe("**Hi** there");
    await expect.poll(() => screen.queryAllByRole("button", { name: "Copied" }).length, patient).toBe(1);
  });

  it("should copy the text it is given, outside a Nacre message (an AI SDK message's)", async () => {
    const written = vi.spyOn(navigator.clipboard, "writeText").mockResolvedValue(undefined);
    render(<MessageCopy text={"**Hi** there\n\nand more"} />);
    screen.getByRole("button", { name: "Copy" }).click();
    await expect.poll(() => written.mock.calls.at(-1)?.[0], patient).toBe("**Hi** there\n\nand more");
    await expect.poll(() => screen.queryAllByRole("button", { name: "Copied" }).length, patient).toBe(1);
  });
});
