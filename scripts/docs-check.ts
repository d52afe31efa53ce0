// The docs check, beside the API-surface check: README.md, docs/*.md and the examples' READMEs say only what is
// true of the code. Three rules:
// - a code name the docs give as ours (`createApiEngine`, `SummaryDivider.Root`, `@conch/nacre/command`) is an
//   export of an entry point (read from the checked-in lists in packages/*/api-surface/, which
//   `api-surface.test.ts` keeps equal to the code), a package's entry, or a name of another library listed below;
// - every row of a Markdown table has as many cells as its header (an unescaped `|` in a cell, even inside
//   backticks, splits it: GitHub draws a broken table);
// - every relative link resolves to a file, and its `#anchor` to a heading of that file.
//
//   node --conditions=source --import tsx scripts/docs-check.ts   # prints each problem; exits 1 when there is one
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { bare, entryPoints, readList, repositoryRoot } from "./api-surface.js";

/** One thing the docs get wrong, at a file and line (1-based). */
export interface DocsProblem {
  readonly file: string;
  readonly line: number;
  readonly rule: "unknown-name" | "unknown-entry" | "table-cells" | "dead-link";
  readonly message: string;
}

/** The Markdown files the check reads, relative to the repository's root. */
export function documentationFiles(root = repositoryRoot): string[] {
  const docs = readdirSync(join(root, "docs"))
    .filter((file) => file.endsWith(".md"))
    .sort()
    .map((file) => `docs/${file}`);
  const examples = readdirSync(join(root, "examples"))
    .filter((folder) => existsSync(join(root, "examples", folder, "README.md")))
    .sort()
    .map((folder) => `examples/${folder}/README.md`);
  return ["README.md", ...docs, ...examples];
}

/**
 * Names of other libraries and of the platform that the docs write as code in the shapes checked below (a
 * capitalised name, or one starting with `create` or `use`). Anything else in those shapes must be ours.
 */
export const otherLibraries: ReadonlySet<string> = new Set([
  // React and the DOM
  "React",
  "StrictMode",
  "Suspense",
  "Profiler",
  "useState",
  "useEffect",
  "useMemo",
  "useCallback",
  "useRef",
  "useSyncExternalStore",
  "useLayoutEffect",
  "useId",
  "createRoot",
  // LiteLLM's exception for a too-long request, named in docs/providers.md.
  "ContextWindowExceededError",
  "ResizeObserver",
  "IntersectionObserver",
  "Element",
  "HTMLElement",
  "AbortSignal",
  "AbortController",
  "Request",
  "Response",
  "Headers",
  "URL",
  "JSON",
  "Error",
  "Promise",
  "ReadableStream",
  "TextEncoder",
  "TextDecoder",
  "Date",
  "Map",
  "Set",
  "Symbol",
  "Intl",
  "AbortError",
  "AsyncIterable",
  // HTTP header names and schemes
  "Origin",
  "Allow",
  "Authorization",
  "Bearer",
  "Basic",
  // Chromium DevTools' metrics
  "TaskDuration",
  // Placeholders for "any such name"
  "XProps",
  "createX",
  // TanStack Query, Radix, cmdk, react-markdown
  "QueryClient",
  "QueryClientProvider",
  "useQuery",
  "useQueryClient",
  "useMutation",
  "Collapsible",
  "Command",
  "Command.Item",
  "Command.List",
  "Command.Dialog",
  "Command.Input",
  "Command.Group",
  "ReactMarkdown",
  // The Vercel AI SDK
  "DefaultChatTransport",
  "UIMessage",
  "UIMessageChunk",
  "ChatTransport",
  "useChat",
  "createUIMessageStream",
  "createUIMessageStreamResponse",
  "readUIMessageStream",
  "LanguageModelV4",
  "MockLanguageModelV4",
  // assistant-ui
  "useChatRuntime",
  "useLocalRuntime",
  "useExternalStoreRuntime",
  "AssistantRuntimeProvider",
  "ThreadPrimitive",
  "MessagePrimitive",
  "ComposerPrimitive",
  "ActionBarPrimitive",
  "ExternalStoreAdapter",
  "AssistantRuntime",
  "ThreadMessageLike",
  "MessageNotSentError",
  // Node, srvx, Postgres, Vite, Storybook, Vitest
  "Pool",
  "PGlite",
  "Buffer",
  "createServer",
  "IncomingMessage",
  "ServerResponse",
  "Server",
]);

