"use client";
import {
  type ChatMessage,
  type MessagePart,
  type MessageRole,
  messageText,
  type StreamingMessageState,
} from "@conch/engine-client";
import { Slot } from "@radix-ui/react-slot";
import {
  type ComponentPropsWithoutRef,
  createContext,
  forwardRef,
  memo,
  type ReactNode,
  useContext,
  useMemo,
} from "react";
import { useNacreMessages } from "./conversation.js";
import { CopyButton } from "./internal/copy-button.js";
import { PlainText } from "./internal/plain-text.js";
import { type StreamBlock, StreamingText } from "./message-list-stream.js";
import type { NacreMessages } from "./messages.js";
import { ToolCall, ToolResult } from "./tool-parts.js";

/** Where a text is shown, for a renderer that treats them differently. */
export interface TextRenderDetails {
  readonly role: MessageRole;
  /** True while the text is still being written (it may end inside a code fence or a table). */
  readonly streaming: boolean;
}

/**
 * How a message's text becomes elements. Default: text as text, line breaks kept. `@conch/nacre/markdown`
 * exports `renderMarkdown`. Whatever it returns must not turn model text into HTML.
 */
export type RenderText = (text: string, details: TextRenderDetails) => ReactNode;

export const renderPlainText: RenderText = (text) => <PlainText text={text} />;

/**
 * How one block of a reply being written renders (see `StreamingText`): called for the open block on every
 * delta and for a closed block once. `@conch/nacre/markdown` exports `renderMarkdownBlock`.
 */
export type RenderBlock = (block: StreamBlock) => ReactNode;

interface TextRenderers {
  readonly renderText: RenderText;
  readonly renderBlock: RenderBlock | undefined;
}

const RenderTextContext = createContext<TextRenderers>({ renderText: renderPlainText, renderBlock: undefined });

export interface RenderTextProviderProps {
  /** How text parts render inside. */
  renderText: RenderText;
  /**
   * How a streaming reply's blocks render. Default: each block's text through `renderText` (plain text: chunk
   * by chunk, finished chunks not again).
   */
  renderBlock?: RenderBlock;
  children?: ReactNode;
}

/** Sets how every message inside renders its text (the list, its rows, the streaming reply). */
export function RenderTextProvider({ renderText, renderBlock, children }: RenderTextProviderProps) {
  const value = useMemo(() => ({ renderText, renderBlock }), [renderText, renderBlock]);
  return <RenderTextContext.Provider value={value}>{children}</RenderTextContext.Provider>;
}
RenderTextProvider.displayName = "RenderTextProvider";

/** The text renderer in effect here. */
export function useRenderText(): RenderText {
  return useContext(RenderTextContext).renderText;
}

/** A block renderer that sends each block's text through `render` (the open one as still streaming). */
function blocksThrough(render: RenderText): RenderBlock {
  return (block) => (
    <div data-nacre-stream-block="" data-kind={block.kind}>
      {render(block.chunks.join(""), { role: "assistant", streaming: !block.closed })}
    </div>
  );
}

/**
 * The block renderer for a streaming reply: the one given, else the provider's, else blocks through a
 * `renderText` that is not the plain default, else undefined (`StreamingText`'s chunked plain text).
 */
function useStreamBlockRenderer(renderText?: RenderText, renderBlock?: RenderBlock): RenderBlock | undefined {
  const context = useContext(RenderTextContext);
  return useMemo(() => {
    if (renderBlock) return renderBlock;
    if (renderText) return renderText === renderPlainText ? undefined : blocksThrough(renderText);
    if (context.renderBlock) return context.renderBlock;
    return context.renderText === renderPlainText ? undefined : blocksThrough(context.renderText);
  }, [renderText, renderBlock, context]);
}

export interface MessageProps extends ComponentPropsWithoutRef<"li"> {
  message: ChatMessage;
  /** Whether the message sits before the model's word-for-word memory. */
  folded?: boolean;
  /** How its text renders. Default: the `RenderTextProvider`'s, else plain text. */
  renderText?: RenderText;
  asChild?: boolean;
}

function partView(part: MessagePart, index: number, role: MessageRole, messages: NacreMessages, render: RenderText) {
  switch (part.type) {
    case "text":
      return (
        <div key={index} data-nacre-message-text="" dir="auto">
          {render(part.text, { role, streaming: false })}
        </div>
      );
    case "tool-call":
      return <ToolCall key={index} call={part} />;
    case "tool-result":
      return <ToolResult key={index} result={part} />;
    case "picture":
      return (
        <p key={index} data-nacre-picture="">
          {messages.picture({ name: part.name })}
        </p>
      );
    case "thinking":
      // The model's reasoning is not part of what it says.
      return null;
    default:
      return part satisfies never;
  }
}

const MessageContext = createContext<ChatMessage | null>(null);

/** The message of the `Message` around (null outside one): for parts of your own inside it. */
export function useMessage(): ChatMessage | null {
  return useContext(MessageContext);
}

/**
 * What a `Message` shows by default before its actions: the role, the parts, how a reply ended. For a message
 * composed of your own parts (the `@conch/nacre/branches` row shows it, or the editor in its place).
 */
export function MessageContent({ renderText }: { renderText?: RenderText }) {
  const message = useContext(MessageContext) as ChatMessage;
  const messages = useNacreMessages();
  const contextRender = useRenderText();
  const render = renderText ?? contextRender;
  const ending = message.finishReason ? messages.replyEnding(message.finishReason) : null;
  return (
    <>
      <span data-nacre-message-role="">{messages.roleLabel(message.role)}</span>
      {message.parts.map((part, index) => partView(part, index, message.role, messages, render))}
      {ending ? <p data-nacre-message-ending="">{ending}</p> : null}
    </>
  );
}

