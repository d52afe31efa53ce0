/**
 * The words of the "too long" concept, by the part they play in a sentence rather than by who says them:
 * a size subject (the prompt, the input, its tokens, the context) near an excess (exceeds, too long, more
 * than, 超过) or a limit (the maximum, the window, a budget, 上限). Near misses are concepts too: use over
 * time, a quota, money, bytes or a picture, a content policy, and the output cap (`max_tokens`) as the thing
 * that is over. Each list carries English and the languages providers answer in (Chinese, Japanese, Korean,
 * Spanish, French, German, Russian, Portuguese); a language's words join its list, never a sentence.
 */

/** The numbers a refusal may name. */
export interface RefusalNumbers {
  window?: number | undefined;
  inputTokens?: number | undefined;
  outputTokens?: number | undefined;
}

/** Joins alternatives into one case-insensitive, Unicode-aware expression. */
function words(alternatives: readonly string[], flags = "iu"): RegExp {
  return new RegExp(`(?:${alternatives.join("|")})`, flags);
}
// An English word's edges (CJK words have none).
const b = String.raw`(?<![\p{L}\p{N}])`;
const e = String.raw`(?![\p{L}\p{N}])`;
// A field's name in a JSON or Python body (`"message":`, `'input':`) is not the word it spells.
const notAKey = String.raw`(?!["'\x60]?\s*[:=])`;

/**
 * A count as providers print it: 131072, 131,072, 131 072, 131.072, 131_072, 128k, 1.5M. Never part of a
 * longer number, a version, a negative or a name.
 */
export const countPattern = String.raw`(?<![\p{L}\p{N}.,\-_])(\d{1,3}(?:[,.\u00a0\u202f _]\d{3})+(?![\d.,]\d)|\d+(?:\.\d+)?\s?[kKmM](?![A-Za-z\p{N}])|\d+)(?![\p{N}])`;

export function toCount(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const scaled = /^(\d+(?:\.\d+)?)\s?([kKmM])$/.exec(text);
  const value = scaled
    ? Math.round(Number(scaled[1]) * (/k/i.test(scaled[2] ?? "") ? 1000 : 1_000_000))
    : Number.parseInt(text.replace(/[,.\u00a0\u202f _]/g, ""), 10);
  return Number.isSafeInteger(value) && value > 0 ? value : undefined;
}

/**
 * What can be too long, and the model's own size (`model max length exceeded`: what exceeds it goes
 * without saying). "Strong" subjects are about size by themselves; a bare "request" is not (a request
 * may be too large in bytes), so it counts only beside a strong one.
 */
export const sizeSubject = words([
  `${b}(?:tokens?|token count|context|prompts?|inputs?|messages?|conversation|sequence|decoder prompt|chat history|n ctx|n keep|n prompt tokens|max model len|model (?:max(?:imum)? )?length|max(?:imum)? model length|token limit)${e}${notAKey}`,
  "上下文|输入|輸入|提示词|提示|令牌|对话|對話|消息|文本|字数",
  "トークン|コンテキスト|入力|プロンプト|メッセージ|会話",
  "토큰|컨텍스트|입력|프롬프트|메시지|대화",
  `${b}(?:contexto|entrada|mensajes?|mensage(?:m|ns)|conversaci[oó]n|conversa|contexte|entr[ée]e|jetons?|invite|kontext|eingabe|nachrichte?n?|токен\\p{L}*|контекст\\p{L}*|ввод\\p{L}*|сообщени\\p{L}*|промпт\\p{L}*|диалог\\p{L}*)${e}`,
]);

