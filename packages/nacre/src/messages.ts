import {
  defaultProblemTitle,
  type HealthNote,
  type MessageFinishReason,
  type MessageRole,
  type NextStep,
  type TurnProblem,
} from "@conch/engine-client";

const numberFormat = new Intl.NumberFormat("en");
const timeFormat = new Intl.DateTimeFormat("en", { dateStyle: "medium", timeStyle: "short" });
const format = (value: number) => numberFormat.format(Math.round(value));

/** The settings page a problem card can send the person to. */
export type SettingsSection = Extract<NextStep, { type: "open-settings" }>["section"];

/**
 * Every string Nacre shows. Replace any of them through the `messages` prop of `ConversationProvider`
 * (or `NacreMessagesProvider`); the defaults are English.
 */
export interface NacreMessages {
  /** The divider's line. Default: "Earlier messages are summarised for {model}". */
  summaryDividerLabel(values: { readonly model: string }): string;
  /** The divider's line when no model could write a summary (the turns were dropped). */
  summaryDividerDroppedLabel(values: { readonly model: string }): string;
  /** How many messages the summary stands for, on the line after its label. Default: "40 messages". */
  summaryDividerFolded(values: { readonly messages: number; readonly tokens: number }): string;
  /**
   * In the opened part, under the summary: the tokens the folds took out of each request (null: say nothing).
   * Default: "Stands for about 1,880 tokens".
   */
  summaryDividerFoldedTokens(values: { readonly tokens: number }): string | null;
  /** While a fold runs. Default: "Summarising earlier messages…". */
  summaryDividerSummarising: string;
  /** Under the summary. Default: "Written by {model}". */
  summaryDividerWrittenBy(values: { readonly model: string }): string;
  /** The content when there is no summary text. */
  summaryDividerNoSummary: string;

  /** A problem card's title. Default: the problem's own title. */
  problemTitle(problem: TurnProblem): string;
  /** One sentence under the title. */
  problemDescription(problem: TurnProblem, values: { readonly model: string | null }): string;
  /** The disclosure that shows the provider's own words. Default: "What the provider said". */
  problemProviderMessage: string;
  /** The label of the one next-step button. */
  nextStepLabel(next: NextStep, values: { readonly secondsLeft: number }): string;
  /** When the provider's count and the estimate disagree: what each said. */
  problemCounts(values: { readonly counted: number; readonly estimated: number }): string;
  /** The too-long card's second button, which sends the message again. Default: "Send again". */
  problemSendAgain: string;

  // The ⌘K action's strings: their defaults live with it, in `@conch/nacre/command` (`defaultCommandMessages`),
  // so that a page without the command menu does not carry them. Set any of them here to replace it.
  /** The ⌘K action. Default: "Summarise the start of this chat". */
  compactCommand?: string;
  /** Why the ⌘K action is disabled. */
  compactUnavailable?: string;
  compactNothingToFold?: string;
  /** Why there is nothing to fold when the summary already covers everything before the last message. */
  compactAllFolded?: string;
  compactBusy?: string;
  /** The command menu's accessible name. Default: "Command menu". */
  commandMenuLabel?: string;
  commandMenuPlaceholder?: string;
  commandMenuEmpty?: string;
  commandMenuGroup?: string;

  // The versions' strings: their defaults live in `@conch/nacre/branches` (`defaultBranchMessages`).
  /** A person's message's Edit button. Default: "Edit". */
  messageEdit?: string;
  /** An answer's Regenerate button. Default: "Regenerate". */
  messageRegenerate?: string;
  /** The in-place editor's accessible name. Default: "Edit message". */
  messageEditLabel?: string;
  /** The editor's submit. Default: "Send". */
  messageEditSave?: string;
  /** The editor's cancel. Default: "Cancel". */
  messageEditCancel?: string;
  /** The picker's accessible name. Default: "Versions". */
  branchPickerLabel?: string;
  /** Default: "Previous version". */
  branchPrevious?: string;
  /** Default: "Next version". */
  branchNext?: string;
  /** What the picker shows between its buttons. Default: "2 / 3". */
  branchCount?: (values: { readonly index: number; readonly count: number }) => string;
  /** What a screen reader hears for it. Default: "Version 2 of 3". */
  branchCountLabel?: (values: { readonly index: number; readonly count: number }) => string;

  /** The composer's accessible name. Default: "Message". */
  composerLabel: string;
  composerPlaceholder: string;
  composerSend: string;
  /** The submit button when the draft is `/compact`. Default: "Summarise". */
  composerCompact: string;
  composerStop: string;
  /** Shown while the draft starts with `/`. */
  composerCompactHint: string;
  /** What a `/compact` did, shown under the composer. */
  composerCompactResult(
    result: "compacted" | "nothing-to-fold" | "no-summary" | "all-folded" | "handed-over" | "aborted" | "unavailable",
  ): string;

