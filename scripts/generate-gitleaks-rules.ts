/**
 * `npx tsx scripts/generate-gitleaks-rules.ts [--check]`: writes src/core/redaction/rules/gitleaks-rules.ts
 * from gitleaks' rule set (test/fixtures/redaction/gitleaks/gitleaks.toml, MIT).
 *
 * Each standalone token rule (one that needs no key name before its value) becomes a
 * prefix-anchored rule for the redactor's scanner: its triggers are the literal prefixes of
 * the rule's secret group (`sha256~`, `A3-`), its pattern the secret group with every
 * unbounded quantifier bounded (4,096), its `extend` the class of the group's last run (a
 * longer token is replaced whole), and its entropy floor gitleaks' own. A rule whose secret
 * starts with no literal of 3 characters or more is left to the hand-written rules and
 * listed in the file's `skipped` table with why. `--check` fails when the file is stale.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { type AST, RegExpParser } from '@eslint-community/regexpp';
import { parse } from 'smol-toml';
import { translateGoRegex } from './gitleaks/go-regex.js';

const SOURCE = new URL('../test/fixtures/redaction/gitleaks/gitleaks.toml', import.meta.url);
const LICENSE = new URL('../test/fixtures/redaction/gitleaks/LICENSE', import.meta.url);
const TARGET = new URL('../src/core/redaction/rules/gitleaks-rules.ts', import.meta.url);
const ASSIGNMENT = String.raw`(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)`;
const BOUND = 4096;

interface GitleaksRule {
  id: string;
  regex?: string;
  secretGroup?: number;
  entropy?: number;
}

export interface GeneratedRule {
  name: string;
  pattern: string;
  triggers: string[];
  extend?: string;
  entropy?: number;
}

const parser = new RegExpParser({ ecmaVersion: 2025 });

function capturingGroups(pattern: AST.Pattern): AST.CapturingGroup[] {
  const groups: AST.CapturingGroup[] = [];
  const visit = (node: AST.Node): void => {
    if (node.type === 'CapturingGroup') groups.push(node);
    if ('alternatives' in node) for (const alternative of node.alternatives) visit(alternative);
    if ('elements' in node) for (const element of node.elements) visit(element);
    if (node.type === 'Quantifier') visit(node.element);
  };
  visit(pattern);
  return groups;
}

/** `[aA]` (a letter in both cases) as that letter, else undefined. */
function foldedLetter(node: AST.Node): string | undefined {
  if (node.type === 'Character') return String.fromCodePoint(node.value);
  if (node.type !== 'CharacterClass' || node.negate || node.elements.length !== 2) return undefined;
  const [a, b] = node.elements;
  if (a?.type !== 'Character' || b?.type !== 'Character') return undefined;
  const x = String.fromCodePoint(a.value);
  const y = String.fromCodePoint(b.value);
  return x.toLowerCase() === y.toLowerCase() ? x.toLowerCase() : undefined;
}

/** The literal prefixes every match of `elements` starts with (at most 32), lower-cased. */
function prefixes(elements: readonly AST.Element[]): string[] {
  let found = [''];
  for (const element of elements) {
    if (element.type === 'Assertion') {
      if (element.kind === 'word' || element.kind === 'start') continue;
      break;
    }
    const letter = foldedLetter(element);
    if (letter !== undefined) {
      found = found.map((prefix) => prefix + letter);
      continue;
    }
    if (element.type === 'Group' || element.type === 'CapturingGroup') {
      const whole = element.alternatives.map((alternative) => ({
        heads: prefixes(alternative.elements),
        complete: alternative.elements.every((item) => foldedLetter(item) !== undefined),
      }));
      found = found.flatMap((prefix) => whole.flatMap(({ heads }) => heads.map((head) => prefix + head)));
      if (found.length > 32 || !whole.every(({ complete }) => complete)) break;
      continue;
    }
    break;
  }
  return found;
}

/** The group's source with unbounded quantifiers bounded. */
function bounded(node: AST.Node): string {
  let out = '';
  let at = node.start;
  const visit = (item: AST.Node): void => {
    if (item.type === 'Quantifier' && item.max === Number.POSITIVE_INFINITY) {
      visit(item.element);
      out += node.raw.slice(at - node.start, item.element.end - node.start);
      out += `{${item.min},${Math.max(BOUND, item.min)}}${item.greedy ? '' : '?'}`;
      at = item.end;
      return;
    }
    if ('alternatives' in item) for (const alternative of item.alternatives) visit(alternative);
    if ('elements' in item) for (const element of item.elements) visit(element);
    if (item.type === 'Quantifier') visit(item.element);
  };
  visit(node);
  return out + node.raw.slice(at - node.start);
}

