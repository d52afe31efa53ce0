"use client";
// `@conch/nacre/markdown`: optional, so react-markdown and remark-gfm stay out of the core entry.
export { CodeBlock, type CodeBlockProps } from "./code-block.js";
export { Markdown, type MarkdownProps, renderMarkdown, renderMarkdownBlock } from "./markdown.js";
export { safeUrl } from "./safe-url.js";
