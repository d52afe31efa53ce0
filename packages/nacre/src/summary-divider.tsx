"use client";
import type { SummaryState } from "@conch/engine-client";
import * as Collapsible from "@radix-ui/react-collapsible";
import { createContext, forwardRef, useContext } from "react";
import { useConversation, useInConversation, useNacreMessages } from "./conversation.js";
import { NacreOutsideProviderError } from "./errors.js";
import { preferPassed } from "./internal/conversation-defaults.js";
import { PlainText } from "./internal/plain-text.js";

/** What the divider shows, worked out once by the root. */
interface DividerData {
  readonly summary: SummaryState | null;
  readonly model: string;
  readonly summarising: boolean;
  readonly foldedMessages: number;
  readonly foldedTokens: number;
}

const DividerContext = createContext<DividerData | null>(null);

function useDivider(part: string): DividerData {
  const data = useContext(DividerContext);
  if (!data) throw new NacreOutsideProviderError(`<SummaryDivider.${part}>`, "<SummaryDivider.Root>");
  return data;
}

export interface SummaryDividerRootProps extends Omit<Collapsible.CollapsibleProps, "disabled"> {
  /** The latest summary. Default: the conversation's. Nothing renders without a summary unless `summarising`. */
  summary?: SummaryState | null;
  /** The name of the model that reads the summary. Default: the conversation's model. */
  model?: string;
  /** Whether a fold runs now. Default: the conversation's state. */
  summarising?: boolean;
  /** How many messages the summary stands for. Default: counted from the conversation's log, else from the fold. */
  foldedMessages?: number;
}

type RootElement = HTMLDivElement;

const RootImpl = forwardRef<RootElement, SummaryDividerRootProps>(function SummaryDividerRootImpl(
  { summary = null, model = "the model", summarising = false, foldedMessages, children, ...props },
  ref,
) {
  if (!summary && !summarising) return null;
  const folded = foldedMessages ?? (summary ? Math.max(0, summary.before.messages - summary.after.messages) : 0);
  const data: DividerData = {
    summary,
    model,
    summarising,
    foldedMessages: folded,
    // Every fold so far when the engine counts it; else what the latest fold took away.
    foldedTokens: summary ? (summary.folded?.tokens ?? Math.max(0, summary.before.tokens - summary.after.tokens)) : 0,
  };
  return (
    <DividerContext.Provider value={data}>
      <Collapsible.Root
        data-nacre-summary-divider=""
        data-status={summarising ? "summarising" : "summarised"}
        {...(summary && !summary.text ? { "data-empty": "" } : {})}
        {...props}
        disabled={!summary}
        ref={ref}
      >
        {children ?? (
          <>
            <SummaryDividerTrigger />
            <SummaryDividerContent />
          </>
        )}
      </Collapsible.Root>
    </DividerContext.Provider>
  );
});

const ConnectedRoot = forwardRef<RootElement, SummaryDividerRootProps>(
  function SummaryDividerConnectedRoot(props, ref) {
    const conversation = useConversation();
    const own = {
      summary: conversation.summary,
      model: conversation.model?.displayName ?? "the model",
      summarising: conversation.compacting !== null,
      foldedMessages: conversation.foldedMessages,
    };
    return <RootImpl {...preferPassed(props, own)} ref={ref} />;
  },
);

/**
 * One quiet line where the model's word-for-word memory starts; it opens to the summary. Radix Collapsible:
 * `open`/`defaultOpen`/`onOpenChange`, `data-state="open|closed"`, `--radix-collapsible-content-height`.
 * Renders `data-nacre-summary-divider` and `data-status="summarised|summarising"`.
 */
export const SummaryDividerRoot = forwardRef<RootElement, SummaryDividerRootProps>(
  function SummaryDividerRoot(props, ref) {
    const inConversation = useInConversation();
    return inConversation ? <ConnectedRoot {...props} ref={ref} /> : <RootImpl {...props} ref={ref} />;
  },
);
SummaryDividerRoot.displayName = "SummaryDivider.Root";

export type SummaryDividerTriggerProps = Collapsible.CollapsibleTriggerProps;

/** The line itself, a button that opens the summary (`aria-expanded`). Default text from `messages`. */
export const SummaryDividerTrigger = forwardRef<HTMLButtonElement, SummaryDividerTriggerProps>(
  function SummaryDividerTrigger({ children, ...props }, ref) {
    const data = useDivider("Trigger");
    const messages = useNacreMessages();
    const label = data.summarising
      ? messages.summaryDividerSummarising
      : data.summary?.text && data.summary.model !== null
        ? messages.summaryDividerLabel({ model: data.model })
        : messages.summaryDividerDroppedLabel({ model: data.model });
    return (
      <Collapsible.Trigger data-nacre-summary-divider-trigger="" {...props} ref={ref}>
        {children ?? (
          <>
            {data.summary && !data.summarising ? (
              // Shows that the line opens (the stylesheet draws it, so the line's text stays the label alone);
              // the button's aria-expanded says it to assistive technology.
              <span data-nacre-summary-divider-chevron="" aria-hidden="true" />
            ) : null}
            <span data-nacre-summary-divider-label="" aria-live="polite">
              {label}
            </span>
            {data.summary && !data.summarising ? (
              <span data-nacre-summary-divider-folded="">
                {messages.summaryDividerFolded({ messages: data.foldedMessages, tokens: data.foldedTokens })}
              </span>
            ) : null}
          </>
        )}
      </Collapsible.Trigger>
    );
  },
);
SummaryDividerTrigger.displayName = "SummaryDivider.Trigger";

export type SummaryDividerContentProps = Collapsible.CollapsibleContentProps;

/** The summary, as text (never HTML), and who wrote it. Mounted only while open unless `forceMount`. */
export const SummaryDividerContent = forwardRef<HTMLDivElement, SummaryDividerContentProps>(
  function SummaryDividerContent({ children, ...props }, ref) {
    const data = useDivider("Content");
    const messages = useNacreMessages();
    const summary = data.summary;
    // The tokens belong beside what they measure: the summary that stands in for them.
    const tokens = messages.summaryDividerFoldedTokens({ tokens: data.foldedTokens });
    return (
      <Collapsible.Content data-nacre-summary-divider-content="" {...props} ref={ref}>
        {children ??
          (summary ? (
            <>
              <div data-nacre-summary-text="" dir="auto">
                <PlainText text={summary.text || messages.summaryDividerNoSummary} />
              </div>
              {summary.model && summary.text ? (
                <p data-nacre-summary-divider-writer="">
                  {messages.summaryDividerWrittenBy({ model: summary.modelName ?? summary.model })}
                </p>
              ) : null}
              {tokens ? <p data-nacre-summary-divider-tokens="">{tokens}</p> : null}
            </>
          ) : null)}
      </Collapsible.Content>
    );
  },
);
SummaryDividerContent.displayName = "SummaryDivider.Content";
