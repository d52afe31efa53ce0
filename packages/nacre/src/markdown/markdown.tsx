"use client";
import { type ComponentPropsWithoutRef, createContext, memo, type ReactNode, useContext, useRef } from "react";
import ReactMarkdown, { type Components, type ExtraProps } from "react-markdown";
import remarkGfm from "remark-gfm";
import { useNacreMessages } from "../conversation.js";
import { type RenderBlock, type RenderText, renderPlainText } from "../message.js";
import type { StreamBlock } from "../message-list-stream.js";
import { CodeBlock } from "./code-block.js";
import { remarkHtmlAsText } from "./html-as-text.js";
import { createPieceSplitter, type PieceSplitter, plainParagraphText, splitParagraph } from "./paragraph-pieces.js";
import { safeUrl } from "./safe-url.js";

export interface MarkdownProps {
  /** The Markdown, as the model wrote it (possibly cut off mid-stream). */
  text: string;
  /**
   * Which image URLs may be fetched. Default: none, so a model cannot make the page call a URL it chose
   * (a beacon); an image shows as a link with its alt text instead.
   */
  loadImage?: (url: string) => boolean;
}

interface HastText {
  type: string;
  value?: string;
  children?: HastText[];
  tagName?: string;
  properties?: { className?: unknown };
}

function textOf(node: HastText | undefined): string {
  if (!node) return "";
  if (node.type === "text") return node.value ?? "";
  return (node.children ?? []).map(textOf).join("");
}

function languageOf(node: HastText | undefined): string | undefined {
  const className = node?.properties?.className;
  const classes = Array.isArray(className) ? className : [];
  const language = classes.find((name): name is string => typeof name === "string" && name.startsWith("language-"));
  return language?.slice("language-".length);
}

/** `code` without the one line break a fence's last line ends in (not a regex: it would scan a 96 KB block). */
function withoutFinalLineBreak(code: string): string {
  return code.endsWith("\n") ? code.slice(0, -1) : code;
}

function Pre({ node }: ComponentPropsWithoutRef<"pre"> & ExtraProps) {
  const code = (node?.children as HastText[] | undefined)?.find((child) => child.tagName === "code");
  // Without its closing fence a streamed block still ends in the newline micromark adds; drop that one.
  return <CodeBlock code={withoutFinalLineBreak(textOf(code))} language={languageOf(code)} />;
}

function Link({ href, children }: ComponentPropsWithoutRef<"a"> & ExtraProps) {
  const url = href ? safeUrl(href) : null;
  if (!url) return <span data-nacre-link-refused="">{children}</span>;
  return (
    <a href={url} rel="noopener noreferrer" target="_blank" data-nacre-link="">
      {children}
    </a>
  );
}

function Table({ children }: ComponentPropsWithoutRef<"table"> & ExtraProps) {
  // Wide tables scroll inside their own box, never the page.
  return (
    <div data-nacre-table="">
      <table>{children}</table>
    </div>
  );
}

const loadNoImage = () => false;
const LoadImageContext = createContext<(url: string) => boolean>(loadNoImage);

function Image({ src, alt }: ComponentPropsWithoutRef<"img"> & ExtraProps) {
  const loadImage = useContext(LoadImageContext);
  const messages = useNacreMessages();
  const url = typeof src === "string" ? safeUrl(src) : null;
  if (url && loadImage(url)) {
    return <img src={url} alt={alt ?? ""} loading="lazy" referrerPolicy="no-referrer" data-nacre-image="" />;
  }
  const label = messages.imageNotLoaded({ alt: alt ?? "", host: url ? new URL(url).host : null });
  return url ? (
    <a href={url} rel="noopener noreferrer" target="_blank" data-nacre-image-link="">
      {label}
    </a>
  ) : (
    <span data-nacre-image-link="">{label}</span>
  );
}

const remarkPlugins = [remarkGfm, remarkHtmlAsText];
const components: Components = { pre: Pre, a: Link, table: Table, img: Image };

// Every URL in the tree (links, images, definitions) goes through the one check; refused ones become "".
const urlTransform = (url: string) => safeUrl(url) ?? "";

/**
 * Model Markdown as elements, safely: GFM (tables, task lists, strikethrough, autolinks); raw HTML shown as
 * text; links only to `http(s):`/`mailto:` with `rel="noopener noreferrer"`; images not fetched unless
 * `loadImage` allows their URL; code blocks with a copy button. A text cut off mid-stream renders as far as
 * it goes (an open fence is a code block to the end). `data-nacre-markdown`.
 */
export const Markdown = memo(function Markdown({ text, loadImage }: MarkdownProps) {
  const markdown = (
    <div data-nacre-markdown="">
      <ReactMarkdown remarkPlugins={remarkPlugins} components={components} urlTransform={urlTransform}>
        {text}
      </ReactMarkdown>
    </div>
  );
  return loadImage ? <LoadImageContext.Provider value={loadImage}>{markdown}</LoadImageContext.Provider> : markdown;
});
Markdown.displayName = "Markdown";

/** A `RenderText` for `RenderTextProvider` or `Message`: the model's text as Markdown, the person's as text. */
export const renderMarkdown: RenderText = (text, { role }) =>
  role === "assistant" ? <Markdown text={text} /> : renderPlainText(text, { role, streaming: false });

const CodeChunk = memo(function CodeChunk({ text }: { text: string }) {
  return text;
});

/** Chunks per group: a delta compares the finished groups, not every chunk (flat as a 96 KB block grows). */
const chunksPerGroup = 16;

