"use client";
import { type ComponentPropsWithoutRef, forwardRef, type ReactNode } from "react";
import { CopyButton } from "../internal/copy-button.js";

export interface CodeBlockProps extends ComponentPropsWithoutRef<"div"> {
  /** The code, as text. */
  code: string;
  /** The fence's language (` ```ts `), if any. */
  language?: string | undefined;
  /** What `<code>` shows instead of `code` (a streaming block's chunks); the copy button copies `code`. */
  children?: ReactNode;
}

/**
 * A fenced code block: the language, a copy button, and the code as text in `<pre><code>`, scrolling
 * sideways rather than widening the page. `data-nacre-code-block`, `data-language`; the button
 * `data-nacre-code-copy` with `data-copied` for two seconds after it copied.
 */
export const CodeBlock = forwardRef<HTMLDivElement, CodeBlockProps>(function CodeBlock(
  { code, language, children, ...props },
  ref,
) {
  return (
    <div data-nacre-code-block="" {...(language ? { "data-language": language } : {})} {...props} ref={ref}>
      <div data-nacre-code-header="">
        {language ? <span data-nacre-code-language="">{language}</span> : null}
        <CopyButton data-nacre-code-copy="" value={() => code} />
      </div>
      <pre>
        <code {...(language ? { "data-language": language } : {})}>{children ?? code}</code>
      </pre>
    </div>
  );
});
CodeBlock.displayName = "CodeBlock";
