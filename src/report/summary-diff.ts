import { type DiffBudget, type DiffLine, diffBudget, lineDiff } from './line-diff.js';

/** A `## heading` and the lines under it (the text before the first heading has heading ''). */
interface Section {
  heading: string;
  lines: string[];
}

const LIST_ITEM = /^\s*(?:[-*+]|\d+[.)])\s/;

function sections(text: string): Section[] {
  const out: Section[] = [];
  let current: Section = { heading: '', lines: [] };
  for (const line of text === '' ? [] : text.split('\n')) {
    if (line.startsWith('## ')) {
      if (current.heading !== '' || current.lines.length > 0) out.push(current);
      current = { heading: line, lines: [] };
    } else current.lines.push(line);
  }
  if (current.heading !== '' || current.lines.length > 0) out.push(current);
  return out;
}

/** True when every non-blank line is a list item (and there is one). */
function isList(lines: readonly string[]): boolean {
  let items = 0;
  for (const line of lines) {
    if (line.trim() === '') continue;
    if (!LIST_ITEM.test(line)) return false;
    items++;
  }
  return items > 0;
}

/**
 * A list compared as a multiset: an item present in both is the same wherever it stands (a
 * summarizer that only reorders its identifier list changed nothing), new items are added in
 * their place, and items gone are listed as removed after the section's lines.
 */
function listDiff(previous: readonly string[], next: readonly string[]): DiffLine[] {
  const left = new Map<string, number>();
  for (const line of previous) left.set(line, (left.get(line) ?? 0) + 1);
  const out: DiffLine[] = [];
  for (const line of next) {
    const count = left.get(line) ?? 0;
    if (count > 0) left.set(line, count - 1);
    out.push({ kind: count > 0 ? 'same' : 'added', text: line });
  }
  for (const line of previous) {
    const count = left.get(line) ?? 0;
    if (count === 0) continue;
    left.set(line, count - 1);
    out.push({ kind: 'removed', text: line });
  }
  return out;
}

function bodyDiff(previous: readonly string[], next: readonly string[], budget: DiffBudget): DiffLine[] {
  if (isList(previous) && isList(next)) return listDiff(previous, next);
  return lineDiff(previous.join('\n'), next.join('\n'), budget);
}

const all = (kind: DiffLine['kind'], section: Section): DiffLine[] => [
  ...(section.heading === '' ? [] : [{ kind, text: section.heading }]),
  ...section.lines.map((text) => ({ kind, text })),
];

/**
 * What changed from one summary to the next, section by section (`## heading`): sections are
 * aligned by their headings; within a section that is a list on both sides (identifiers,
 * decisions, files) items are compared regardless of order; other sections get a line diff.
 * Every line diff spends the one `budget` (see {@link lineDiff}).
 *
 * @example
 * ```ts
 * summaryDiff('## Ids\n- a\n- b', '## Ids\n- b\n- a'); // every line `same`
 * ```
 */
export function summaryDiff(previous: string, next: string, budget = diffBudget()): DiffLine[] {
  const a = sections(previous);
  const b = sections(next);
  // Headings aligned with the line diff; a prefix keeps an empty heading from reading as no line.
  const key = (section: Section) => `#${section.heading}`;
  const headings = lineDiff(a.map(key).join('\n'), b.map(key).join('\n'), budget);
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  for (const heading of headings) {
    if (heading.kind === 'removed') out.push(...all('removed', a[i++]!));
    else if (heading.kind === 'added') out.push(...all('added', b[j++]!));
    else {
      const left = a[i++]!;
      const right = b[j++]!;
      if (right.heading !== '') out.push({ kind: 'same', text: right.heading });
      out.push(...bodyDiff(left.lines, right.lines, budget));
    }
  }
  return out;
}