/** A name written as code in one of the shapes the docs use for API: `Name`, `Name.Part`, `name(…)`, `Name<…>`. */
const codeName =
  /^(?:new )?(?<name>[A-Za-z_$][\w$]*(?:\.[A-Z][\w$]*)?)(?:<[^`]*>)?(?:\([^`]*\))?(?:\.[a-z][\w$]*(?:\([^`]*\))?)?$/;

/** Whether the docs present a name as API: capitalised (a type, a component, a class), or `create…` / `use…`. */
function looksLikeApi(name: string): boolean {
  const head = name.split(".")[0] as string;
  if (/^[A-Z][A-Z0-9_]*$/.test(head)) return false; // an environment variable or a constant of the platform
  return /^[A-Z]/.test(head) || /^(create|use)[A-Z]/.test(head);
}

/** The lines of a Markdown text that are prose (not inside a fenced code block), with their 1-based numbers. */
function proseLines(text: string): { readonly line: number; readonly text: string }[] {
  const lines: { line: number; text: string }[] = [];
  let fence: string | null = null;
  text.split("\n").forEach((content, index) => {
    const opening = /^\s*(`{3,}|~{3,})/.exec(content);
    if (opening) {
      const marker = opening[1] as string;
      if (fence === null) fence = marker[0]?.repeat(marker.length) ?? null;
      else if (marker.startsWith(fence)) fence = null;
      return;
    }
    if (fence === null) lines.push({ line: index + 1, text: content });
  });
  return lines;
}

/** The inline code spans of a line (single or double backticks). */
function codeSpans(line: string): string[] {
  return [...line.matchAll(/(`+)(?<code>[^`]|[^`].*?[^`])\1(?!`)/g)].map((match) => match.groups?.code?.trim() ?? "");
}

/** What the docs may name: entry points' exports, the entries, and (in the internal docs) modules' own names. */
export interface Known {
  readonly names: ReadonlySet<string>;
  readonly entries: ReadonlySet<string>;
  readonly moduleNames: ReadonlySet<string>;
}

/** The exported names of every entry point (bare, without `type `), and the entries themselves, from the lists. */
export function knownExports(root = repositoryRoot): Known {
  const names = new Set<string>();
  const entries = new Set<string>();
  for (const entry of entryPoints(root)) {
    entries.add(entry.subpath === "." ? entry.packageName : `${entry.packageName}/${entry.subpath.slice(2)}`);
    for (const line of readList(entry)) names.add(bare(line));
  }
  // The entries that are not code: a stylesheet, package.json.
  for (const folder of readdirSync(join(root, "packages"))) {
    const manifestPath = join(root, "packages", folder, "package.json");
    if (!existsSync(manifestPath)) continue;
    const manifest = JSON.parse(readFileSync(manifestPath, "utf8")) as { name: string; exports?: object };
    for (const subpath of Object.keys(manifest.exports ?? {})) {
      entries.add(subpath === "." ? manifest.name : `${manifest.name}/${subpath.slice(2)}`);
    }
  }
  return { names, entries, moduleNames: moduleExports(root) };
}

/** Docs about the packages' insides, where a module's own names (not entry points' exports) are right too. */
export const internalDocs: ReadonlySet<string> = new Set(["docs/architecture.md", "docs/engine.md"]);

/** Names exported by any module of the packages' sources (tests aside): what the internal docs may name. */
export function moduleExports(root = repositoryRoot): Set<string> {
  const names = new Set<string>();
  const visit = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== "node_modules") visit(path);
      } else if (/\.tsx?$/.test(entry.name) && !/\.test(-d)?\.tsx?$/.test(entry.name)) {
        const text = readFileSync(path, "utf8");
        for (const match of text.matchAll(
          /^export\s+(?:declare\s+)?(?:async\s+)?(?:function\*?|const|let|class|interface|type|enum)\s+([A-Za-z_$][\w$]*)/gm,
        )) {
          names.add(match[1] as string);
        }
      }
    }
  };
  for (const folder of readdirSync(join(root, "packages"))) {
    if (existsSync(join(root, "packages", folder, "src"))) visit(join(root, "packages", folder, "src"));
  }
  return names;
}

/** Whether `name` (`X` or `X.Part`) is an export: itself, or a compound part (`SummaryDivider.Root`). */
function isExported(name: string, exports: ReadonlySet<string>): boolean {
  if (exports.has(name)) return true;
  const [head, part] = name.split(".");
  if (part === undefined) return false;
  // `SummaryDivider.Root`: the namespace, and its part by its long name (`SummaryDividerRoot`).
  return exports.has(head as string) && exports.has(`${head}${part}`);
}

/** Names the docs give as ours that no entry exports, and `@conch/…` entries that no package has. */
export function checkNames(file: string, text: string, known: Known): DocsProblem[] {
  const problems: DocsProblem[] = [];
  const internal = internalDocs.has(file);
  for (const { line, text: content } of proseLines(text)) {
    for (const span of codeSpans(content)) {
      const entry = /^(@conch\/[\w.-]+(?:\/[\w.-]+)*)$/.exec(span)?.[1];
      if (entry !== undefined) {
        if (!known.entries.has(entry)) {
          problems.push({ file, line, rule: "unknown-entry", message: `\`${entry}\` is no package's entry point` });
        }
        continue;
      }
      const name = codeName.exec(span)?.groups?.name;
      if (name === undefined || !looksLikeApi(name)) continue;
      if (isExported(name, known.names) || otherLibraries.has(name) || otherLibraries.has(name.split(".")[0] as string))
        continue;
      if (internal && known.moduleNames.has(name.split(".")[0] as string)) continue;
      problems.push({ file, line, rule: "unknown-name", message: `\`${name}\` is not exported by any entry point` });
    }
  }
  return problems;
}

