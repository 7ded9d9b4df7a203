import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { chatSession, cli, useTempFiles } from '../../test/support/cli-fixtures.js';

const temp = useTempFiles();
const file = temp.file;

describe('--state FILE', () => {
  it('resumes a later run at the same version with the same protected set', async () => {
    const statePath = temp.path('session-state.json');
    const first = [
      { role: 'system', content: 'You are a shop assistant.' },
      { role: 'user', content: 'REQUIREMENT: totals in cents', meta: { protected: true } },
      ...chatSession().slice(1),
    ];
    const run1 = await cli([
      'compact',
      await file('state1.json', first),
      '--max-context',
      '100000',
      '--force',
      '--state',
      statePath,
    ]);
    expect(run1.code).toBe(0);
    const state1 = JSON.parse(await readFile(statePath, 'utf8'));
    expect(state1.version).toBe(1);
    expect(state1.pinnedIds.length).toBeGreaterThan(0);
    // The next turn: the compacted view (meta gone) plus new messages.
    const view = JSON.parse(run1.stdout) as Record<string, unknown>[];
    const second = [
      ...view,
      { role: 'user', content: 'and the tax?' },
      { role: 'assistant', content: 'Tax is 8%.' },
    ];
    const run2 = await cli([
      'compact',
      await file('state2.json', second),
      '--max-context',
      '100000',
      '--force',
      '--state',
      statePath,
    ]);
    expect(run2.code).toBe(0);
    const state2 = JSON.parse(await readFile(statePath, 'utf8'));
    expect(state2.version).toBe(2);
    expect(state2.pinnedIds).toEqual(expect.arrayContaining(state1.pinnedIds));
    const out = JSON.parse(run2.stdout) as { role: string; content: string | null }[];
    expect(out).toContainEqual({ role: 'user', content: 'REQUIREMENT: totals in cents' });
    expect(
      out.filter((m) => typeof m.content === 'string' && m.content.startsWith('<COMPACT-SUMMARY v2>')),
    ).toHaveLength(1);
  });

  it('names --state when the file is not a session state', async () => {
    const bad = await file('not-state.json', { hello: 1 });
    const run = await cli([
      'compact',
      await file('s3.json', chatSession()),
      '--max-context',
      '100000',
      '--state',
      bad,
    ]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--state');
  });

  it.each([
    [{ version: 1, coveredIds: [], summary: { text: 42, tokens: 3 } }, /summary\.text is not a string/],
    [{ version: -1, coveredIds: [] }, /version is not a whole number/],
    [{ version: 1, coveredIds: 'm1' }, /coveredIds is not an array/],
    [{ version: 1, coveredIds: [], rewrites: { m1: { kind: 'gone' } } }, /rewrites\["m1"\] is not a rewrite/],
  ])('a state of the wrong shape (%j): one line naming the field, exit 2', async (state, message) => {
    const run = await cli([
      'compact',
      await file('s4.json', chatSession()),
      '--max-context',
      '100000',
      '--state',
      await file('wrong-state.json', state),
    ]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
  });
});
