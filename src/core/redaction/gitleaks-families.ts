import type { RedactionRule } from './redaction-rule.js';
import { GITLEAKS_RULES } from './rules/gitleaks-rules.js';

/** Not after a letter, a digit or `+/` (inside base64 data), or right after a JSON escape. */
const START = '(?:(?<![A-Za-z0-9+/])|(?<=\\\\[nrt]))';

/**
 * The standalone token rules of gitleaks (generated into `rules/gitleaks-rules.ts` by
 * scripts/generate-gitleaks-rules.ts), as scanner rules: found from their literal prefixes in
 * any case (the pattern checks the case), not right after a letter or digit, continued through the
 * class of their last run (a longer token is replaced whole), and only when the match is as
 * random as gitleaks asks (its Shannon entropy floor, per character).
 */

/** Shannon entropy in bits per character. */
export function shannonEntropy(text: string): number {
  const counts = new Map<string, number>();
  for (const char of text) counts.set(char, (counts.get(char) ?? 0) + 1);
  let bits = 0;
  for (const count of counts.values()) {
    const share = count / text.length;
    bits -= share * Math.log2(share);
  }
  return bits;
}

export const GITLEAKS_FAMILY_RULES: readonly RedactionRule[] = GITLEAKS_RULES.map((rule) => {
  const floor = rule.entropy;
  return {
    name: rule.name,
    pattern: `${START}${rule.pattern}`,
    triggers: rule.triggers,
    foldTriggers: true,
    ...(rule.extend ? { extend: rule.extend } : {}),
    ...(floor ? { accept: (match: string) => shannonEntropy(match) >= floor } : {}),
  };
});