  /** The health list's heading. Default: "Health". */
  healthTitle: string;
  healthEmpty: string;
  healthKind(kind: HealthNote["kind"]): string;
  /** When a note was written (milliseconds since the epoch). Default: "Oct 3, 2026, 12:00 PM". */
  healthTime(at: number): string;

  /** The meter's accessible name. Default: "Context used". */
  contextMeterLabel: string;
  /** The meter's text alternative. */
  contextMeterText(values: {
    readonly percent: number;
    readonly usedTokens: number;
    readonly window: number;
    readonly model: string | null;
    /** `provider` once the provider counted the request itself (a too-long refusal said), else `estimate`. */
    readonly source: "estimate" | "provider";
  }): string;

  /** The message list's accessible name. Default: "Messages". */
  messageListLabel: string;
  /** What the polite live region reads when a reply is finished. Default: "{role}: {text}". */
  replyAnnouncement(values: { readonly text: string }): string;
  /** The list's button back to the newest message. Default: "Jump to latest". */
  jumpToLatest: string;
  /** The button to the divider, where the model's word-for-word memory starts. */
  jumpToMemoryStart: string;
  roleLabel(role: MessageRole): string;
  /** A tool call inside an assistant message. */
  toolCall(values: { readonly name: string }): string;
  /** A tool's result (the tool's name when the result carries it). */
  toolResult(values: { readonly name: string | null; readonly isError: boolean }): string;
  /** The size of a tool's result on its closed line. */
  toolResultSize(values: { readonly lines: number; readonly characters: number }): string;
  picture(values: { readonly name: string }): string;
  /** On a message being written. Default: "Writing…". */
  streaming: string;
  /** The row (and the live region's one word) from the turn's start to the first word of the reply. Default: "Working…". */
  pending: string;
  /** Under a reply that did not finish: "Cut off" (`length`), "Stopped" (`aborted`); null for none. */
  replyEnding(reason: MessageFinishReason): string | null;
  /** The button under a cut-off reply. Default: "Continue". */
  continueReply: string;
  /** What Continue sends, as a new turn (never learned from). Default: "Continue". */
  continuePrompt: string;
  /** A Markdown code block's copy button, before and after it copied. */
  codeCopy: string;
  codeCopied: string;
  /** A Markdown image that is not fetched (`host` null when its URL was refused). */
  imageNotLoaded(values: { readonly alt: string; readonly host: string | null }): string;
}

function settingsLabel(section: SettingsSection): string {
  switch (section) {
    case "provider":
      return "Check the provider settings";
    case "models":
      return "Choose another model";
    case "billing":
      return "Open billing";
    case undefined:
      return "Open settings";
    default:
      return section satisfies never;
  }
}

function problemDescription(problem: TurnProblem, { model }: { readonly model: string | null }): string {
  const name = model ?? "the model";
  switch (problem.kind) {
    case "too-long":
      return `Even after summarising, this message and what it needs no longer fit in what ${name} can read${
        problem.window ? ` (${format(problem.window)} tokens)` : ""
      }.`;
    case "auth":
      return "The provider refused the key this chat uses.";
    case "rate-limited":
      return "Too many requests went to the provider in a short time.";
    case "quota":
      return "The account has no quota or credit left for this model.";
    case "model-unavailable":
      return `${name} cannot answer right now.`;
    case "offline":
      return "The provider did not answer. The connection may be down.";
    case "refused":
      return "The model chose not to answer this message.";
    case "provider-error":
      return "Something went wrong on the provider's side.";
    default:
      return problem satisfies never;
  }
}

function nextStepLabel(next: NextStep, { secondsLeft }: { readonly secondsLeft: number }): string {
  switch (next.type) {
    case "switch-model":
      return next.readsTimes && next.readsTimes > 1
        ? `Switch to ${next.model.displayName}, which reads ${format(next.readsTimes)}× more`
        : `Switch to ${next.model.displayName}`;
    case "new-chat":
      return "Start a new chat with this message";
    case "retry":
      return "Try again";
    case "retry-after":
      return secondsLeft > 0 ? `Try again in ${format(secondsLeft)} s` : "Try again";
    case "open-settings":
      return settingsLabel(next.section);
    default:
      return next satisfies never;
  }
}

function healthKind(kind: HealthNote["kind"]): string {
  switch (kind) {
    case "healed":
      return "Quiet retry";
    case "summary-failed":
      return "Summary failed";
    case "summary-shortened":
      return "Summary from shortened texts";
    case "window-learned":
      return "Window learned";
    case "usage-ignored":
      return "Usage report ignored";
    case "log-repaired":
      return "Log repaired";
    default:
      return kind satisfies never;
  }
}

function roleLabel(role: MessageRole): string {
  switch (role) {
    case "user":
      return "You";
    case "assistant":
      return "Model";
    case "tool":
      return "Tool";
    default:
      return role satisfies never;
  }
}