/** Saying it is over: exceeds, too long, more than, overflows, `>`, 超过, 超え, 초과, dépasse, превышает. */
export const excessWord = words([
  `${b}(?:exceed\\w*|too (?:long|large|big|many)|more than|(?:larger|greater(?! than or equal)|longer|bigger) than|over the|is over|beyond|overflow\\w*|out of room|not enough|(?:cannot|can't|unable to) (?:be )?truncate\\w*|truncat(?:ing|ed))${e}`,
  `${b}(?:reduce|shorten|compress|trim)${e}[^.|]{0,20}${b}(?:length|size|context|input|prompt|messages?)${e}`,
  String.raw`(?<=[\p{N})]\s*)(?:>=?|≥)(?=\s*(?:[\p{N}(]|n ctx))`,
  "超过|超出|過長|过长|超长|超長|太长|太長|过多|太多|过大|超限|溢出|压缩|壓縮|缩短|不足",
  "超え|超過|長すぎ|多すぎ|大きすぎ|オーバー|上回",
  "초과|너무 길|너무 많|너무 큽|넘었|넘습|넘어",
  `${b}(?:exced\\w*|excède\\w*|supera\\w*|sobrepasa\\w*|ultrapass\\w*|demasiado|muito (?:longo|grande)|m[aá]s (?:largo|grande)|maior (?:do )?que|d[ée]pass\\w*|trop|überschreit\\w*|überschritten|übersteig\\w*|zu (?:lang|groß|viele)|(?:größer|länger) als|превыша\\p{L}*|превышен\\p{L}*|слишком|больше|превосход\\p{L}*)${e}`,
]);

/** Naming the bound: the limit, the maximum, the window, a budget, `<=`, `[1, N]`, 上限, 最大, 한도, límite. */
export const limitWord = words([
  `${b}(?:limits?|maximum|max|budget|window|capacity|at most|less than|no more than|context (?:length|size)|n ctx|max model len)${e}`,
  String.raw`<=|≤|\[\s*[01]\s*,\s*\d`,
  "上限|限制|最大|最长|最長|窗口|允许|允許|範囲|范围",
  "制限|許容",
  "한도|최대|제한|허용",
  `${b}(?:l[ií]mite\\w*|m[aá]xim[oa]s?|maximale?|permitid[oa]|autoris[ée]e?|\\p{L}*grenze|\\p{L}+limit|höchst\\w*|maximal\\w*|лимит\\p{L}*|максим\\p{L}*|предел\\p{L}*|допустим\\p{L}*)${e}`,
]);

/**
 * Another limit in the same sentence: use over time, a quota or plan, money, bytes or a picture, a content
 * policy. A sentence with one of these is not about the request's size in tokens.
 */
export const otherLimitInSentence = words([
  `${b}(?:rate(?:[ _-]?limit\\w*)?|per (?:sec(?:ond)?|min(?:ute)?|hour|day|month)|tpm|rpm|tpd|rpd|itpm|otpm|time frame|within a given time|(?:hourly|daily|weekly|monthly|session) (?:usage )?limit|usage limit|try again later|throttl\\w*|quota\\w*|plan|billing|credits?|balance|spend\\w*|bytes?|[kmg]i?b|pixels?|images?|dimensions?|file size|body size|payload|content (?:management )?polic\\w*|content filter\\w*|safety|moderation|concurren\\w*|requests)${e}`,
  String.raw`\d+\s*/\s*min`,
  "速率|频率|頻率|每分钟|每分鐘|每小时|每天|配额|配額|额度|余额|餘額|计费|账单|并发|图片|圖片|内容安全|敏感",
  "レート|毎分|クォータ|課金|画像|同時",
  "분당|할당량|요금|이미지|동시",
  `${b}(?:por minuto|cuota|facturaci[oó]n|cr[eé]ditos?|par minute|quotas?|facturation|pro minute|kontingent|abrechnung|в минуту|квот\\p{L}*|баланс\\p{L}*|por minuto|cota)${e}`,
]);

/**
 * Use over time anywhere in the body: a throttle, a wait, a quota. Beside it, a sentence that only says
 * "too many tokens" or "reduce the prompt length" is about the throttle (Bedrock's `Too many tokens, please
 * wait before trying again`, Anthropic's rate-limit advice); it stays "too long" only when it names the
 * context or window, or a number as the limit.
 */
export const throttleAnywhere = words([
  `${b}(?:rate[ _-]?limit\\w*|ratelimit\\w*|rate limited|per (?:sec(?:ond)?|min(?:ute)?|hour|day)|tpm|rpm|tpd|throttl\\w*|wait\\w*|try(?:ing)? again (?:later|in)|retry (?:after|in)|quotas?|usage limit|too many requests|concurren\\w*)${e}`,
  "限流|频率|頻率|稍后|配额|配額|レート|しばらく|잠시 후|할당량",
]);