/**
 * One message of the log: the role, its parts (text through `renderText`, tool calls and results as closed
 * lines that open), how a reply ended when it did not finish (cut off, stopped), then `MessageActions`.
 * `data-nacre-message`, `data-role`, `data-seq`, `data-folded`, `data-nacre-cut-off` on a reply cut off at the
 * output limit or the window. Parts inside (yours too) read the message from it.
 */
export const Message = memo(
  forwardRef<HTMLLIElement, MessageProps>(function Message(
    { message, folded, renderText, asChild, children, ...props },
    ref,
  ) {
    const Component = asChild ? Slot : "li";
    return (
      <Component
        data-nacre-message=""
        data-role={message.role}
        data-seq={message.seq}
        {...(folded ? { "data-folded": "" } : {})}
        {...(message.finishReason === "length" ? { "data-nacre-cut-off": "" } : {})}
        {...props}
        ref={ref}
      >
        <MessageContext.Provider value={message}>
          {children ?? (
            <>
              <MessageContent {...(renderText ? { renderText } : {})} />
              <MessageActions />
            </>
          )}
        </MessageContext.Provider>
      </Component>
    );
  }),
);
Message.displayName = "Message";

export interface MessageActionsProps extends ComponentPropsWithoutRef<"div"> {
  asChild?: boolean;
}

/**
 * The message's actions, in its DOM always (nacre.css shows them on hover and focus, never mounts them then):
 * `MessageCopy` unless given children. Inside a `Message`. `data-nacre-message-actions`.
 */
export const MessageActions = forwardRef<HTMLDivElement, MessageActionsProps>(function MessageActions(
  { asChild, children, ...props },
  ref,
) {
  const Component = asChild ? Slot : "div";
  return (
    <Component data-nacre-message-actions="" {...props} ref={ref}>
      {children ?? <MessageCopy />}
    </Component>
  );
});
MessageActions.displayName = "MessageActions";

export interface MessageCopyProps extends Omit<ComponentPropsWithoutRef<"button">, "value"> {
  /** `markdown`: the text as written (Markdown for a model's reply); `text`: the text as shown. Default `markdown`. */
  format?: "markdown" | "text";
  /** The text to copy, for a message Nacre does not render (an AI SDK `UIMessage`'s); then `format` is not read. */
  text?: string;
}

/**
 * Copies the message's text to the clipboard, then says "Copied" (`data-copied`) for two seconds. Inside a
 * `Message`, or anywhere given `text`. `data-nacre-message-copy`.
 */
export const MessageCopy = forwardRef<HTMLButtonElement, MessageCopyProps>(function MessageCopy(
  { format = "markdown", text, ...props },
  ref,
) {
  const message = useContext(MessageContext);
  return (
    <CopyButton
      data-nacre-message-copy=""
      value={(button) =>
        text !== undefined
          ? text
          : format === "text"
            ? [...(button.closest("[data-nacre-message]")?.querySelectorAll("[data-nacre-message-text]") ?? [])]
                // biome-ignore lint/performance/useDomNodeTextContent: the text as shown (line breaks of blocks), on request only
                .map((shown) => (shown as HTMLElement).innerText)
                .join("\n\n")
            : message
              ? messageText(message)
              : ""
      }
      {...props}
      ref={ref}
    />
  );
});
MessageCopy.displayName = "MessageCopy";

export interface StreamingMessageProps extends ComponentPropsWithoutRef<"li"> {
  streaming: StreamingMessageState;
  /** How its text renders, block by block. Default: the `RenderTextProvider`'s, else plain text. */
  renderText?: RenderText;
  /** How each block of its text renders. Default: the `RenderTextProvider`'s, else through `renderText`. */
  renderBlock?: RenderBlock;
  asChild?: boolean;
}

/** A tool call of the reply being written: the same call object from delta to delta, so it renders once. */
const StreamingToolCall = memo(function StreamingToolCall({
  call,
}: {
  call: StreamingMessageState["toolCalls"][number];
}) {
  return <ToolCall call={call} />;
});

/**
 * The message being written: `data-streaming`, `aria-busy` until it ends. Its text goes through
 * `StreamingText`, so a delta renders the open block only: the cost of a delta stays flat as the reply grows.
 */
export const StreamingMessage = forwardRef<HTMLLIElement, StreamingMessageProps>(function StreamingMessage(
  { streaming, renderText, renderBlock, asChild, children, ...props },
  ref,
) {
  const messages = useNacreMessages();
  const blockRenderer = useStreamBlockRenderer(renderText, renderBlock);
  const Component = asChild ? Slot : "li";
  return (
    <Component
      data-nacre-message=""
      data-role="assistant"
      data-seq={streaming.seq}
      data-streaming=""
      aria-busy={!streaming.done}
      {...props}
      ref={ref}
    >
      {children ?? (
        <>
          <span data-nacre-message-role="">{messages.roleLabel("assistant")}</span>
          {streaming.toolCalls.map((call) => (
            <StreamingToolCall key={call.id} call={call} />
          ))}
          <div data-nacre-message-text="" dir="auto">
            {streaming.text ? <StreamingText text={streaming.text} renderBlock={blockRenderer} /> : messages.streaming}
          </div>
        </>
      )}
    </Component>
  );
});
StreamingMessage.displayName = "StreamingMessage";