const sameChunks = (before: { chunks: readonly string[] }, after: { chunks: readonly string[] }) =>
  before.chunks.length === after.chunks.length && before.chunks.every((chunk, index) => chunk === after.chunks[index]);

const CodeChunkGroup = memo(function CodeChunkGroup({ chunks }: { chunks: readonly string[] }) {
  return chunks.map((chunk, index) => (
    // biome-ignore lint/suspicious/noArrayIndexKey: chunks only append, their place is their identity
    <CodeChunk key={index} text={chunk} />
  ));
}, sameChunks);

/** A code fence's lines without its opening and (once closed) closing fence lines, chunk by chunk. */
function codeChunksOf(block: StreamBlock): string[] {
  const chunks = [...block.chunks];
  const first = chunks[0] ?? "";
  chunks[0] = first.slice(first.indexOf("\n") + 1);
  if (block.closed) {
    const last = chunks.length - 1;
    const text = chunks[last] ?? "";
    // The closing fence is the last line: drop it and the line break before it.
    const end = text.replace(/\n?[ \t]*[`~]{3,}[ \t]*\n?$/, "");
    chunks[last] = end;
  }
  return chunks;
}

/**
 * A code fence while it streams: the same `CodeBlock`, its lines in chunks of which only the open one renders
 * again per delta, in groups of which only the open one is looked into (a 96 KB reply of short lines costs one
 * chunk a delta, not the whole block).
 */
const StreamingCodeBlock = memo(function StreamingCodeBlock({ block }: { block: StreamBlock }) {
  const chunks = codeChunksOf(block);
  // The code the copy button copies, without joining the whole block per delta (96 KB a delta is garbage the
  // collector pays for while rendering): the finished chunks' text is kept and grows by the chunks that finish.
  const finished = useRef({ count: 0, text: "" });
  const openIndex = chunks.length - 1;
  if (openIndex < finished.current.count) finished.current = { count: 0, text: "" };
  if (openIndex > finished.current.count) {
    const text = finished.current.text + chunks.slice(finished.current.count, openIndex).join("");
    finished.current = { count: openIndex, text };
  }
  const open = chunks[openIndex] ?? "";
  const code = open
    ? finished.current.text + withoutFinalLineBreak(open)
    : withoutFinalLineBreak(finished.current.text);
  return (
    <div data-nacre-markdown="" data-nacre-stream-block="" data-kind="code">
      <CodeBlock code={code} language={block.lang || undefined}>
        {Array.from({ length: Math.ceil(chunks.length / chunksPerGroup) }, (_, group) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: groups only append, their place is their identity
          <CodeChunkGroup key={group} chunks={chunks.slice(group * chunksPerGroup, (group + 1) * chunksPerGroup)} />
        ))}
      </CodeBlock>
    </div>
  );
});

// A piece of a paragraph renders as inline content: the paragraph element is the one around all the pieces.
const Unwrapped = ({ children }: { children?: ReactNode }) => children;
const pieceComponents: Components = { ...components, p: Unwrapped };

/**
 * One finished piece of a streamed paragraph as inline content, its trailing spaces as text (inside the
 * paragraph they are kept); the tail as it parses (the paragraph's own end trims its trailing spaces). Plain
 * words (most sentences) are the text they are, without a parse.
 */
const ParagraphPiece = memo(function ParagraphPiece({ text, tail }: { text: string; tail?: boolean }) {
  let end = text.length;
  // Only the run of spaces a piece was cut at (trimEnd would take any other whitespace before it too).
  while (!tail && text[end - 1] === " ") end -= 1;
  const source = text.slice(0, end);
  const plain = plainParagraphText(source);
  return (
    <>
      {plain ?? (
        <ReactMarkdown remarkPlugins={remarkPlugins} components={pieceComponents} urlTransform={urlTransform}>
          {source}
        </ReactMarkdown>
      )}
      {text.slice(end)}
    </>
  );
});

/**
 * The open prose block of a streaming reply. When it is one plain paragraph, it renders as the pieces
 * `splitParagraph` cut (finished ones memoised, no inline construct open across a cut) and the tail, inside
 * one `<p>`: a delta parses the tail only, however long the paragraph already is. Anything else renders whole.
 */
const StreamingProse = memo(function StreamingProse({ text }: { text: string }) {
  const splitter = useRef<PieceSplitter | null>(null);
  splitter.current ??= createPieceSplitter();
  const split = splitParagraph(splitter.current, text);
  if (!split || (split.pieces.length === 0 && plainParagraphText(split.tail) === null)) return <Markdown text={text} />;
  return (
    <div data-nacre-markdown="">
      <p>
        {split.pieces.map((piece, index) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: pieces only append, their place is their identity
          <ParagraphPiece key={index} text={piece} />
        ))}
        <ParagraphPiece key="tail" text={split.tail} tail />
      </p>
    </div>
  );
});

/**
 * A `RenderBlock` for `RenderTextProvider`: a streaming reply's blocks as Markdown, each on its own (a delta
 * parses the open block only, and of an open paragraph its last sentence only), code fences as a `CodeBlock`
 * whose finished chunks do not render again. A closed block renders whole, as `Markdown` would.
 */
export const renderMarkdownBlock: RenderBlock = (block) => {
  switch (block.kind) {
    case "code":
      return <StreamingCodeBlock block={block} />;
    case "prose":
      return block.closed ? <Markdown text={block.chunks.join("")} /> : <StreamingProse text={block.chunks.join("")} />;
    default:
      return block.kind satisfies never;
  }
};
