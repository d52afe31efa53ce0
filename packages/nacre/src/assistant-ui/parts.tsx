"use client";
import { useAuiState } from "@assistant-ui/react";
import { useConversation } from "../conversation.js";
import { SummaryDividerRoot, type SummaryDividerRootProps } from "../summary-divider.js";
import { TurnProblemRoot, type TurnProblemRootProps } from "../turn-problem.js";

/** The log seq of the assistant-ui message this is rendered in (from `useNacreRuntime`), else null. */
export function useNacreMessageSeq(): number | null {
  return useAuiState((state) => {
    const seq = state.message.metadata.custom?.nacreSeq;
    return typeof seq === "number" ? seq : null;
  });
}

/**
 * Nacre's summary divider, for a message component of assistant-ui's thread: it renders only in the message
 * where the model's word-for-word memory starts (put it first in the message). Props as `SummaryDivider.Root`;
 * a prop passed wins over the conversation's own.
 */
export function NacreSummaryDivider(props: SummaryDividerRootProps) {
  const seq = useNacreMessageSeq();
  const { firstKeptSeq } = useConversation();
  if (seq === null || seq !== firstKeptSeq) return null;
  return <SummaryDividerRoot {...props} />;
}
NacreSummaryDivider.displayName = "NacreSummaryDivider";

/**
 * Nacre's problem card (the too-long card and the others), for the person's message component of
 * assistant-ui's thread: it renders only under the message the problem belongs to, with its one next step.
 * Props as `TurnProblem.Root`; a prop passed wins over the conversation's own.
 */
export function NacreTurnProblem(props: TurnProblemRootProps) {
  const seq = useNacreMessageSeq();
  const { problem } = useConversation();
  if (seq === null || !problem || problem.seq !== seq) return null;
  return <TurnProblemRoot {...props} />;
}
NacreTurnProblem.displayName = "NacreTurnProblem";
