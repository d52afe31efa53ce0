// The bodies the protocol accepts (docs/protocol.md), checked with zod before anything reaches an engine.
import { z } from "zod";
import type { WireBranchRequest, WireCompactRequest, WireRenameRequest, WireTurnRequest } from "../protocol/wire.js";
import { chatTitle } from "../transcript/chat-directory.js";

const modelSchema = z.string().min(1).max(200);

const pictureSchema = z.strictObject({
  type: z.literal("picture"),
  name: z.string().max(500),
  mediaType: z.string().min(1).max(200),
  data: z.string().optional(),
  url: z.string().max(8_000).optional(),
});

const toolResultSchema = z.strictObject({
  type: z.literal("tool-result"),
  callId: z.string().min(1).max(500),
  name: z.string().max(500).optional(),
  text: z.string(),
  isError: z.boolean().optional(),
});

export const turnRequestSchema: z.ZodType<WireTurnRequest> = z
  .strictObject({
    seq: z.int().nonnegative(),
    parent: z.int().nonnegative().optional(),
    text: z.string().optional(),
    attachments: z.array(pictureSchema).max(50).optional(),
    toolResults: z.array(toolResultSchema).max(200).optional(),
    retry: z.boolean().optional(),
    continuation: z.boolean().optional(),
    origin: z.enum(["person", "routine", "group"]).optional(),
    untrusted: z.boolean().optional(),
    model: modelSchema.optional(),
  })
  // A regenerate answers a message already in the log: only then may the text be left out.
  .refine((turn) => turn.text !== undefined || turn.retry === true, {
    path: ["text"],
    message: "A turn needs its text (only a retry may leave it out).",
  });

export const branchRequestSchema: z.ZodType<WireBranchRequest> = z.strictObject({
  seq: z.int().nonnegative(),
  model: modelSchema.optional(),
});

export const compactRequestSchema: z.ZodType<WireCompactRequest> = z.strictObject({
  keep: z.string().max(4_000).optional(),
  model: modelSchema.optional(),
});

export const renameRequestSchema: z.ZodType<WireRenameRequest> = z.strictObject({
  title: z
    .string()
    .max(4_000)
    .refine((title) => chatTitle(title) !== null, "A title needs words."),
});

export const emptyRequestSchema: z.ZodType<Record<string, never>> = z.strictObject({});

/** A non-negative integer query parameter, or `fallback` when absent; anything else is a 400. */
export function intParam(url: URL, name: string, fallback: number, max = Number.MAX_SAFE_INTEGER): number {
  const raw = url.searchParams.get(name);
  if (raw === null || raw === "") return fallback;
  if (!/^\d{1,15}$/.test(raw)) return Number.NaN;
  return Math.min(Number(raw), max);
}

/** The `model` query parameter, when present and usable. */
export function modelParam(url: URL): string | undefined {
  const raw = url.searchParams.get("model");
  const parsed = modelSchema.safeParse(raw);
  return parsed.success ? parsed.data : undefined;
}