/** The ⌘K action's strings, which `@conch/nacre/command` gives defaults for (`defaultCommandMessages`). */
export type CommandMessages = Required<
  Pick<
    NacreMessages,
    | "compactCommand"
    | "compactUnavailable"
    | "compactNothingToFold"
    | "compactAllFolded"
    | "compactBusy"
    | "commandMenuLabel"
    | "commandMenuPlaceholder"
    | "commandMenuEmpty"
    | "commandMenuGroup"
  >
>;

/** The versions' strings, which `@conch/nacre/branches` gives defaults for (`defaultBranchMessages`). */
export type BranchMessages = Required<
  Pick<
    NacreMessages,
    | "messageEdit"
    | "messageRegenerate"
    | "messageEditLabel"
    | "messageEditSave"
    | "messageEditCancel"
    | "branchPickerLabel"
    | "branchPrevious"
    | "branchNext"
    | "branchCount"
    | "branchCountLabel"
  >
>;

/** Nacre's English strings (the ⌘K action's are `defaultCommandMessages`, in `@conch/nacre/command`). */
export const defaultMessages: NacreMessages = {
  summaryDividerLabel: ({ model }) => `Earlier messages are summarised for ${model}`,
  summaryDividerDroppedLabel: ({ model }) => `Earlier messages are no longer read by ${model}`,
  summaryDividerFolded: ({ messages }) => `${format(messages)} ${messages === 1 ? "message" : "messages"}`,
  summaryDividerFoldedTokens: ({ tokens }) => (tokens > 0 ? `Stands for about ${format(tokens)} tokens` : null),
  summaryDividerSummarising: "Summarising earlier messages…",
  summaryDividerWrittenBy: ({ model }) => `Written by ${model}`,
  summaryDividerNoSummary:
    "No model could write a summary this time, so these messages were left out of what the model reads. They are all still here.",

  problemTitle: (problem) => problem.title || defaultProblemTitle(problem.kind),
  problemDescription,
  problemProviderMessage: "What the provider said",
  nextStepLabel,
  problemCounts: ({ counted, estimated }) =>
    `The provider counted ${format(counted)} tokens where the estimate said ${format(estimated)}.`,
  problemSendAgain: "Send again",

  composerLabel: "Message",
  composerPlaceholder: "Write a message, or /compact [what to keep]",
  composerSend: "Send",
  composerCompact: "Summarise",
  composerStop: "Stop",
  composerCompactHint: "/compact [what to keep] summarises the start of this chat now.",
  composerCompactResult: (result) => {
    switch (result) {
      case "compacted":
        return "The start of this chat is summarised.";
      case "nothing-to-fold":
        return "Nothing to summarise yet.";
      case "no-summary":
        return "No summary could be written; nothing was dropped.";
      case "all-folded":
        return "Nothing left to summarise: everything before the last message is already in the summary.";
      case "handed-over":
        return "The engine summarises this chat itself.";
      case "aborted":
        return "Summarising was stopped.";
      case "unavailable":
        return "This chat's engine does not summarise.";
      default:
        return result satisfies never;
    }
  },

  healthTitle: "Health",
  healthEmpty: "Nothing to report.",
  healthKind,
  healthTime: (at) => timeFormat.format(at),

  contextMeterLabel: "Context used",
  contextMeterText: ({ percent, usedTokens, window, model, source }) =>
    `${format(percent)}% of ${model ? `${model}'s` : "the model's"} window (${format(usedTokens)} of ${format(window)} tokens${
      source === "provider" ? ", as the provider counted" : ""
    })`,

  messageListLabel: "Messages",
  replyAnnouncement: ({ text }) => `${roleLabel("assistant")}: ${text}`,
  jumpToLatest: "Jump to latest",
  jumpToMemoryStart: "Jump to where the model's memory starts",
  roleLabel,
  toolCall: ({ name }) => `Called ${name}`,
  toolResult: ({ name, isError }) => `${isError ? "Failed" : "Result"}${name ? ` of ${name}` : ""}`,
  toolResultSize: ({ lines, characters }) =>
    characters === 0
      ? "empty"
      : `${format(lines)} ${lines === 1 ? "line" : "lines"}, ${
          characters < 1_000
            ? `${format(characters)} characters`
            : `${(Math.round(characters / 100) / 10).toLocaleString("en")} K characters`
        }`,
  picture: ({ name }) => `[picture: ${name}]`,
  streaming: "Writing…",
  pending: "Working…",
  replyEnding: (reason) => (reason === "length" ? "Cut off" : reason === "aborted" ? "Stopped" : null),
  continueReply: "Continue",
  continuePrompt: "Continue",
  codeCopy: "Copy",
  codeCopied: "Copied",
  imageNotLoaded: ({ alt, host }) =>
    `Image${alt ? `: ${alt}` : ""}${host ? ` (${host}, not loaded)` : " (not loaded)"}`,
};

/** Defaults with the host's replacements on top. */
export function resolveMessages(overrides: Partial<NacreMessages> | undefined): NacreMessages {
  return overrides ? { ...defaultMessages, ...overrides } : defaultMessages;
}
