"use client";

// Headless: hooks over TanStack Query and a framework-free store per chat.
export {
  type ConversationActivity,
  type ConversationMessage,
  type ConversationStatus,
  ConversationStore,
  foldedMessageCount,
  hasSomethingToFold,
  type MessageSiblings,
  nextSeq,
  reduceChat,
  type SendOptions,
  type StreamingMessageState,
  upsertMessage,
} from "@conch/engine-client";
// Parts: objects of short names (`SummaryDivider.Root`) and long names (`SummaryDividerRoot`).
export {
  type CompactCommand,
  ComposerHint,
  type ComposerHintProps,
  ComposerInput,
  type ComposerInputProps,
  type ComposerOutcome,
  ComposerRoot,
  type ComposerRootProps,
  ComposerSubmit,
  type ComposerSubmitProps,
  parseComposerCommand,
  type UseComposerOptions,
  useComposer,
} from "./composer.js";
export {
  ContextMeterIndicator,
  type ContextMeterIndicatorProps,
  ContextMeterLabel,
  type ContextMeterLabelProps,
  ContextMeterRoot,
  type ContextMeterRootProps,
} from "./context-meter.js";
export {
  type CompactUnavailableReason,
  type ContextLevel,
  type ContextUsageState,
  type Conversation,
  type ConversationHostActions,
  type ConversationProblem,
  ConversationProvider,
  type ConversationProviderProps,
  type ConversationTarget,
  contextLevel,
  NacreMessagesProvider,
  type NacreMessagesProviderProps,
  useContextUsage,
  useConversation,
  useConversationStore,
  useInConversation,
  useNacreMessages,
  useStreamingMessage,
} from "./conversation.js";
export { conversationStore, queryConversationCache } from "./conversation-cache.js";
export { NacreOutsideProviderError } from "./errors.js";
export {
  HealthNotesItem,
  type HealthNotesItemProps,
  HealthNotesList,
  type HealthNotesListProps,
  HealthNotesRoot,
  type HealthNotesRootProps,
  HealthNotesTitle,
  type HealthNotesTitleProps,
} from "./health-notes.js";
export {
  Message,
  MessageActions,
  type MessageActionsProps,
  MessageContent,
  MessageCopy,
  type MessageCopyProps,
  type MessageProps,
  type RenderBlock,
  type RenderText,
  RenderTextProvider,
  type RenderTextProviderProps,
  renderPlainText,
  StreamingMessage,
  type StreamingMessageProps,
  type TextRenderDetails,
  useMessage,
  useRenderText,
} from "./message.js";
export {
  MessageListAnnouncer,
  type MessageListAnnouncerProps,
  MessageListItems,
  type MessageListItemsProps,
  type MessageListJumpProps,
  MessageListJumpToLatest,
  MessageListJumpToMemoryStart,
  MessageListRoot,
  type MessageListRootProps,
  type MessageRenderProps,
  PlainStreamBlock,
  type RenderMessage,
  type StreamBlock,
  StreamingText,
  type StreamingTextProps,
} from "./message-list.js";
export {
  type BranchMessages,
  type CommandMessages,
  defaultMessages,
  type NacreMessages,
  resolveMessages,
  type SettingsSection,
} from "./messages.js";
export { Composer } from "./parts/composer.js";
export { ContextMeter } from "./parts/context-meter.js";
export { HealthNotes } from "./parts/health-notes.js";
export { MessageList } from "./parts/message-list.js";
export { SummaryDivider } from "./parts/summary-divider.js";
export { TurnProblem } from "./parts/turn-problem.js";
export {
  contextUsageQueryKey,
  contextUsageQueryOptions,
  conversationQueryKey,
  conversationQueryOptions,
} from "./query.js";
export {
  SummaryDividerContent,
  type SummaryDividerContentProps,
  SummaryDividerRoot,
  type SummaryDividerRootProps,
  SummaryDividerTrigger,
  type SummaryDividerTriggerProps,
} from "./summary-divider.js";
export {
  summariseToolArguments,
  ToolCall,
  type ToolCallProps,
  ToolResult,
  type ToolResultProps,
  textSize,
} from "./tool-parts.js";
export {
  TurnProblemAction,
  type TurnProblemActionProps,
  TurnProblemCounts,
  type TurnProblemCountsProps,
  TurnProblemDescription,
  type TurnProblemDescriptionProps,
  TurnProblemDetails,
  type TurnProblemDetailsProps,
  TurnProblemRoot,
  type TurnProblemRootProps,
  TurnProblemSendAgain,
  type TurnProblemSendAgainProps,
  TurnProblemTitle,
  type TurnProblemTitleProps,
} from "./turn-problem.js";
