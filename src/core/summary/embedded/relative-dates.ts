/**
 * Relative dates resolved against the date of the message that says them: "yesterday",
 * "last Friday", "next month", "3 weeks ago", "last year". A summary read weeks later cannot
 * tell which Friday; the resolved date follows the phrase in brackets. One bounded pattern,
 * one pass: linear on any input.
 */
import { formatDate, MONTHS } from './segments.js';

/** Day names, Sunday first (lower case). */
export const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];
const DAY_MS = 86_400_000;
const COUNT = '(\\d{1,2}|a|one|two|three|four|five|six|seven|eight|nine|ten|a couple of)';
const RELATIVE = new RegExp(
  `\\b(?:(yesterday|today|tonight|tomorrow|this morning|last night)|(last|next|this past|this coming) (sunday|monday|tuesday|wednesday|thursday|friday|saturday|weekend|week|month|year)|(this) (week|month|year)|${COUNT} (day|week|month|year)s? ago)\\b`,
  'gi',
);
const SMALL_NUMBERS: Record<string, number> = {
  a: 1,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  'a couple of': 2,
};

const addDays = (date: Date, days: number) => new Date(date.getTime() + days * DAY_MS);
const monthYear = (date: Date, months: number) => {
  const d = new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + months, 1));
  return `${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}`;
};

/** What a matched phrase means on `date`, as text. */
function resolve(match: RegExpExecArray, date: Date): string | undefined {
  const [, day, direction, unit, thisWord, thisUnit, count, countUnit] = match;
  if (day) {
    const phrase = day.toLowerCase();
    const offset = phrase === 'yesterday' || phrase === 'last night' ? -1 : phrase === 'tomorrow' ? 1 : 0;
    return formatDate(addDays(date, offset));
  }
  if (thisWord) {
    const u = thisUnit!.toLowerCase();
    if (u === 'week') return `the week of ${formatDate(date)}`;
    return u === 'month' ? monthYear(date, 0) : String(date.getUTCFullYear());
  }
  if (direction) {
    const back = direction.toLowerCase() === 'last' || direction.toLowerCase() === 'this past';
    const u = unit!.toLowerCase();
    const weekday = WEEKDAYS.indexOf(u);
    if (weekday >= 0) {
      const offset = back
        ? -((date.getUTCDay() - weekday + 7) % 7 || 7)
        : (weekday - date.getUTCDay() + 7) % 7 || 7;
      return formatDate(addDays(date, offset));
    }
    if (u === 'week' || u === 'weekend') return `the ${u} ${back ? 'before' : 'after'} ${formatDate(date)}`;
    if (u === 'month') return monthYear(date, back ? -1 : 1);
    return String(date.getUTCFullYear() + (back ? -1 : 1));
  }
  const n = SMALL_NUMBERS[count!.toLowerCase()] ?? Number(count);
  const u = countUnit!.toLowerCase();
  if (u === 'day') return formatDate(addDays(date, -n));
  if (u === 'week') return `the week of ${formatDate(addDays(date, -7 * n))}`;
  if (u === 'month') return monthYear(date, -n);
  return String(date.getUTCFullYear() - n);
}

/**
 * Resolves the relative dates in `text` against `date`: the date each means is inserted
 * right after its phrase (`yesterday (7 May 2023)`, `last month (April 2023)`, `last week
 * (the week before 8 May 2023)`). Returns `text` unchanged when there is no date.
 */
export function annotateRelativeDate(text: string, date: Date | undefined): string {
  if (!date) return text;
  let out = '';
  let from = 0;
  for (const match of text.matchAll(RELATIVE)) {
    const resolved = resolve(match as RegExpExecArray, date);
    const end = match.index + match[0].length;
    // Already resolved (a line carried from an earlier summary): leave it.
    if (!resolved || text.startsWith(' (', end)) continue;
    out += `${text.slice(from, end)} (${resolved})`;
    from = end;
  }
  return from === 0 ? text : out + text.slice(from);
}
