import type { z } from 'zod';
import type { CompactIssue } from '../core/errors.js';

/** Edit distance between two strings (insertions, deletions, substitutions). */
export function levenshtein(a: string, b: string): number {
  if (a === b) return 0;
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
    }
    previous = current;
  }
  return previous[b.length]!;
}

/** The candidate closest to `input`, when it is close enough to be a likely typo. */
export function closestMatch(input: string, candidates: readonly string[]): string | undefined {
  const normalized = input.toLowerCase().replaceAll('-', '_');
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    const distance = levenshtein(normalized, candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  const tolerance = Math.max(2, Math.floor(input.length / 3));
  return bestDistance <= tolerance ? best : undefined;
}

type AnySchema = z.core.$ZodType;

const WRAPPERS = new Set(['default', 'prefault', 'optional', 'nullable', 'readonly', 'catch', 'nonoptional']);

/** Strips defaults, optionals and pipes off a schema. */
export function unwrapSchema(schema: AnySchema): AnySchema {
  let current = schema;
  for (;;) {
    const def = current._zod.def as { type: string; innerType?: AnySchema; in?: AnySchema };
    if (WRAPPERS.has(def.type) && def.innerType) current = def.innerType;
    else if (def.type === 'pipe' && def.in) current = def.in;
    else return current;
  }
}

/** The keys of the object schema at `path`, or `undefined` when it is not an object. */
export function objectKeysAt(schema: AnySchema, path: readonly PropertyKey[]): string[] | undefined {
  let current = unwrapSchema(schema);
  for (const key of path) {
    const def = current._zod.def as { type: string; shape?: Record<string, AnySchema> };
    const next = def.type === 'object' ? def.shape?.[String(key)] : undefined;
    if (!next) return undefined;
    current = unwrapSchema(next);
  }
  const def = current._zod.def as { type: string; shape?: Record<string, AnySchema> };
  return def.type === 'object' && def.shape ? Object.keys(def.shape) : undefined;
}

/** Every key path of the object schema, e.g. `['policy', 'trigger_pct']`. */
export function allKeyPaths(schema: AnySchema, prefix: string[] = []): string[][] {
  const keys = objectKeysAt(schema, prefix) ?? [];
  return keys.flatMap((key) => {
    const path = [...prefix, key];
    const nested = objectKeysAt(schema, path);
    return nested ? [path, ...allKeyPaths(schema, path)] : [path];
  });
}

function describeInput(input: unknown): string {
  if (typeof input === 'string') return JSON.stringify(input);
  if (input === undefined) return 'nothing';
  if (input === null) return 'null';
  if (Array.isArray(input)) return 'a list';
  if (typeof input === 'object') return 'a mapping';
  return String(input);
}

const EXPECTED: Record<string, string> = {
  number: 'a number',
  int: 'an integer',
  string: 'a string',
  boolean: 'true or false',
  array: 'a list',
  object: 'a mapping of keys to values',
};

/**
 * The error map used when parsing a config: turns zod's raw issues into short sentences
 * that read after the field path (`must be an integer >= 1 (got 0)`).
 */
export function configErrorMap(issue: z.core.$ZodRawIssue): string | undefined {
  const input = describeInput(issue.input);
  switch (issue.code) {
    case 'invalid_type': {
      const format = (issue.inst as { _zod?: { def?: { format?: string } } } | undefined)?._zod?.def?.format;
      const expected = format?.includes('int') ? 'int' : String(issue.expected);
      return `must be ${EXPECTED[expected] ?? expected} (got ${input})`;
    }
    case 'invalid_value': {
      const values = (issue.values as unknown[]).map((value) => JSON.stringify(value));
      if (values.length === 1) return `must be ${values[0]} (got ${input})`;
      const near =
        typeof issue.input === 'string'
          ? closestMatch(
              issue.input,
              (issue.values as unknown[]).filter((value): value is string => typeof value === 'string'),
            )
          : undefined;
      const hint = near === undefined ? '' : ` (did you mean "${near}"?)`;
      return `must be one of ${values.join(', ')} (got ${input})${hint}`;
    }
    case 'too_small':
    case 'too_big': {
      const small = issue.code === 'too_small';
      const bound = small ? issue.minimum : issue.maximum;
      const inclusive = issue.inclusive !== false;
      if (issue.origin === 'string' && small && Number(bound) === 1) return 'must not be empty';
      if (issue.origin === 'array') return `must have ${small ? 'at least' : 'at most'} ${bound} items`;
      if (issue.origin === 'string') return `must be ${small ? 'at least' : 'at most'} ${bound} characters`;
      const operator = small ? (inclusive ? '>=' : '>') : inclusive ? '<=' : '<';
      const kind = issue.origin === 'int' || Number.isInteger(issue.input) ? 'an integer' : 'a number';
      return `must be ${kind} ${operator} ${bound} (got ${input})`;
    }
    case 'invalid_format':
      return `must be a valid ${issue.format} (got ${input})`;
    default:
      return undefined;
  }
}

/** Options of {@link toCompactIssues}. */
export interface ToCompactIssuesOptions {
  /** The schema the input was parsed with (to suggest keys). */
  schema: AnySchema;
  /** Dotted paths set from environment variables, and which variable set each one. */
  origins?: ReadonlyMap<string, string>;
}

/** One issue rendered as a sentence: `policy.trigger_pct must be between 0 and 1 (got 2)`. */
export function formatIssue(issue: CompactIssue): string {
  const path = issue.path.length === 0 ? '(root)' : formatPath(issue.path);
  return `${path} ${issue.message}`;
}

/** `['redaction', 'patterns', 1]` becomes `redaction.patterns[1]`. */
export function formatPath(path: readonly (string | number)[]): string {
  return path.reduce<string>((out, key) => {
    if (typeof key === 'number') return `${out}[${key}]`;
    return out === '' ? key : `${out}.${key}`;
  }, '');
}

/**
 * Converts zod issues to {@link CompactIssue}s with readable messages: unknown keys get a
 * "did you mean" hint, values that came from an environment variable name it.
 */
export function toCompactIssues(
  issues: readonly z.core.$ZodIssue[],
  options: ToCompactIssuesOptions,
): CompactIssue[] {
  const out: CompactIssue[] = [];
  const allPaths = allKeyPaths(options.schema);
  for (const issue of issues) {
    const path = issue.path.map((key) => (typeof key === 'number' ? key : String(key)));
    if (issue.code === 'unrecognized_keys') {
      const known = objectKeysAt(options.schema, issue.path) ?? [];
      for (const key of issue.keys) {
        let hint = '';
        const near = closestMatch(key, known);
        if (near) hint = ` (did you mean "${near}"?)`;
        else {
          const elsewhere = allPaths.find((candidate) => candidate.at(-1) === key.toLowerCase());
          if (elsewhere) hint = ` (did you mean ${formatPath(elsewhere)}?)`;
        }
        out.push({ path: [...path, key], message: `is not a known key${hint}` });
      }
      continue;
    }
    const variable = findOrigin(path, options.origins);
    const message = variable ? `${issue.message} (set by ${variable})` : issue.message;
    out.push({ path, message });
  }
  return out;
}

function findOrigin(
  path: readonly (string | number)[],
  origins: ReadonlyMap<string, string> | undefined,
): string | undefined {
  if (!origins) return undefined;
  for (let length = path.length; length > 0; length--) {
    const variable = origins.get(path.slice(0, length).join('.'));
    if (variable) return variable;
  }
  return undefined;
}