/** The class of the secret's last run (`[\w-]{43}` -> `[\w-]`), when it ends in one. */
function lastRun(elements: readonly AST.Element[]): string | undefined {
  const last = elements.at(-1);
  if (last?.type !== 'Quantifier') return undefined;
  const inner = last.element;
  if (inner.type === 'CharacterClass' || inner.type === 'CharacterSet') return inner.raw;
  return undefined;
}

/** Rules the hand-written ones do better, with why. */
const HAND_WRITTEN: Record<string, string> = {
  'private-key': 'the PEM rule also checks that the body is key material (code naming both markers stays)',
};

function convert(rule: GitleaksRule): GeneratedRule | string {
  if (rule.regex === undefined) return 'no regex (a file path rule)';
  const hand = HAND_WRITTEN[rule.id];
  if (hand !== undefined) return hand;
  if (rule.regex.includes(ASSIGNMENT)) return 'needs a key name (the key = value rules cover it)';
  let source: string;
  try {
    source = translateGoRegex(rule.regex);
    new RegExp(source);
  } catch (error) {
    return `not translatable: ${(error as Error).message}`;
  }
  const pattern = parser.parsePattern(source, undefined, undefined, { unicode: false });
  const groups = capturingGroups(pattern);
  // gitleaks' secret is group `secretGroup`, else the first group unless it is a named part
  // (`(?P<alg>...)` of jwt-base64), else the whole match.
  const first = groups[0]?.name === null ? groups[0] : undefined;
  const group = rule.secretGroup !== undefined ? groups[rule.secretGroup - 1] : first;
  const alternatives = group ? group.alternatives : pattern.alternatives;
  const heads = alternatives.flatMap((alternative) => prefixes(alternative.elements));
  if (heads.length === 0 || heads.some((head) => head.length < 3)) {
    return 'its secret starts with no literal of 3 characters (left to the hand-written rules)';
  }
  // No capturing group: the redactor reads a pattern's first two groups as key and separator.
  const body = (group ? bounded(group) : `(?:${bounded(pattern)})`)
    .replace(/(?<!\\)\((?!\?)/g, '(?:')
    .replace(/(?<!\\)\(\?<(?![=!])[A-Za-z]\w*>/g, '(?:');
  const extend = alternatives.length === 1 ? lastRun(alternatives[0]!.elements) : undefined;
  return {
    name: `gitleaks:${rule.id}`,
    pattern: body,
    triggers: [...new Set(heads)],
    ...(extend ? { extend } : {}),
    ...(rule.entropy ? { entropy: rule.entropy } : {}),
  };
}

function render(): string {
  const rules = (parse(readFileSync(SOURCE, 'utf8')) as unknown as { rules: GitleaksRule[] }).rules;
  const generated: GeneratedRule[] = [];
  const skipped: { rule: string; reason: string }[] = [];
  for (const rule of rules) {
    const result = convert(rule);
    if (typeof result === 'string') skipped.push({ rule: rule.id, reason: result });
    else generated.push(result);
  }
  const license = readFileSync(LICENSE, 'utf8')
    .trim()
    .split('\n')
    .map((line) => ` * ${line}`.trimEnd());
  return [
    '/**',
    ' * GENERATED by scripts/generate-gitleaks-rules.ts from gitleaks config/gitleaks.toml',
    ' * (vendored in test/fixtures/redaction/gitleaks/). Do not edit: run the script again.',
    ' *',
    " * The patterns are derived from gitleaks' rules, under its license:",
    ' *',
    ...license,
    ' */',
    '',
    '/** One standalone token rule of gitleaks, as a prefix-anchored pattern. */',
    'export interface GitleaksRule {',
    '  readonly name: string;',
    '  readonly pattern: string;',
    '  readonly triggers: readonly string[];',
    '  readonly extend?: string;',
    '  readonly entropy?: number;',
    '}',
    '',
    `/** ${generated.length} rules. */`,
    `export const GITLEAKS_RULES: readonly GitleaksRule[] = ${JSON.stringify(generated, null, 2)};`,
    '',
    `/** The ${skipped.length} rules not converted, with why. */`,
    `export const GITLEAKS_SKIPPED: readonly { readonly rule: string; readonly reason: string }[] = ${JSON.stringify(skipped, null, 2)};`,
    '',
  ].join('\n');
}

const text = render();
if (process.argv.includes('--check')) {
  if (readFileSync(TARGET, 'utf8') !== text) {
    console.error(
      'src/core/redaction/rules/gitleaks-rules.ts is stale: run npx tsx scripts/generate-gitleaks-rules.ts',
    );
    process.exit(1);
  }
} else {
  writeFileSync(TARGET, text);
}
