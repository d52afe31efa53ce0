/**
 * The ADR's rule, kept as the baseline: about four ASCII characters a token, one per other code point
 * (`ceil(ascii / 4) + non-ASCII code points`), as measured in test-fixtures/token-corpus/findings.md.
 */
export function adrEstimateTokens(text: string): number {
  let ascii = 0;
  let other = 0;
  for (let index = 0; index < text.length; index++) {
    const unit = text.charCodeAt(index);
    if (unit < 0x80) ascii++;
    else if (unit < 0xdc00 || unit > 0xdfff) other++; // a surrogate pair is one code point
  }
  return Math.ceil(ascii / 4) + other;
}
