import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { recogniseTooLong } from "./recognise-too-long.js";

/** One collected near miss (`test-fixtures/refusals/README.md` says where each comes from). */
interface NearMiss {
  readonly id: string;
  readonly provider: string;
  readonly family: string;
  readonly status: number | null;
  readonly body: string;
  readonly source: string;
}

const nearMisses = JSON.parse(
  readFileSync(new URL("../../../../test-fixtures/refusals/near-misses.json", import.meta.url), "utf8"),
) as NearMiss[];

// --- Generated "too long" refusals: a subject, a predicate with its object, a number, an envelope. ---

type Language = "en" | "zh" | "ja" | "ko" | "es" | "fr" | "de" | "ru" | "pt";

const subjects: Record<Language, readonly string[]> = {
  en: ["The prompt", "Your input", "The request", "This conversation", "The messages", "Input tokens", "The context"],
  zh: ["输入", "上下文", "提示词", "输入的令牌数"],
  ja: ["入力トークン数", "プロンプト", "コンテキスト"],
  ko: ["입력 토큰", "프롬프트", "컨텍스트"],
  es: ["La entrada", "El contexto", "El número de tokens"],
  fr: ["L'entrée", "Le contexte", "Le nombre de jetons"],
  de: ["Die Eingabe", "Der Kontext", "Die Anzahl der Token"],
  ru: ["Количество токенов", "Контекст", "Ввод"],
  pt: ["A entrada", "O contexto", "O número de tokens"],
};

/** Predicates with their object; `{W}` is the window, `{A}` what was sent. The number sits in either order. */
const predicates: Record<Language, readonly string[]> = {
  en: [
    "exceeds the maximum context length of {W} tokens",
    "is longer than the model's context window ({W} tokens)",
    "is too long: {A} tokens > {W} maximum",
    "has more than the {W} tokens allowed",
    "exceeds budget ({W} tokens)",
    "is too large for a model with {W} maximum context length",
    "({A} tokens) exceeds the available context size ({W} tokens)",
    "overflows the context window: limit is {W}, got {A}",
    "must have less than {W} tokens",
    "is over the token limit: {W}",
  ],
  zh: ["超过最大上下文长度 {W}", "过长，上限为 {W} 个令牌", "超出限制（最大 {W}）"],
  ja: ["が上限（{W}）を超えています", "が最大コンテキスト長 {W} トークンを超えました"],
  ko: ["이(가) 최대 컨텍스트 길이 {W}를 초과했습니다", "한도 {W} 토큰을 초과했습니다"],
  es: ["excede el límite de {W} tokens", "supera el máximo de {W} tokens del contexto"],
  fr: ["dépasse la limite de {W} jetons", "est trop long : le maximum est {W}"],
  de: ["überschreitet das Limit von {W} Token", "ist zu lang, maximal {W} Token erlaubt"],
  ru: ["превышает максимум {W} токенов", "превышает лимит {W}"],
  pt: ["excede o limite de {W} tokens", "ultrapassa o máximo de {W} tokens"],
};

/** Bare sentences with no number, from the families that name no window. */
const bare: readonly string[] = [
  "Maximum context length exceeded",
  "context_length_exceeded",
  "ContextWindowExceededError",
  "上下文过长",
  "请压缩上下文后重试",
  "Prompt exceeds max length",
  "Please reduce the length of the messages or completion.",
  "Too many tokens in the prompt: the model's context window overflows",
];

const windows = [2048, 4096, 8000, 8192, 16384, 32000, 32768, 65536, 128000, 131072, 200000, 1048576];

/** The ways providers print a count: 131072, 131,072, 131 072 (a narrow space too), 131.072, 128k. */
function printed(count: number, style: number): string {
  const grouped = (separator: string) => count.toString().replace(/\B(?=(\d{3})+(?!\d))/g, separator);
  switch (style) {
    case 1:
      return grouped(",");
    case 2:
      return grouped(" ");
    case 3:
      return grouped("\u202f");
    case 4:
      return grouped(".");
    case 5:
      return count % 1000 === 0 ? `${count / 1000}k` : count.toString();
    default:
      return count.toString();
  }
}

