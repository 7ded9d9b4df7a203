import { readFileSync } from 'node:fs';
import * as randexp from 'randexp';
import { parse } from 'smol-toml';
import { translateGoRegex, UntranslatableRegexError } from '../../../scripts/gitleaks/go-regex.js';

/**
 * The outside corpus of issue 44: secrets generated from each rule of gitleaks' own rule set
 * (test/fixtures/redaction/gitleaks/gitleaks.toml, MIT, vendored with its LICENSE), three per
 * rule from a seeded PRNG, each placed in four contexts (.env, JSON, shell, log line).
 *
 * A rule whose pattern is `<name words> <assignment> <value>` (gitleaks' semi-generic rules)
 * is a `key-value` rule: its value is generated and written after a key named from the rule's
 * id (`adafruit-api-key` -> `ADAFRUIT_API_KEY`). Any other rule is a `standalone` shape: the
 * generated match (up to the end of its secret) is written after a neutral key.
 */

export type RuleKind = 'standalone' | 'key-value';

export interface CorpusSample {
  readonly rule: string;
  readonly kind: RuleKind;
  /** The key name says secret, token, password, key or credential (key-value rules only). */
  readonly secretNamedKey: boolean;
  readonly context: 'env' | 'json' | 'shell' | 'log';
  /** The text as it appears in a transcript. */
  readonly text: string;
  /** What must not survive (the rule's secret group, as written in `text`). */
  readonly secret: string;
}

export interface UnusableRule {
  readonly rule: string;
  readonly reason: string;
}

interface GitleaksRule {
  id: string;
  regex?: string;
  secretGroup?: number;
}

// randexp is CommonJS (`module.exports = RandExp`): its class is the namespace's default.
type RandExpClass = new (
  source: RegExp | string,
) => { max: number; randInt: (low: number, high: number) => number; gen(): string };
const RandExp = (randexp as unknown as { default: RandExpClass }).default;

const FIXTURE = new URL('../../fixtures/redaction/gitleaks/gitleaks.toml', import.meta.url);

/** gitleaks' semi-generic assignment, the mark of a rule that needs its key name. */
const ASSIGNMENT = String.raw`(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)`;

/** mulberry32. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function hash(text: string): number {
  let h = 2166136261;
  for (let index = 0; index < text.length; index++) h = Math.imul(h ^ text.charCodeAt(index), 16777619);
  return h >>> 0;
}

export function gitleaksRules(): GitleaksRule[] {
  return (parse(readFileSync(FIXTURE, 'utf8')) as unknown as { rules: GitleaksRule[] }).rules;
}

/** One generated match and its secret's span, or undefined after 200 tries. */
function generate(rule: GitleaksRule, random: () => number) {
  const regex = new RegExp(`^(?:${translateGoRegex(rule.regex!)})$`, 'd');
  const secretGroup = rule.secretGroup;
  // Drawn in the case the rule's author wrote (`(?i)` is gitleaks' leniency, not the shape);
  // randexp cannot draw from `[\s\S]` (it subtracts the two): key-like text instead.
  // An unescaped `.` between letters is a domain's dot (`hooks.slack.com`).
  const written = rule.regex!.replace(/(?<=[a-z])\.(?=[a-z])/g, '\\.');
  const drawable = translateGoRegex(written, { caseAsWritten: true })
    .replaceAll(String.raw`[\s\S-]`, '[A-Za-z0-9+/=\\n-]')
    .replaceAll(String.raw`[\s\S]`, '[A-Za-z0-9 \\n]');
  const generator = new RandExp(drawable);
  generator.max = 24;
  generator.randInt = (low: number, high: number) => low + Math.floor(random() * (high - low + 1));
  for (let attempt = 0; attempt < 200; attempt++) {
    const text = generator.gen();
    const match = regex.exec(text);
    if (!match?.indices) continue;
    const groupCount = match.length - 1;
    // gitleaks' secret: group `secretGroup`, else the first group unless named, else the match.
    const firstNamed = match.groups !== undefined && Object.values(match.groups)[0] === match[1];
    const group = secretGroup ?? (groupCount > 0 && !firstNamed ? 1 : 0);
    const span = match.indices[group] ?? (group === 0 ? undefined : match.indices[0]);
    if (!span || span[1] - span[0] < 6) continue;
    return { text, start: span[0], end: span[1] };
  }
  return undefined;
}

