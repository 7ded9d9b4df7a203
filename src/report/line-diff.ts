/** One line of a line diff. */
export interface DiffLine {
  kind: 'same' | 'added' | 'removed';
  text: string;
}

/** Above this many cells one diff gives up on alignment (every line changed). */
const MAX_CELLS = 4_000_000;

/**
 * The alignment work (cells: lines before × lines after) the diffs of one page may still
 * spend, shared by them: a trace of many long summaries cannot make each of its diffs take
 * the full allowance. `refused` counts the diffs that found too little left.
 */
export interface DiffBudget {
  cells: number;
  refused: number;
}

/** The cells of alignment one report spends at most on its summary diffs. */
export const REPORT_DIFF_CELLS = 16_000_000;

/** A fresh {@link DiffBudget} of `cells`. */
export function diffBudget(cells = MAX_CELLS): DiffBudget {
  return { cells, refused: 0 };
}

/**
 * A line diff of two texts by longest common subsequence: the lines of `next` in order,
 * marked `same` or `added`, with the lines of `previous` that are gone marked `removed`
 * where they stood. Alignment spends `budget`; without enough left every line reads changed
 * (and `budget.refused` counts it).
 *
 * @example
 * ```ts
 * lineDiff('a\nb', 'a\nc'); // same a, removed b, added c
 * ```
 */
export function lineDiff(previous: string, next: string, budget = diffBudget()): DiffLine[] {
  const a = previous === '' ? [] : previous.split('\n');
  const b = next === '' ? [] : next.split('\n');
  const cells = a.length * b.length;
  if (cells > Math.min(MAX_CELLS, budget.cells)) {
    budget.refused++;
    return [
      ...a.map((text) => ({ kind: 'removed' as const, text })),
      ...b.map((text) => ({ kind: 'added' as const, text })),
    ];
  }
  budget.cells -= cells;
  // lengths[i][j]: the LCS of a[i..] and b[j..].
  const width = b.length + 1;
  const lengths = new Uint32Array((a.length + 1) * width);
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lengths[i * width + j] =
        a[i] === b[j]
          ? lengths[(i + 1) * width + j + 1]! + 1
          : Math.max(lengths[(i + 1) * width + j]!, lengths[i * width + j + 1]!);
    }
  }
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      out.push({ kind: 'same', text: b[j]! });
      i++;
      j++;
    } else if (
      j < b.length &&
      (i === a.length || lengths[i * width + j + 1]! >= lengths[(i + 1) * width + j]!)
    ) {
      out.push({ kind: 'added', text: b[j]! });
      j++;
    } else {
      out.push({ kind: 'removed', text: a[i]! });
      i++;
    }
  }
  return out;
}
