/**
 * `npx tsx bench/redaction-transforms.ts [TPS.json]`: the share of gitleaks' true positives the
 * default redactor catches after each transformation a secret meets on its way out (JSON
 * escaping, .NET's `\u0022`, escaped slashes, percent encoding, an object key, CRLF, an
 * invisible character inside the key, a clip in its middle, a split over two messages, ...).
 *
 * Samples: the corpus generated from gitleaks' rule set (test/redaction/support/gitleaks-corpus.ts,
 * the log-line context: three per usable rule), and, when a file is given, gitleaks' literal
 * true-positive strings as `[{ "rule": id, "text": line }]` (taken from the `tps` lists of its
 * cmd/generate/config/rules/*.go; not vendored). A sample's secret is what the rule's regex
 * (its secret group) matches. Outcome per sample: `caught` (no run of 8 characters of the
 * secret left), `whole`, or `part`.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'smol-toml';
import { translateGoRegex } from '../scripts/gitleaks/go-regex.js';
import { getDefaultRedactor, redactDeep } from '../src/core/redaction/redactor.js';
import { gitleaksCorpus } from '../test/redaction/support/gitleaks-corpus.js';

const redact = getDefaultRedactor();

interface Sample {
  rule: string;
  text: string;
  secret: string;
}

function literalSamples(file: string): Sample[] {
  const toml = readFileSync(
    new URL('../test/fixtures/redaction/gitleaks/gitleaks.toml', import.meta.url),
    'utf8',
  );
  const rules = (parse(toml) as unknown as { rules: { id: string; regex?: string; secretGroup?: number }[] })
    .rules;
  const byId = new Map(rules.map((rule) => [rule.id, rule]));
  const samples: Sample[] = [];
  for (const { rule: id, text } of JSON.parse(readFileSync(file, 'utf8')) as {
    rule: string;
    text: string;
  }[]) {
    const rule = byId.get(id);
    if (!rule?.regex) continue;
    let regex: RegExp;
    try {
      regex = new RegExp(translateGoRegex(rule.regex), 'd');
    } catch {
      continue;
    }
    const match = regex.exec(text);
    if (!match?.indices) continue;
    const group = rule.secretGroup ?? (match.length > 1 && match[1] !== undefined ? 1 : 0);
    const [start, end] = match.indices[group] ?? match.indices[0]!;
    if (end - start >= 8) samples.push({ rule: id, text, secret: text.slice(start, end) });
  }
  return samples;
}

const escapeAll = (text: string) =>
  [...text].map((char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
const dotnet = (json: string) =>
  json
    .replaceAll('\\"', '\\u0022')
    .replace(/['+<>&`]/g, (char) => escapeAll(char).toUpperCase().replace('\\U', '\\u'));
const middleOf = (sample: Sample) =>
  sample.text.indexOf(sample.secret) + Math.floor(sample.secret.length / 2);
const insert = (sample: Sample, char: string) =>
  sample.text.slice(0, middleOf(sample)) + char + sample.text.slice(middleOf(sample));

/** Each transformation: what goes out, read back as plain text. */
const TRANSFORMS: Record<string, (sample: Sample) => string> = {
  raw: (s) => redact(s.text),
  'JSON in tool arguments (escaped twice)': (s) =>
    JSON.parse(JSON.parse(redact(JSON.stringify(JSON.stringify({ cmd: s.text }))))).cmd,
  'JSON with escaped slashes (\\/)': (s) =>
    JSON.parse(redact(JSON.stringify({ cmd: s.text }).replaceAll('/', '\\/'))).cmd,
  'JSON, every character \\uXXXX': (s) => JSON.parse(`"${redact(escapeAll(s.text))}"`),
  'JSON as .NET writes it (\\u0022)': (s) => JSON.parse(redact(dotnet(JSON.stringify({ cmd: s.text })))).cmd,
  'URL-encoded': (s) => decodeURIComponent(redact(encodeURIComponent(s.text))),
  'object key': (s) => Object.keys(redactDeep({ [s.text]: 1 }, redact))[0]!,
  CRLF: (s) => redact(s.text.replace(/\r?\n/g, '\r\n')),
  'indented 4': (s) => redact(s.text.replace(/^/gm, '    ')),
  'zero-width space in the middle': (s) => redact(insert(s, '\u200b')).replaceAll('\u200b', ''),
  'soft hyphen in the middle': (s) => redact(insert(s, '\u00ad')).replaceAll('\u00ad', ''),
  'clipped in the middle': (s) => redact(s.text.slice(0, middleOf(s))),
  'split over two messages': (s) => redact(s.text.slice(0, middleOf(s))) + redact(s.text.slice(middleOf(s))),
  'base64 data URL (text/plain)': (s) =>
    Buffer.from(
      redact(`data:text/plain;base64,${Buffer.from(s.text).toString('base64')}`).slice(23),
      'base64',
    ).toString('latin1'),
  fullwidth: (s) =>
    redact(s.text.replace(/[!-~]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0))).replace(
      /[\uff01-\uff5e]/g,
      (c) => String.fromCharCode(c.charCodeAt(0) - 0xfee0),
    ),
};

function outcome(sample: Sample, out: string): 'caught' | 'whole' | 'part' {
  if (out.includes(sample.secret)) return 'whole';
  const context = sample.text.replace(sample.secret, '\u0000');
  for (let at = 0; at + 8 <= sample.secret.length; at++) {
    const part = sample.secret.slice(at, at + 8);
    if (out.includes(part) && !context.includes(part)) return 'part';
  }
  return 'caught';
}

const sets: Record<string, Sample[]> = {
  generated: gitleaksCorpus().samples.filter((sample) => sample.context === 'log'),
};
if (process.argv[2]) sets.literal = literalSamples(process.argv[2]);
console.log('| transformation | samples | n | caught | whole | part |\n|---|---|---|---|---|---|');
for (const [name, run] of Object.entries(TRANSFORMS)) {
  for (const [set, samples] of Object.entries(sets)) {
    const counts = { caught: 0, whole: 0, part: 0 };
    for (const sample of samples) {
      let result: keyof typeof counts;
      try {
        result = outcome(sample, run(sample));
      } catch {
        result = 'whole';
      }
      counts[result]++;
    }
    const share = ((100 * counts.caught) / samples.length).toFixed(1);
    console.log(`| ${name} | ${set} | ${samples.length} | ${share}% | ${counts.whole} | ${counts.part} |`);
  }
}
