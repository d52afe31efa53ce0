import type { HealthNote } from "@conch/engine-client";
import { enginesUnderTest } from "@conch/fake-provider";
import { QueryClient } from "@tanstack/react-query";
import { act, render, screen, within } from "@testing-library/react";
import { createRef } from "react";
import { afterEach, describe, expect, it } from "vitest";
import { ConversationProvider } from "./conversation.js";
import { HealthNotesItem, HealthNotesList, HealthNotesRoot, HealthNotesTitle } from "./health-notes.js";

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

const notes: HealthNote[] = [
  {
    id: "2",
    chatId: "c",
    kind: "summary-failed",
    text: "No model wrote a summary; the previous summary stays.",
    at: Date.UTC(2026, 9, 3, 12, 5),
  },
  {
    id: "1",
    chatId: "c",
    kind: "healed",
    text: "Mock Large refused the request as too long (window 8192 tokens); it was shortened and sent again.",
    at: Date.UTC(2026, 9, 3, 12, 0),
    provider: "openai",
  },
];

describe("HealthNotes", () => {
  describe("given notes", () => {
    it("should list them newest first in a section named Health, with their kind", () => {
      render(<HealthNotesRoot notes={notes} />);
      const section = screen.getByRole("region", { name: "Health" });
      const items = within(section).getAllByRole("listitem");
      expect(items.map((item) => item.getAttribute("data-kind"))).toEqual(["summary-failed", "healed"]);
      expect(items[0]).toHaveTextContent("Summary failed");
      expect(items[1]).toHaveTextContent("Quiet retry");
      expect(items[1]?.querySelector("time")).toHaveAttribute("datetime", "2026-10-03T12:00:00.000Z");
    });
  });

  describe("given none", () => {
    it("should say there is nothing to report", () => {
      render(<HealthNotesRoot notes={[]} />);
      expect(screen.getByText("Nothing to report.")).toBeInTheDocument();
    });
  });

  describe("given a note with HTML in it", () => {
    it("should show it as text", () => {
      render(<HealthNotesRoot notes={[{ ...notes[1]!, text: "<em>x</em>" }]} />);
      expect(screen.getByText("<em>x</em>")).toBeInTheDocument();
      expect(document.querySelector("em")).toBeNull();
    });
  });

  describe("composed from parts with className, ref and asChild", () => {
    it("should pass them through", () => {
      const listRef = createRef<HTMLUListElement>();
      render(
        <HealthNotesRoot notes={notes} asChild className="health">
          <aside>
            <HealthNotesTitle asChild>
              <h3>Settings → Health</h3>
            </HealthNotesTitle>
            <HealthNotesList ref={listRef} className="list">
              {notes.map((note) => (
                <HealthNotesItem key={note.id} note={note} className="note" />
              ))}
            </HealthNotesList>
          </aside>
        </HealthNotesRoot>,
      );
      const aside = screen.getByRole("complementary", { name: "Settings → Health" });
      expect(aside).toHaveClass("health");
      expect(listRef.current).toHaveClass("list");
      expect(document.querySelectorAll("li.note")).toHaveLength(2);
    });
  });
});

describe.each(enginesUnderTest)("HealthNotes in a conversation with a quiet retry on %s", (_name, makeEngine) => {
  it("should show the retry as it happens", async () => {
    const under = await makeEngine([{ reply: "ok", heal: true }]);
    closers.push(() => under.close?.() ?? Promise.resolve());
    const { engine } = under;
    render(
      <ConversationProvider engine={engine} chatId="c" queryClient={new QueryClient()}>
        <HealthNotesRoot />
      </ConversationProvider>,
    );
    await screen.findByText("Nothing to report.");
    await act(async () => {
      await engine.sendTurn({ chatId: "c", seq: 0, text: "hi" }).done;
    });
    expect(await screen.findByText("Quiet retry")).toBeInTheDocument();
    // The note says what happened, the window the refusal named included.
    expect(screen.getByText(/refused the request as too long .*window.* tokens/)).toBeInTheDocument();
  });
});
