import { describe, expect, it } from 'vitest';
import { EXTRA_SETS, type Fold, type LabelledSentence, readLabelled } from './instruction-model-folds.js';
import {
  gridLeaveOneSourceOut,
  NESTED_BALANCES,
  NESTED_THRESHOLDS,
  nestedLeaveOneSourceOut,
} from './instruction-model-nested.js';

const row = (text: string, label: LabelledSentence['label'], source: string): LabelledSentence => ({
  text,
  label,
  source,
  license: 'MIT',
  context: 'assistant',
  position: 'only',
  later: 'none',
});

/** Three tiny sources of asks and statements. */
function tinySources(): LabelledSentence[] {
  const asks = [
    'Book the earliest train.',
    'Please send me the report.',
    'Write a short poem.',
    "Don't add eggs.",
  ];
  const statements = [
    'The train left at noon.',
    'He bought five apples.',
    'It rained all day.',
    'She likes jazz.',
  ];
  return ['a', 'b', 'c'].flatMap((source) => [
    ...asks.map((text) => row(`${text} (${source})`, 'instruction', source)),
    ...statements.map((text) => row(`${text} (${source})`, 'other', source)),
  ]);
}

describe('nested leave-one-source-out (issue 45, tenth pass)', () => {
  it('chooses each fold settings from the training sources alone: the held-out labels never change the choice', () => {
    const rows = tinySources();
    const folds = nestedLeaveOneSourceOut(rows);
    expect(folds.map((fold) => fold.source)).toEqual(['a', 'b', 'c']);
    for (const fold of folds) {
      expect(NESTED_BALANCES).toContain(fold.balance);
      expect(NESTED_THRESHOLDS).toContain(fold.threshold);
    }
    // Every label of source `a` flipped: its figures change, the settings chosen for it do not.
    const flipped = rows.map((r) =>
      r.source === 'a'
        ? { ...r, label: r.label === 'other' ? ('instruction' as const) : ('other' as const) }
        : r,
    );
    const [before] = folds;
    const [after] = nestedLeaveOneSourceOut(flipped);
    expect({ balance: after?.balance, threshold: after?.threshold, inner: after?.innerWorst }).toEqual({
      balance: before?.balance,
      threshold: before?.threshold,
      inner: before?.innerWorst,
    });
    expect(after?.recall).not.toBe(before?.recall);
  });

  it('the grid scores every cell the nested run chooses from: each nested fold is one of its cells', () => {
    const rows = tinySources();
    const grid = gridLeaveOneSourceOut(rows);
    expect(grid.length).toBe(3 * NESTED_BALANCES.length * NESTED_THRESHOLDS.length);
    const figures = (f: Fold) => [f.precision, f.recall];
    for (const fold of nestedLeaveOneSourceOut(rows, ['b'])) {
      const cell = grid.find(
        (g) => g.source === fold.source && g.balance === fold.balance && g.threshold === fold.threshold,
      );
      expect(cell && figures(cell)).toEqual(figures(fold));
    }
    expect(gridLeaveOneSourceOut(rows, ['c'], [1]).map((g) => [g.source, g.balance])).toEqual(
      NESTED_THRESHOLDS.map(() => ['c', 1]),
    );
  });

  it('reads the hand-labelled sets, shipped and measured: licensed, placed in their message, labelled by the rules', () => {
    const shipped = readLabelled();
    const all = readLabelled([...EXTRA_SETS]);
    // The shipped sets (fifteenth pass) are read by default: arena-hard and gsm8k as sources of
    // their own, oasst1-en100 as oasst1 rows; the rest come with `--with`.
    const fromSets = shipped.filter((r) => r.source === 'arena-hard' || r.source === 'gsm8k');
    expect(fromSets.length).toBeGreaterThan(300);
    expect(shipped.filter((r) => r.source === 'oasst1').length).toBeGreaterThan(500);
    const added = all.slice(shipped.length);
    expect(added.length).toBeGreaterThan(300);
    expect(new Set(added.map((r) => r.source))).toEqual(new Set(['aider-prompts', 'openhands']));
    for (const r of [...fromSets, ...added]) {
      expect(r.license, r.text).toMatch(/^(?:MIT|Apache-2\.0)$/);
      expect(['instruction', 'other']).toContain(r.label);
      expect(['only', 'first', 'middle', 'last']).toContain(r.position);
      expect(['none', 'q', 'imp', 'q+imp']).toContain(r.later);
      expect(r.context).toBe('assistant');
    }
    // A text its source already holds is read once.
    const keys = all.map((r) => `${r.source}|${r.text.toLowerCase()}`);
    expect(new Set(keys).size).toBe(keys.length);
  });
});