const envName = (id: string) => id.replace(/[^A-Za-z0-9]+/g, '_').toUpperCase();

/** The corpus and the rules it cannot use (with why). */
export function gitleaksCorpus(perRule = 3): { samples: CorpusSample[]; unusable: UnusableRule[] } {
  const samples: CorpusSample[] = [];
  const unusable: UnusableRule[] = [];
  for (const rule of gitleaksRules()) {
    if (rule.regex === undefined) {
      unusable.push({ rule: rule.id, reason: 'no regex (matches a file path only)' });
      continue;
    }
    try {
      new RegExp(translateGoRegex(rule.regex));
    } catch (error) {
      const why = error instanceof UntranslatableRegexError ? error.message : String(error);
      unusable.push({ rule: rule.id, reason: `not translatable to JavaScript: ${why}` });
      continue;
    }
    const kind: RuleKind = rule.regex.includes(ASSIGNMENT) ? 'key-value' : 'standalone';
    const random = prng(hash(rule.id));
    const drawn = [];
    for (let index = 0; index < perRule; index++) {
      const one = generate(rule, random);
      if (one) drawn.push(one);
    }
    if (drawn.length < perRule) {
      unusable.push({ rule: rule.id, reason: 'no matching sample could be generated (randexp)' });
      continue;
    }
    for (const { text, start, end } of drawn) {
      const secret = text.slice(start, end);
      if (kind === 'key-value') {
        const key = envName(rule.id);
        const named = /secret|token|password|key|credential/i.test(rule.id);
        const base = { rule: rule.id, kind, secretNamedKey: named, secret } as const;
        samples.push(
          { ...base, context: 'env', text: `${key}=${secret}` },
          {
            ...base,
            context: 'json',
            text: `{"id": 7, "${key.toLowerCase()}": ${JSON.stringify(secret)}}`,
            secret: JSON.stringify(secret).slice(1, -1),
          },
          { ...base, context: 'shell', text: `export ${key}="${secret}"\nnpm run deploy` },
          { ...base, context: 'log', text: `level=info ${key.toLowerCase()}=${secret} msg="config loaded"` },
        );
      } else {
        // The match, less gitleaks' closing delimiter (a blank, a quote, `;`, `\n`).
        const shown = /^(?:[`'"\s;]|\\[nr])?$/.test(text.slice(end)) ? text.slice(0, end) : text;
        const base = { rule: rule.id, kind, secretNamedKey: false, secret } as const;
        samples.push(
          { ...base, context: 'env', text: `UPLOAD_VALUE=${shown}` },
          {
            ...base,
            context: 'json',
            text: `{"id": 7, "value": ${JSON.stringify(shown)}}`,
            secret: JSON.stringify(secret).slice(1, -1),
          },
          { ...base, context: 'shell', text: `export UPLOAD_VALUE='${shown}'\n./upload.sh` },
          { ...base, context: 'log', text: `2026-11-28T17:00:00Z INFO worker: using ${shown} for upload` },
        );
      }
    }
  }
  return { samples, unusable };
}

/** How a sample came out of the redactor. */
export type Outcome = 'caught' | 'whole' | 'part';

/**
 * `whole`: the secret is in the output as it was; `part`: a run of 8 of its characters is
 * (one the text also holds outside the secret does not count, nor the command and header
 * name when gitleaks' secret is a whole `curl -H "Authorization: Token x"`); else `caught`.
 */
export function outcome(sample: CorpusSample, out: string): Outcome {
  if (out.includes(sample.secret)) return 'whole';
  // gitleaks' curl-auth-header secret is the whole `curl -H "Authorization: Token x"`.
  const label =
    /^(?:curl [\s\S]{0,64}?)?(?:\\?["'])?[A-Za-z-]{1,40}:[ \t]*(?:(?:Bearer|Basic|Token)[ \t]+)?/.exec(
      sample.secret,
    )?.[0] ?? '';
  const value = sample.secret.slice(label.length);
  const context = sample.text.replace(sample.secret, '\u0000');
  const width = Math.min(8, value.length);
  for (let start = 0; start + width <= value.length; start++) {
    const part = value.slice(start, start + width);
    if (out.includes(part) && !context.includes(part)) return 'part';
  }
  return 'caught';
}
