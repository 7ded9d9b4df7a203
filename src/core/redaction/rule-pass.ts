/** One pass of the redactor's scanned rules over a text (redactor.ts builds its passes with it). */
import type { Steps } from '../time-slice.js';
import { hasUnicodeEscape, redactDecoded } from './find-decoded.js';
import { type HiddenKeyLook, redactHiddenKeys } from './hidden-key-windows.js';
import type { RedactionRule } from './redaction-rules.js';
import { createRuleMatcherSteps } from './redaction-scanner.js';
import { replaceMatch } from './replace-match.js';

/**
 * One scan of `rules` over the text's copy with its JSON escapes decoded (`\u0067hp_...`,
 * `\/`), when it has any, then over the text. The decoded copy goes first: a plain scan stops
 * a key at its first escape (`ops_eyJ...\/...`), and the rest of it no longer has its prefix.
 * `look` is shared by a redactor's passes: a text they all get unchanged is looked at once.
 */
export function* rulePassSteps(
  rules: readonly RedactionRule[],
  look?: HiddenKeyLook,
): Steps<(text: string) => string> {
  const find = yield* createRuleMatcherSteps(rules, replaceMatch);
  // A rope (`+=`) of long stretches and of small pieces joined 64 at a time: text between
  // secrets is never copied, and text dense with secrets (one every few characters) does not
  // make a rope of many thousand small pieces, which the garbage collector walks again and
  // again. The pass's state and its sink are made once, not per text (a redaction is
  // synchronous and the sink calls no redactor): a text without a secret allocates nothing.
  let text = '';
  let out = '';
  const parts: string[] = [];
  let copied = 0;
  const flush = () => {
    if (parts.length > 0) out += parts.join('');
    parts.length = 0;
  };
  const sink = (start: number, end: number, replacement: string) => {
    if (start - copied > 256) {
      flush();
      out += text.slice(copied, start);
    } else if (start > copied) parts.push(text.slice(copied, start));
    parts.push(replacement);
    copied = end;
    if (parts.length >= 64) flush();
  };
  return (input) => {
    // Text without JSON or percent escapes: only windows around an encoded invisible character or
    // a fullwidth key's run are decoded (hidden-key-windows.ts), not the whole text.
    text = hasUnicodeEscape(input) ? redactDecoded(input, find) : redactHiddenKeys(input, find, look);
    out = '';
    parts.length = 0;
    copied = 0;
    try {
      find(text, sink);
      if (copied === 0) return text;
      flush();
      return out + text.slice(copied);
    } finally {
      text = '';
      out = '';
      parts.length = 0;
    }
  };
}
