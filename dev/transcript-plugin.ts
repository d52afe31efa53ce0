import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Plugin } from "vite";

/** One recorded conversation (the JSONL format of `test-fixtures/chats`), as the demo needs it. */
export interface DemoTranscript {
  readonly id: string;
  readonly title: string;
  readonly source: string;
  readonly licence: string;
  readonly messages: ReadonlyArray<{ readonly role: "user" | "assistant" | "tool"; readonly content: string }>;
}

const virtualId = "virtual:demo-transcript";
const resolvedId = `\0${virtualId}`;

/**
 * The folder of recorded chats the demo reads: the project's `test-fixtures/chats` (its README names their source
 * and licence), the same chats the tests replay; `NACRE_CONVERSATIONS_DIR` points it elsewhere.
 */
export function conversationsDir(repoRoot: string): string {
  return process.env.NACRE_CONVERSATIONS_DIR ?? resolve(repoRoot, "test-fixtures", "chats");
}

/** Reads one conversation from a JSONL file at dev-server time; null when the data is not there. */
export function readTranscript(dir: string, file: string, id: string): DemoTranscript | null {
  const path = join(dir, file);
  if (!existsSync(path)) return null;
  for (const line of readFileSync(path, "utf8").split("\n")) {
    if (!line.includes(`"id": "${id}"`) && !line.includes(`"id":"${id}"`)) continue;
    const record = JSON.parse(line) as {
      id: string;
      source: string;
      licence: string;
      meta?: { title?: string };
      messages: Array<{ role: string; content: string }>;
    };
    return {
      id: record.id,
      title: record.meta?.title ?? record.id,
      source: record.source,
      licence: record.licence,
      messages: record.messages
        .filter((message) => message.role === "user" || message.role === "assistant" || message.role === "tool")
        .map((message) => ({ role: message.role as "user" | "assistant" | "tool", content: message.content })),
    };
  }
  return null;
}

/**
 * `import transcript from "virtual:demo-transcript"`: one real chat, read from `test-fixtures/chats` when the dev server
 * starts; `null` when it is not there (the page then generates a chat).
 */
export function demoTranscriptPlugin(options: { repoRoot: string; file: string; id: string }): Plugin {
  return {
    name: "nacre-demo-transcript",
    resolveId(id) {
      return id === virtualId ? resolvedId : undefined;
    },
    load(id) {
      if (id !== resolvedId) return undefined;
      const dir = conversationsDir(options.repoRoot);
      const transcript = readTranscript(dir, options.file, options.id);
      if (!transcript)
        this.warn(`No transcript ${options.id} in ${join(dir, options.file)}; the demo uses a generated chat.`);
      return `export default ${JSON.stringify(transcript)};`;
    },
  };
}