/** The cells of a table row: split on every `|` not escaped with a backslash (GitHub splits inside backticks too). */
export function tableCells(row: string): string[] {
  const cells = row
    .trim()
    .replace(/^\|/, "")
    .replace(/(?<!\\)\|$/, "")
    .split(/(?<!\\)\|/);
  return cells.map((cell) => cell.trim());
}

/** Rows of a Markdown table with another number of cells than its header. */
export function checkTables(file: string, text: string): DocsProblem[] {
  const problems: DocsProblem[] = [];
  const lines = proseLines(text);
  for (let index = 0; index < lines.length; index++) {
    const header = lines[index] as { line: number; text: string };
    const delimiter = lines[index + 1];
    // A table: a row, then a delimiter row of dashes (with colons) on the very next line.
    if (
      !header.text.trim().startsWith("|") ||
      delimiter === undefined ||
      delimiter.line !== header.line + 1 ||
      !/^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/.test(delimiter.text)
    ) {
      continue;
    }
    const width = tableCells(header.text).length;
    let row = index + 1;
    for (; row < lines.length; row++) {
      const current = lines[row] as { line: number; text: string };
      if (row > index + 1 && current.line !== (lines[row - 1] as { line: number }).line + 1) break;
      if (!current.text.trim().startsWith("|")) break;
      const cells = tableCells(current.text).length;
      if (cells !== width) {
        problems.push({
          file,
          line: current.line,
          rule: "table-cells",
          message: `a row of ${cells} cells in a table of ${width} (escape a \`|\` in a cell as \`\\|\`)`,
        });
      }
    }
    index = row - 1;
  }
  return problems;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped (not `-` or `_`), spaces as `-`. */
export function headingAnchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, "")
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

/** The anchors of a Markdown text's headings, with GitHub's `-1`, `-2` for repeats. */
export function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const { text: content } of proseLines(text)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(content)?.[1];
    if (heading === undefined) continue;
    const anchor = headingAnchor(heading);
    const count = seen.get(anchor) ?? 0;
    anchors.add(count === 0 ? anchor : `${anchor}-${count}`);
    seen.set(anchor, count + 1);
  }
  return anchors;
}