/** Naming the context or the window itself: what makes a "too long" sentence outweigh a throttle's words. */
export const contextWord = words([
  `${b}(?:context|window|n ctx|model (?:max(?:imum)? )?length|max(?:imum)? model length|max model len|contexto|contexte|kontext\\p{L}*|контекст\\p{L}*)${e}`,
  "上下文|コンテキスト|컨텍스트",
]);

/**
 * The output reservation as a parameter: when it is what is over (`max_tokens is too large`, `max_tokens:
 * 10000 > 4096`, `the valid range of max_tokens is [1, 8192]`), lowering it fixes the request, folding
 * cannot. It is replaced by one marker before a sentence is read, so that its own words (`max`, `tokens`)
 * do not read as the subject or the limit.
 */
export const outputCapParameter =
  /[`'"]?\b(?:max_tokens|max_completion_tokens|max_new_tokens|max_output_tokens|maxOutputTokens|max_gen_len|maxTokens|num_predict|(?:the )?max(?:imum)? tokens you requested|completion tokens|output tokens)\b[`'"]?/gi;
export const outputCapMarker = "\u0001OUTPUTCAP\u0001";

/**
 * Refusals that are never "too long", wherever they sit in the body: money and key spend (a limit on what
 * the account may use, however it is worded).
 */
export const moneyLimitAnywhere =
  /more credits|can only afford|insufficient[_ ](?:credits|balance|quota)|credit balance|(?:monthly|daily|weekly) (?:spend(?:ing)? )?limit|spend limit|settings\/keys|余额不足|額度不足|额度不足|残高/i;

/** A per-minute limit and this request's size: `Limit 30000, Requested 30601` (OpenAI, Groq). */
export const perMinuteLimit =
  /(?:tokens per min(?:ute)?|\bTPM\b)[^|]{0,80}?\bLimit:?\s*(\d[\d,]*)[^|]{0,40}?\bRequested:?\s*(\d[\d,]*)/i;

/**
 * The role of the words before a number, nearest first: a limit names the window, a request names what
 * was sent, and some name neither (`by N tokens` is the excess, `n_ctx_train` the model's training length,
 * `code`/`status` an error code).
 */
export type NumberRole = "limit" | "request" | "neither";
export const roleWords: readonly { readonly role: NumberRole | "request-noun"; readonly pattern: RegExp }[] = [
  {
    role: "neither",
    pattern: words([
      `${b}(?:by|n ctx train|train\\w*|code|status|error|errno|draft tokens|retry|seconds?|ms|id|version|v\\d)${e}`,
    ]),
  },
  {
    role: "request",
    pattern: words([
      `${b}(?:token count|current length|current|requested|resulted in|contains|has|have|given|got|actual|used|sent|keep|n keep|n prompt tokens)${e}`,
      "当前|实际|現在|현재|solicitad[oa]|actual|demand[ée]|angefragt|запрошен\\p{L}*|текущ\\p{L}*",
    ]),
  },
  {
    // Nouns of the request: they decide only when no verb or limit word stands nearer (`The input (N tokens)`).
    role: "request-noun",
    pattern: words([
      `${b}(?:request|prompt|input|inputs|messages|tokens|input length|prompt length)${e}`,
      "请求|输入|リクエスト|入力|요청|입력|solicitud|entrada|requête|entrée|anfrage|eingabe|запрос\\p{L}*|ввод\\p{L}*",
    ]),
  },
  {
    role: "limit",
    pattern: words([
      `${b}(?:limits?|maximum|max|budget|window|capacity|allowed|at most|less than|no more than|up to|context (?:length|size|window)|model length|max length|allowed length|n ctx|max model len|only)${e}`,
      String.raw`<=|≤|>=?|\[\s*[01]\s*,`,
      "上限|限制|最大|最长|最長|窗口|允许|允許|上下文长度|上下文窗口|制限|許容|コンテキスト長|한도|최대|제한|허용",
      `${b}(?:l[ií]mite\\w*|m[aá]xim[oa]s?|maximale?|permitid[oa]|autoris[ée]e?|\\p{L}*grenze|\\p{L}+limit|höchst\\w*|maximal\\w*|лимит\\p{L}*|максим\\p{L}*|предел\\p{L}*|допустим\\p{L}*)${e}`,
    ]),
  },
];

/** Words that name the size of tokens or the context, which a bare `(N)` after a limit needs beside it. */
export const tokenUnit = words([
  `${b}(?:tokens?|context|length|allowed|window|budget|n ctx)${e}`,
  "令牌|トークン|토큰|токен\\p{L}*|上下文|コンテキスト|컨텍스트",
]);

interface NumberReader {
  readonly pattern: RegExp;
  readonly read: (match: RegExpMatchArray) => RefusalNumbers;
}

const N = String.raw`(\d{1,3}(?:[,_]\d{3})+|\d+)`;
const Q = "[`'\"]?";

const termPattern = new RegExp(String.raw`${N}\s+(?:in|of)\s+(?:the\s+)?([a-z ]+)`, "i");

/** `(64 in the messages, 730 in the functions, and 800 in the completion)`: prompt terms and output terms. */
function readTerms(terms: string): RefusalNumbers {
  let input: number | undefined;
  let output: number | undefined;
  for (const term of terms.split(/,|\band\b/)) {
    const match = termPattern.exec(term.trim());
    const count = toCount(match?.[1]);
    const label = match?.[2];
    if (count === undefined || label === undefined) continue;
    if (/completion|output/i.test(label)) output = (output ?? 0) + count;
    else input = (input ?? 0) + count;
  }
  return { inputTokens: input, outputTokens: output };
}

/**
 * What the request held, when the refusal splits it into prompt and output (the cause depends on it).
 * The window itself is read by role (`readWindow` in recognise-too-long.ts), never here.
 */
export const requestReaders: readonly NumberReader[] = [
  // `input + max_tokens > window`: `199759 + 8192 > 200000`.
  {
    pattern: new RegExp(String.raw`${N}\s*\+\s*${N}\s*>=?\s*${N}`, "i"),
    read: (match) => ({ inputTokens: toCount(match[1]), outputTokens: toCount(match[2]) }),
  },
  // `A tokens > B maximum`, `(15028) >= n_ctx (7424)`: the left side is what was sent.
  {
    pattern: new RegExp(String.raw`${N}\s*(?:tokens?\s*)?\)?\s*>=?\s*(?:n_ctx\W*)?\(?${N}`, "i"),
    read: (match) => ({ inputTokens: toCount(match[1]) }),
  },
  {
    pattern: new RegExp(`you requested (?:about |a total of )?${N} tokens ?[(:]([^)|]*)`, "i"),
    read: (match) => readTerms(match[2] ?? ""),
  },
  {
    pattern: new RegExp(`${N} tokens from the input messages and ${N} tokens for the completion`, "i"),
    read: (match) => ({ inputTokens: toCount(match[1]), outputTokens: toCount(match[2]) }),
  },
  {
    pattern: new RegExp(`request has ${N} input tokens(?: plus ${N} ${Q}max_tokens)?`, "i"),
    read: (match) => ({ inputTokens: toCount(match[1]), outputTokens: toCount(match[2]) }),
  },
  {
    pattern: new RegExp(
      String.raw`Given: ${N} ${Q}inputs${Q} tokens and ${N} ${Q}max_new_tokens|(?<![\w])n_prompt_tokens${Q}\s*[:=]\s*${N}`,
      "i",
    ),
    read: (match) => ({ inputTokens: toCount(match[1] ?? match[3]), outputTokens: toCount(match[2]) }),
  },
  {
    pattern: new RegExp(
      String.raw`(?:resulted in|request contains|Prompt contains|token count of|token count \(|Requested tokens \(|request \(|input \(|Input length \(|prompt \(length |prompt=|requested:|n_keep:?)\s*${N}`,
      "i",
    ),
    read: (match) => ({ inputTokens: toCount(match[1]) }),
  },
];