/** The envelopes a refusal travels in: bare, a vendor's JSON, an SDK's repr, a gateway relaying another JSON. */
const envelopes: readonly ((message: string) => string)[] = [
  (message) => message,
  (message) => JSON.stringify({ error: { message, type: "invalid_request_error", code: null } }),
  (message) => JSON.stringify({ type: "error", error: { type: "invalid_request_error", message } }),
  (message) => JSON.stringify({ error: { code: 400, message, status: "INVALID_ARGUMENT" } }),
  (message) =>
    `litellm.BadRequestError: OpenAIException - Error code: 400 - {'error': {'message': ${JSON.stringify(message)}}}`,
  (message) =>
    JSON.stringify({
      error: {
        message: "Provider returned error",
        code: 400,
        metadata: { raw: JSON.stringify({ error: { message } }) },
      },
    }),
  (message) => `Error: 400 ${JSON.stringify({ detail: JSON.stringify({ object: "error", message }) })}`,
];

const languages = Object.keys(subjects) as Language[];

const tooLongBody = fc
  .record({
    language: fc.constantFrom(...languages),
    subjectIndex: fc.nat(),
    predicateIndex: fc.nat(),
    window: fc.constantFrom(...windows),
    over: fc.integer({ min: 1, max: 90_000 }),
    style: fc.integer({ min: 0, max: 5 }),
    envelope: fc.integer({ min: 0, max: envelopes.length - 1 }),
  })
  .map(({ language, subjectIndex, predicateIndex, window, over, style, envelope }) => {
    const subject = subjects[language][subjectIndex % subjects[language].length] ?? "";
    const predicate = predicates[language][predicateIndex % predicates[language].length] ?? "";
    const sentence = `${subject} ${predicate}`
      .replace("{W}", printed(window, style))
      .replace("{A}", printed(window + over, style === 5 ? 0 : style));
    return { body: envelopes[envelope]?.(`${sentence}.`) ?? sentence, window };
  });

// --- Generated near misses: the same envelopes around another kind of limit. ---

const nearMissSentences: readonly ((numbers: { limit: number; used: number; asked: number }) => string)[] = [
  ({ limit, used, asked }) =>
    `Rate limit reached for model on tokens per minute (TPM): Limit ${limit}, Used ${used}, Requested ${asked}. Please try again in 2s.`,
  ({ limit }) =>
    `This request would exceed the rate limit for your organization of ${printed(limit, 1)} input tokens per minute.`,
  () => "You exceeded your current quota, please check your plan and billing details.",
  ({ limit, asked }) =>
    `max_tokens is too large: ${asked + limit}. This model supports at most ${limit} completion tokens.`,
  ({ limit, asked }) => `max_tokens: ${asked + limit} > ${limit}, which is the maximum allowed number of output tokens`,
  ({ limit }) => `The maximum tokens you requested exceeds the model limit of ${limit}`,
  ({ limit }) => `Invalid max_tokens value, the valid range of max_tokens is [1, ${limit}]`,
  () => "Output blocked by content filtering policy",
  () => "Too many tokens, please wait before trying again.",
  () => "Request exceeds the maximum size",
  ({ asked }) => `image exceeds 5 MB maximum: ${asked + 5242880} bytes > 5242880 bytes`,
  ({ limit }) => `Maximum request body size ${limit} exceeded`,
  () => "请求频率超过限制，请稍后重试",
  () => "余额不足或无可用资源包,请充值。",
  () => "レート制限を超えました。しばらくしてから再試行してください。",
  () => "분당 요청 한도를 초과했습니다",
  () => "Se ha excedido el límite de solicitudes por minuto",
  () => "Превышен лимит запросов в минуту",
  ({ limit }) => `Quota exceeded for metric: generate_content_free_tier_input_token_count, limit: ${limit}`,
  ({ limit }) => `you have reached your weekly usage limit of ${limit} tokens, please wait or upgrade to continue`,
];