/** Relative links (and images) whose file is missing, or whose `#anchor` is no heading of it. */
export function checkLinks(file: string, text: string, root = repositoryRoot): DocsProblem[] {
  const problems: DocsProblem[] = [];
  const here = resolve(root, file);
  for (const { line, text: content } of proseLines(text)) {
    const withoutCode = content.replace(/(`+).*?\1/g, "");
    for (const match of withoutCode.matchAll(/!?\[[^\]]*\]\((?<target>[^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = match.groups?.target ?? "";
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
      const [path = "", anchor] = target.split("#");
      if (path === "") {
        if (anchor && !anchorsOf(text).has(anchor)) {
          problems.push({ file, line, rule: "dead-link", message: `${target}: no heading #${anchor} on this page` });
        }
        continue;
      }
      const linked = resolve(dirname(here), decodeURIComponent(path));
      const shown = relative(root, linked) || ".";
      if (!existsSync(linked)) {
        problems.push({ file, line, rule: "dead-link", message: `${target}: no file ${shown}` });
        continue;
      }
      if (anchor !== undefined && anchor !== "" && linked.endsWith(".md")) {
        if (!anchorsOf(readFileSync(linked, "utf8")).has(anchor)) {
          problems.push({ file, line, rule: "dead-link", message: `${target}: no heading #${anchor} in ${shown}` });
        }
      }
    }
  }
  return problems;
}

/** Every problem of one Markdown text. */
export function checkDocument(file: string, text: string, known: Known, root = repositoryRoot): DocsProblem[] {
  return [...checkNames(file, text, known), ...checkTables(file, text), ...checkLinks(file, text, root)];
}

/** Every problem of the repository's docs. */
export function checkDocs(root = repositoryRoot): DocsProblem[] {
  const known = knownExports(root);
  return documentationFiles(root).flatMap((file) =>
    checkDocument(file, readFileSync(join(root, file), "utf8"), known, root),
  );
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const problems = checkDocs();
  for (const problem of problems) console.log(`${problem.file}:${problem.line} ${problem.rule}: ${problem.message}`);
  console.log(problems.length === 0 ? "docs check: no problems" : `docs check: ${problems.length} problems`);
  process.exitCode = problems.length === 0 ? 0 : 1;
}

/** A TypeScript sample of the docs: a fenced `ts` or `tsx` block. */
export interface CodeSample {
  /** `README.md › Drop it into your chat`, with `#2` after the second one under one heading. */
  readonly id: string;
  readonly file: string;
  /** The line of its opening fence (1-based). */
  readonly line: number;
  readonly lang: "ts" | "tsx";
  /** Its code, the block's indentation removed. */
  readonly code: string;
  /** It says so on its first lines (`// Fragment: … are yours.`): names it uses are the reader's own. */
  readonly fragment: boolean;
}

/** Every `ts`/`tsx` sample of the docs, in file order. */
export function codeSamples(root = repositoryRoot): CodeSample[] {
  const samples: CodeSample[] = [];
  for (const file of documentationFiles(root)) {
    const lines = readFileSync(join(root, file), "utf8").split("\n");
    let heading = "";
    const perHeading = new Map<string, number>();
    for (let index = 0; index < lines.length; index++) {
      const content = lines[index] as string;
      const opening = /^(\s*)(`{3,})(ts|tsx)\s*$/.exec(content);
      if (!opening) {
        const title = /^#{1,6}\s+(.*?)\s*$/.exec(content)?.[1];
        if (title !== undefined) heading = title;
        // Skip other fenced blocks whole, so that a `# comment` in a shell block is no heading.
        const other = /^\s*(`{3,}|~{3,})/.exec(content)?.[1];
        if (other) while (++index < lines.length && !(lines[index] as string).trim().startsWith(other));
        continue;
      }
      const indent = (opening[1] as string).length;
      const body: string[] = [];
      const start = index;
      while (++index < lines.length && (lines[index] as string).trim() !== opening[2]) {
        body.push((lines[index] as string).slice(indent));
      }
      const count = (perHeading.get(heading) ?? 0) + 1;
      perHeading.set(heading, count);
      const code = `${body.join("\n")}\n`;
      samples.push({
        id: `${file} › ${heading}${count > 1 ? ` #${count}` : ""}`,
        file,
        line: start + 1,
        lang: opening[3] as "ts" | "tsx",
        code,
        fragment: /^(\/\/.*\n)*\/\/ Fragment:/.test(code),
      });
    }
  }
  return samples;
}
