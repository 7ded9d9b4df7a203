import { type AST, RegExpParser } from '@eslint-community/regexpp';
import { describe, expect, it } from 'vitest';
import { DEFAULT_REDACTION_RULES } from '../../src/core/redaction/redaction-rules.js';

/**
 * Issue 44 point 5, structurally: every default rule (the generated gitleaks ones included)
 * is anchored on a literal trigger and has no unbounded quantifier (`*`, `+`, `{n,}`), so the
 * work at one trigger is bounded and the scan is linear in the text (longer tokens go on
 * through `extend`, a plain loop). No timing here: bench/hostile-inputs.ts measures MB/s.
 */

const parser = new RegExpParser({ ecmaVersion: 2025 });

function unbounded(pattern: AST.Pattern): string[] {
  const found: string[] = [];
  const visit = (node: AST.Node): void => {
    if (node.type === 'Quantifier' && node.max === Number.POSITIVE_INFINITY) found.push(node.raw);
    if ('alternatives' in node) for (const alternative of node.alternatives) visit(alternative);
    if ('elements' in node) for (const element of node.elements) visit(element);
    if (node.type === 'Quantifier') visit(node.element);
  };
  visit(pattern);
  return found;
}

describe('redaction rules are bounded', () => {
  it.each(DEFAULT_REDACTION_RULES.map((rule) => [rule.name, rule] as const))('%s', (_name, rule) => {
    const source = rule.pattern.startsWith('(?i)') ? rule.pattern.slice(4) : rule.pattern;
    const ast = parser.parsePattern(source, undefined, undefined, { unicode: false });
    expect(unbounded(ast)).toEqual([]);
    expect(rule.triggers.length).toBeGreaterThan(0);
    for (const trigger of rule.triggers) expect(trigger.length).toBeGreaterThanOrEqual(1);
  });
});
