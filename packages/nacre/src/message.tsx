"use client";
import type { ChatMessage, MessagePart, MessageRole, StreamingMessageState } from "@conch/engine-client";
import { Slot } from "@radix-ui/react-slot";
import { type ComponentPropsWithoutRef, createContext, forwardRef, memo, type ReactNode, useContext } from "react";
import { useNacreMessages } from "./conversation.js";
import { PlainText } from "./internal/plain-text.js";
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

const RenderTextContext = createContext<RenderText>(renderPlainText);

export interface RenderTextProviderProps {
  /** How text parts render inside. */
  renderText: RenderText;
  children?: ReactNode;
}

/** Sets how every message inside renders its text (the list, its rows, the streaming reply). */
export function RenderTextProvider({ renderText, children }: RenderTextProviderProps) {
  return <RenderTextContext.Provider value={renderText}>{children}</RenderTextContext.Provider>;
}
RenderTextProvider.displayName = "RenderTextProvider";

/** The text renderer in effect here. */
export function useRenderText(): RenderText {
  return useContext(RenderTextContext);
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

/**
 * One message of the log: the role, then its parts (text through `renderText`, tool calls and results as
 * closed lines that open). `data-nacre-message`, `data-role`, `data-seq`, `data-folded`.
 */
export const Message = memo(
  forwardRef<HTMLLIElement, MessageProps>(function Message(
    { message, folded, renderText, asChild, children, ...props },
    ref,
  ) {
    const messages = useNacreMessages();
    const contextRender = useRenderText();
    const render = renderText ?? contextRender;
    const Component = asChild ? Slot : "li";
    return (
      <Component
        data-nacre-message=""
        data-role={message.role}
        data-seq={message.seq}
        {...(folded ? { "data-folded": "" } : {})}
        {...props}
        ref={ref}
      >
        {children ?? (
          <>
            <span data-nacre-message-role="">{messages.roleLabel(message.role)}</span>
            {message.parts.map((part, index) => partView(part, index, message.role, messages, render))}
          </>
        )}
      </Component>
    );
  }),
);
Message.displayName = "Message";

export interface StreamingMessageProps extends ComponentPropsWithoutRef<"li"> {
  streaming: StreamingMessageState;
  /** How its text renders. Default: the `RenderTextProvider`'s, else plain text. */
  renderText?: RenderText;
  asChild?: boolean;
}

/** The message being written: `data-streaming`, `aria-busy` until it ends. */
export const StreamingMessage = forwardRef<HTMLLIElement, StreamingMessageProps>(function StreamingMessage(
  { streaming, renderText, asChild, children, ...props },
  ref,
) {
  const messages = useNacreMessages();
  const contextRender = useRenderText();
  const render = renderText ?? contextRender;
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
            <ToolCall key={call.id} call={call} />
          ))}
          <div data-nacre-message-text="" dir="auto">
            {streaming.text
              ? render(streaming.text, { role: "assistant", streaming: !streaming.done })
              : messages.streaming}
          </div>
        </>
      )}
    </Component>
  );
});
StreamingMessage.displayName = "StreamingMessage";
