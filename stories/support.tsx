import type { SummaryState } from "@conch/engine-client";
import { chatLogFrom, createMockEngine, type MockEngineScript } from "@conch/engine-client/mock";
import { ConversationProvider, type ConversationProviderProps } from "@conch/nacre";
import type { ReactNode } from "react";
import { useState } from "react";

/** A few turns of a chat, enough for a fold to have something to fold. */
export const threeTurns = chatLogFrom([
  ["Can you explain how the invoice export works?", "It reads the month's invoices and writes one CSV row each."],
  ["Please add the customer's VAT number.", "Done: a new column after the customer's name."],
  ["What would break if we removed the old PDF export?", "Only the monthly report still links to it."],
]);

export const summary: SummaryState = {
  text: "The person is reviewing the invoice export: it writes one CSV row per invoice; a VAT number column was added.\nStill open: whether the old PDF export can go.",
  model: "mock-small",
  firstKeptSeq: 4,
  reason: "budget",
  before: { messages: 6, tokens: 2_400 },
  after: { messages: 2, tokens: 520 },
  at: Date.UTC(2026, 9, 3, 9, 30),
};

/** A fresh mock engine per mounted story, wrapped in a ConversationProvider on chat `c`. */
export function Conversation({
  script,
  children,
  ...props
}: { script: MockEngineScript; children: ReactNode } & Omit<ConversationProviderProps, "engine" | "chatId">) {
  const [engine] = useState(() => createMockEngine(script));
  return (
    <ConversationProvider engine={engine} chatId="c" {...props}>
      {children}
    </ConversationProvider>
  );
}