const nearMissBody = fc
  .record({
    sentence: fc.integer({ min: 0, max: nearMissSentences.length - 1 }),
    limit: fc.constantFrom(...windows),
    usedShare: fc.double({ min: 0, max: 0.99, noNaN: true }),
    envelope: fc.integer({ min: 0, max: envelopes.length - 1 }),
    status: fc.constantFrom(400, 413, 422, 429, 200, null),
  })
  .map(({ sentence, limit, usedShare, envelope, status }) => {
    const used = Math.floor(limit * usedShare);
    // What one request asks stays within the per-minute limit: one request over it can never pass as sent
    // and heals like "too long" (tested in recognise-too-long.test.ts).
    const asked = Math.max(1, Math.floor((limit - used) / 2));
    const text = nearMissSentences[sentence]?.({ limit, used, asked }) ?? "";
    return { body: envelopes[envelope]?.(text) ?? text, status };
  });

describe("recogniseTooLong by concept", () => {
  it("should recognise generated refusals in nine languages and seven envelopes, with the window they name", () => {
    fc.assert(
      fc.property(tooLongBody, ({ body, window }) => {
        expect(recogniseTooLong("a-gateway-nobody-knows", 400, body)).toMatchObject({ window });
      }),
      { numRuns: 600 },
    );
  });

  it("should recognise the bare wordings that name no window, in every envelope", () => {
    fc.assert(
      fc.property(fc.constantFrom(...bare), fc.integer({ min: 0, max: envelopes.length - 1 }), (sentence, envelope) => {
        expect(recogniseTooLong("a-gateway-nobody-knows", 400, envelopes[envelope]?.(sentence))).not.toBeNull();
      }),
      { numRuns: 200 },
    );
  });

  it("should recognise none of the generated near misses, whatever the status", () => {
    fc.assert(
      fc.property(nearMissBody, ({ body, status }) => {
        expect(recogniseTooLong("a-gateway-nobody-knows", status, body)).toBeNull();
      }),
      { numRuns: 600 },
    );
  });

  describe("given the collected near misses (test-fixtures/refusals/near-misses.json)", () => {
    it("should hold at least 30 bodies from at least 8 providers, each with its source", () => {
      expect(nearMisses.length).toBeGreaterThanOrEqual(30);
      expect(new Set(nearMisses.map((entry) => entry.provider)).size).toBeGreaterThanOrEqual(8);
      for (const entry of nearMisses) expect(entry.source, entry.id).not.toBe("");
    });

    it("should recognise none of them, with their own status or with a plain 400 (by the words alone)", () => {
      const fired = nearMisses.filter(
        (entry) =>
          recogniseTooLong(entry.provider, entry.status, entry.body) !== null ||
          recogniseTooLong("a-gateway-nobody-knows", 400, entry.body) !== null,
      );
      expect(fired.map((entry) => entry.id)).toEqual([]);
    });
  });

  describe("given the wordings the issue names", () => {
    it.each([
      ["a number in parentheses", "prompt tokens (15028) >= n_ctx (7424)", 7424],
      ["a budget", "Input exceeds budget (32,000 tokens)", 32000],
      ["a German compound", "Die Eingabe überschreitet das Kontextlimit von 32k Token", 32000],
      ["a Japanese full-width bracket", "入力トークン数が上限（128,000）を超えています", 128000],
      ["a Chinese limit", '{"error":{"message":"输入长度超过最大限制 32768"}}', 32768],
    ] as const)("should read %s", (_name, body, window) => {
      expect(recogniseTooLong("openai-compatible", 400, body)).toMatchObject({ window });
    });

    it.each([
      "The prompt has more than max tokens allowed",
      "too many tokens in request: size limit exceeded by 1200",
      "Maximum context length",
      "上下文过长",
      "请压缩上下文后重试",
    ])("should recognise %j without a window", (body) => {
      expect(recogniseTooLong("openai-compatible", 400, body)).toEqual({ cause: "input" });
    });

    it("should not read an error code in parentheses as the window (MiniMax: `exceeds limit (2013)`)", () => {
      expect(recogniseTooLong("minimax", 400, "invalid params, context window exceeds limit (2013)")).toEqual({
        cause: "input",
      });
    });
  });
});
