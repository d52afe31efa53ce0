import { createUIMessageStreamResponse } from "ai";
import { z } from "zod";
import type { Engine } from "../engine.js";
import { type ProblemAnswer, problem, turnRefusalProblem } from "../server/problems.js";
import { nacreChatMessages } from "./chat-messages.js";
import { checkRetry, NacreChatRefusedError, planNacreTurn } from "./plan-turn.js";
import { runPlannedTurn } from "./transport.js";
import type { NacreUIMessage } from "./ui-message.js";

/** Options of {@link nacreChatResponse}. */
export interface NacreChatResponseOptions {
  readonly engine: Engine;
  readonly chatId: string;
  readonly message: NacreUIMessage;
  /** The seq the page expects the next message at; the engine refuses a stale one (409, as the wire protocol). */
  readonly seq: number;
  readonly trigger?: "submit-message" | "regenerate-message";
  readonly messageId?: string;
  /** The request's signal: `useChat`'s stop aborts the request, and so the turn. */
  readonly signal?: AbortSignal;
}

/**
 * Runs the turn on the server's engine and answers with the UI message stream. A stale seq or a busy chat is
 * the wire protocol's 409 `application/problem+json` (with `nextSeq`), an edit or a dishonest regenerate a 400,
 * all before anything is written.
 */
export async function nacreChatResponse(options: NacreChatResponseOptions): Promise<Response> {
  const { engine, chatId, signal } = options;
  try {
    const plan = planNacreTurn({
      trigger: options.trigger ?? "submit-message",
      messageId: options.messageId,
      message: options.message,
      seq: options.seq,
    });
    if (plan.kind === "retry") await checkRetry(engine, chatId, plan.seq, signal);
    const stream = runPlannedTurn(engine, chatId, plan, signal);
    // Read up to the first chunk, so that a turn refused at its start is a problem response, not a broken stream.
    const reader = stream.getReader();
    const first = await reader.read();
    const rest = new ReadableStream({
      start(controller) {
        if (first.done) controller.close();
        else controller.enqueue(first.value);
      },
      async pull(controller) {
        const next = await reader.read();
        if (next.done) controller.close();
        else controller.enqueue(next.value);
      },
      cancel: (reason) => reader.cancel(reason),
    });
    return createUIMessageStreamResponse({ stream: rest });
  } catch (error) {
    return problemResponse(answerFor(error));
  }
}

/** The body's shape; the message's parts are checked by what reads them. Made when first needed (a page never does). */
const requestBodySchema = () =>
  z.object({
    id: z.string().min(1),
    trigger: z.enum(["submit-message", "regenerate-message"]),
    messageId: z.string().optional(),
    seq: z.number().int().min(0),
    message: z.looseObject({
      id: z.string(),
      role: z.enum(["user", "assistant", "system"]),
      metadata: z.looseObject({ seq: z.number().int().min(0) }).optional(),
      parts: z.array(z.looseObject({ type: z.string() })),
    }),
  });

/**
 * A whole route for `useChat` on a server engine: `POST` runs a turn (the body of {@link nacreSendMessagesRequest}),
 * `GET ?id=` answers `{ messages }` for `useChat`'s first messages, `GET …/{chatId}/stream` 204 (nothing to resume). Mount it after your own sign-in check; the
 * engine's chat ids are the route's.
 */
export function createNacreChatRoute(engine: Engine): (request: Request) => Promise<Response> {
  return async (request) => {
    if (request.method === "GET") {
      const url = new URL(request.url);
      // `DefaultChatTransport.reconnectToStream` asks `{api}/{chatId}/stream`: nothing runs to resume here, since
      // a closed request (a reload, like the stop button) stops its turn; what it wrote is in the loaded chat.
      if (url.pathname.endsWith("/stream")) return new Response(null, { status: 204 });
      const chatId = url.searchParams.get("id");
      if (!chatId) return problemResponse(problem("bad-request", 400, { detail: "Name the chat: ?id=" }));
      try {
        const messages = nacreChatMessages(await engine.loadChat(chatId, { abortSignal: request.signal }));
        return Response.json({ messages }, { headers: { "cache-control": "no-store" } });
      } catch (error) {
        return problemResponse(answerFor(error));
      }
    }
    if (request.method !== "POST")
      return problemResponse(problem("method-not-allowed", 405, {}, { allow: "GET, POST" }));
    let json: unknown;
    try {
      json = await request.json();
    } catch {
      return problemResponse(problem("invalid-json", 400));
    }
    const parsed = requestBodySchema().safeParse(json);
    if (!parsed.success) {
      return problemResponse(
        problem("invalid-body", 400, {
          issues: parsed.error.issues.map((issue) => ({ path: issue.path.join("."), message: issue.message })),
        }),
      );
    }
    const body = parsed.data;
    return nacreChatResponse({
      engine,
      chatId: body.id,
      message: body.message as unknown as NacreUIMessage,
      seq: body.seq,
      trigger: body.trigger,
      ...(body.messageId !== undefined ? { messageId: body.messageId } : {}),
      signal: request.signal,
    });
  };
}

function answerFor(error: unknown): ProblemAnswer {
  const refusal = turnRefusalProblem(error);
  if (refusal) return refusal;
  if (NacreChatRefusedError.isInstance(error)) return problem("bad-request", 400, { detail: error.message });
  throw error;
}

function problemResponse(answer: ProblemAnswer): Response {
  return new Response(JSON.stringify(answer.problem), {
    status: answer.problem.status,
    headers: { ...answer.headers, "content-type": "application/problem+json", "cache-control": "no-store" },
  });
}
