"use client";
import type { ChatMessage, MessagePart } from "@conch/engine-client";
import { Slot } from "@radix-ui/react-slot";
import { type ComponentPropsWithoutRef, forwardRef, memo } from "react";
import { useNacreMessages } from "./conversation.js";
import type { StreamingMessage as StreamingMessageState } from "./conversation-store.js";
import { PlainText } from "./internal/plain-text.js";
import type { NacreMessages } from "./messages.js";

export interface MessageProps extends ComponentPropsWithoutRef<"li"> {
  message: ChatMessage;
  /** Whether the message sits before the model's word-for-word memory. */
  folded?: boolean;
  asChild?: boolean;
}

function partView(part: MessagePart, index: number, messages: NacreMessages) {
  switch (part.type) {
    case "text":
      return (
        <div key={index} data-nacre-message-text="" dir="auto">
          <PlainText text={part.text} />
        </div>
      );
    case "tool-call":
      return (
        <p key={index} data-nacre-tool-call="">
          {messages.toolCall({ name: part.name })}
        </p>
      );
    case "tool-result":
      return (
        <pre key={index} data-nacre-tool-result="" {...(part.isError ? { "data-error": "" } : {})}>
          {part.text}
        </pre>
      );
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
 * One message of the log, as text (never HTML): the role, then its parts. `data-nacre-message`,
 * `data-role`, `data-seq`, `data-folded`.
 */
export const Message = memo(
  forwardRef<HTMLLIElement, MessageProps>(function Message({ message, folded, asChild, children, ...props }, ref) {
    const messages = useNacreMessages();
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
            {message.parts.map((part, index) => partView(part, index, messages))}
          </>
        )}
      </Component>
    );
  }),
);
Message.displayName = "Message";

export interface StreamingMessageProps extends ComponentPropsWithoutRef<"li"> {
  streaming: StreamingMessageState;
  asChild?: boolean;
}

/** The message being written: `data-streaming`, `aria-busy` until it ends. */
export const StreamingMessage = forwardRef<HTMLLIElement, StreamingMessageProps>(function StreamingMessage(
  { streaming, asChild, children, ...props },
  ref,
) {
  const messages = useNacreMessages();
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
            <p key={call.id} data-nacre-tool-call="">
              {messages.toolCall({ name: call.name })}
            </p>
          ))}
          <div data-nacre-message-text="" dir="auto">
            {streaming.text ? <PlainText text={streaming.text} /> : messages.streaming}
          </div>
        </>
      )}
    </Component>
  );
});
StreamingMessage.displayName = "StreamingMessage";
