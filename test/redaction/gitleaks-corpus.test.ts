import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { getDefaultRedactor } from '../../src/core/redaction/redactor.js';
import { type CorpusSample, gitleaksCorpus, type Outcome, outcome } from './support/gitleaks-corpus.js';

/**
 * Issue 44 point 4: the redactor measured against gitleaks' own rule set (vendored in
 * test/fixtures/redaction/gitleaks/, MIT). Three secrets generated from each usable rule's
 * pattern, each in four contexts (.env, JSON, shell, log line): at least 95% of the
 * standalone token shapes caught whole in every context, at least 95% of the `key = value`
 * secrets whose key name says secret, token, password, key or credential, and nothing left in
 * part anywhere. The rules the corpus cannot use are listed with why in unusable-rules.json.
 */

const { samples, unusable } = gitleaksCorpus();
const redact = getDefaultRedactor();
const results = samples.map((sample) => ({ sample, result: outcome(sample, redact(sample.text)) }));

type Tally = Record<Outcome, number>;
function tally(filter: (sample: CorpusSample) => boolean): Tally {
  const counts: Tally = { caught: 0, whole: 0, part: 0 };
  for (const { sample, result } of results) if (filter(sample)) counts[result]++;
  return counts;
}
const share = (counts: Tally) => counts.caught / (counts.caught + counts.whole + counts.part);
const CONTEXTS = ['env', 'json', 'shell', 'log'] as const;

describe('gitleaks rule set as a corpus', () => {
  it('uses every rule but the ones listed with why', () => {
    const listed = JSON.parse(
      readFileSync(new URL('../fixtures/redaction/gitleaks/unusable-rules.json', import.meta.url), 'utf8'),
    ) as { rules: { rule: string; reason: string }[] };
    expect(unusable).toEqual(listed.rules);
    expect(new Set(samples.map((sample) => sample.rule)).size).toBeGreaterThanOrEqual(200);
  });

  it.each(CONTEXTS)('standalone token shapes in %s: at least 95% caught whole', (context) => {
    const counts = tally((sample) => sample.kind === 'standalone' && sample.context === context);
    expect(counts.caught + counts.whole + counts.part).toBeGreaterThan(300);
    expect(share(counts), JSON.stringify(counts)).toBeGreaterThanOrEqual(0.95);
  });

  it.each(CONTEXTS)('key = value secrets with a secret-named key in %s: at least 95% caught', (context) => {
    const counts = tally(
      (sample) => sample.kind === 'key-value' && sample.secretNamedKey && sample.context === context,
    );
    expect(counts.caught + counts.whole + counts.part).toBeGreaterThan(200);
    expect(share(counts), JSON.stringify(counts)).toBeGreaterThanOrEqual(0.95);
  });

  it('leaves no secret in part', () => {
    const partial = results.filter(({ result }) => result === 'part').map(({ sample }) => sample.text);
    expect(partial).toEqual([]);
  });

  it.each([
    '1password-secret-key',
    'aws-amazon-bedrock-api-key-long-lived',
    'easypost-api-token',
    'octopus-deploy-api-key',
    'openshift-user-token',
    'grafana-api-key',
    'gitlab-session-cookie',
    'facebook-access-token',
    'artifactory-api-key',
    'gitlab-pat-routable',
    'gitlab-runner-authentication-token-routable',
  ])('the leaks of the review: %s is caught whole in every context', (rule) => {
    const mine = results.filter(({ sample }) => sample.rule === rule);
    expect(mine.length).toBe(12);
    expect(mine.filter(({ result }) => result !== 'caught').map(({ sample }) => sample.text)).toEqual([]);
  });

  it('OPENAI_KEY=<unprefixed value> is caught', () => {
    for (const value of ['abcdefghijklmnopqrstuvwxyzabcdef', 'q8v3kz0pm2x7w5n1r4t6y9b0c3d5f7h9']) {
      expect(redact(`OPENAI_KEY=${value}`)).toBe('OPENAI_KEY=<REDACTED>');
      expect(redact(`export OPENAI_KEY="${value}"`)).toBe('export OPENAI_KEY="<REDACTED>"');
    }
  });
});
