import { Fragment } from "react";

/**
 * Text exactly as given, never parsed as HTML: each line break becomes a `<br>`, so lines survive without
 * a stylesheet (nacre.css adds `white-space: pre-wrap` for spaces too).
 */
export function PlainText({ text }: { text: string }) {
  const lines = text.split("\n");
  if (lines.length === 1) return text;
  return lines.map((line, index) => (
    // biome-ignore lint/suspicious/noArrayIndexKey: lines have no identity but their place
    <Fragment key={index}>
      {index > 0 ? <br /> : null}
      {line}
    </Fragment>
  ));
}
