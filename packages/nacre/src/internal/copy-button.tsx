import { type ComponentPropsWithoutRef, forwardRef, useEffect, useState } from "react";
import { useNacreMessages } from "../conversation.js";
import { composeEventHandlers } from "./primitives.js";

export interface CopyButtonProps extends Omit<ComponentPropsWithoutRef<"button">, "value"> {
  /** The text to copy, read when pressed. */
  value: (button: HTMLButtonElement) => string;
}

/** A button that copies `value` to the clipboard; `data-copied` and "Copied" for two seconds after it did. */
export const CopyButton = forwardRef<HTMLButtonElement, CopyButtonProps>(function CopyButton(
  { value, children, onClick, ...props },
  ref,
) {
  const messages = useNacreMessages();
  const [copied, setCopied] = useState(false);
  useEffect(() => {
    if (!copied) return;
    const timer = setTimeout(() => setCopied(false), 2_000);
    return () => clearTimeout(timer);
  }, [copied]);
  return (
    <button
      type="button"
      {...(copied ? { "data-copied": "" } : {})}
      {...props}
      onClick={composeEventHandlers(onClick, (event) => {
        // A refused clipboard (no permission, no focus) leaves the label as it was.
        navigator.clipboard?.writeText(value(event.currentTarget)).then(
          () => setCopied(true),
          () => setCopied(false),
        );
      })}
      ref={ref}
    >
      {children ?? (copied ? messages.codeCopied : messages.codeCopy)}
    </button>
  );
});
