import { z } from 'zod';

/** Small zod building blocks shared by the configuration schemas, with readable messages. */

/** How a bad value is named in a message: `"text"`, `a list`, `nothing`, `12`. */
export function got(input: unknown): string {
  if (typeof input === 'string') return JSON.stringify(input);
  if (input === undefined) return 'nothing';
  if (input === null) return 'null';
  if (Array.isArray(input)) return 'a list';
  if (typeof input === 'object') return 'an object';
  return String(input);
}

export const between = (min: number, max: number, minExclusive = false) => {
  const error = (issue: { input?: unknown }) =>
    issue.input === min && minExclusive
      ? `must be between ${min} and ${max}, and not ${min}`
      : `must be between ${min} and ${max} (got ${got(issue.input)})`;
  return z.number().check(minExclusive ? z.gt(min, { error }) : z.gte(min, { error }), z.lte(max, { error }));
};

export const integer = (min: number) => z.int().gte(min);

export const regexString = z.string().refine(
  (pattern) => {
    try {
      new RegExp(pattern.startsWith('(?i)') ? pattern.slice(4) : pattern);
      return true;
    } catch {
      return false;
    }
  },
  { error: (issue) => `is not a valid regular expression (got ${got(issue.input)})` },
);

export const httpUrl = z.url({
  protocol: /^https?$/,
  error: (issue) => `must be an http(s) URL (got ${got(issue.input)})`,
});
