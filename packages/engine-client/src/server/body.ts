import type { z } from "zod";
import { fail } from "./problems.js";

/**
 * Reads a JSON body of at most `maxBytes` (an endless or oversized body is cut off and refused with 413, the
 * rest never read), checks its media type, parses it and checks it against `schema` (400 naming each field).
 * An empty body reads as `{}` when `emptyAllowed`.
 */
export async function readJsonBody<T>(
  request: Request,
  schema: z.ZodType<T>,
  options: { readonly maxBytes: number; readonly emptyAllowed?: boolean },
): Promise<T> {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > options.maxBytes) {
    fail("body-too-large", 413, { detail: `At most ${options.maxBytes} bytes.` });
  }
  const bytes = await readLimited(request, options.maxBytes);
  let value: unknown = {};
  if (bytes.length === 0) {
    if (!options.emptyAllowed) fail("invalid-json", 400, { detail: "The body is empty." });
  } else {
    const type = request.headers.get("content-type") ?? "";
    if (!/^application\/([\w.+-]+\+)?json\b/i.test(type)) fail("unsupported-media-type", 415);
    let text: string;
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    } catch {
      fail("invalid-json", 400, { detail: "The body is not UTF-8." });
    }
    try {
      value = JSON.parse(text);
    } catch {
      fail("invalid-json", 400);
    }
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    fail("invalid-body", 400, {
      issues: parsed.error.issues.map((issue) => ({
        path: issue.path.map(String).join(".") || "(body)",
        message: issue.message,
      })),
    });
  }
  return parsed.data;
}

async function readLimited(request: Request, maxBytes: number): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      fail("body-too-large", 413, { detail: `At most ${maxBytes} bytes.` });
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}
