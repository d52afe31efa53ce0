import { createMockEngine } from "@conch/engine-client/mock";
import { QueryClient } from "@tanstack/react-query";
import { render, screen } from "@testing-library/react";
import { createRef } from "react";
import { describe, expect, it } from "vitest";
import { ContextMeterIndicator, ContextMeterLabel, ContextMeterRoot } from "./context-meter.js";
import { ConversationProvider } from "./conversation.js";

function usage(share: number) {
  return { usedTokens: Math.round(32_000 * share), window: 32_000, budget: 22_700, factor: 1, share };
}

describe("ContextMeter", () => {
  describe.each([
    [0.1, "low", 10],
    [0.6, "medium", 60],
    [0.8, "high", 80],
    [0.95, "full", 95],
  ] as const)("given a share of %s", (share, level, percent) => {
    it(`should be a meter at ${percent} with level ${level} and a text alternative`, () => {
      render(<ContextMeterRoot usage={usage(share)} model="Mock Large" />);
      const meter = screen.getByRole("meter", { name: "Context used" });
      expect(meter).toHaveAttribute("aria-valuenow", String(percent));
      expect(meter).toHaveAttribute("data-level", level);
      expect(meter).toHaveAttribute("aria-valuetext", expect.stringContaining(`${percent}% of Mock Large's window`));
      expect(meter.style.getPropertyValue("--nacre-context-share")).toBe(String(share));
      expect(screen.getByText(new RegExp(`${percent}% of Mock Large's window`))).toBeInTheDocument();
    });
  });

  describe("given no usage", () => {
    it("should render nothing", () => {
      const { container } = render(<ContextMeterRoot usage={null} />);
      expect(container).toBeEmptyDOMElement();
    });
  });

  describe("composed from parts with className, ref and asChild", () => {
    it("should pass them through and keep the bar hidden from assistive technology", () => {
      const ref = createRef<HTMLDivElement>();
      render(
        <ContextMeterRoot usage={usage(0.5)} className="meter" ref={ref}>
          <ContextMeterIndicator className="bar" />
          <ContextMeterLabel asChild>
            <small>half</small>
          </ContextMeterLabel>
        </ContextMeterRoot>,
      );
      expect(ref.current).toHaveClass("meter");
      expect(document.querySelector(".bar")).toHaveAttribute("aria-hidden", "true");
      expect(screen.getByText("half").tagName).toBe("SMALL");
    });
  });

  describe("in a conversation", () => {
    it("should read the engine's estimate", async () => {
      const engine = createMockEngine();
      render(
        <ConversationProvider engine={engine} chatId="c" queryClient={new QueryClient()}>
          <ContextMeterRoot />
        </ConversationProvider>,
      );
      const meter = await screen.findByRole("meter");
      // An empty chat still sends the system prompt (500 of 32,000 tokens).
      expect(meter).toHaveAttribute("aria-valuetext", "2% of Mock Large's window (500 of 32,000 tokens)");
    });
  });
});
