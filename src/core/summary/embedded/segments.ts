/**
 * Dated segments and speakers. A date stamp opening a message (`[8 May 2023]`,
 * `1:56 pm on 8 May, 2023`, `2023-05-08`), or a timestamp in the message's metadata, opens a
 * dated segment; a `Name:` prefix (a name seen on two lines or more) is the speaker. Relative
 * dates ("yesterday", "last Friday", "3 days ago") are resolved against the segment's date
 * (`relative-dates.ts`).
 */

import { ChunkedList } from '../../chunked-list.js';
import type { CompactMessage } from '../../messages/message.js';
import { releaseRegExpCode } from '../../process-caches.js';
import { runSteps, type Steps } from '../../time-slice.js';
import { type Segment, UNDATED_LABEL } from './types.js';

/** Month names, January first (dates in segments and stamps). */
export const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];
const MONTH_INDEX = new Map(MONTHS.flatMap((m, i) => [[m.slice(0, 3).toLowerCase(), i] as const]));

/** A stamp line is at most this long. */
const MAX_STAMP_CHARS = 80;
const ISO_DATE = /(\d{4})-(\d{2})-(\d{2})/;
const DAY_MONTH_YEAR = /\b(\d{1,2})(?:st|nd|rd|th)?\s+([A-Za-z]{3,9})\.?,?\s+(\d{4})\b/;
const MONTH_DAY_YEAR = /\b([A-Za-z]{3,9})\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})\b/;
/** What a stamp may hold besides its date. */
const STAMP_FILLER =
  /^[\s\d:.,;()[\]|/@#*_—–-]*(?:(?:session|date|time|am|pm|on|at|utc|gmt|day|conversation|chat|z)\b[\s\d:.,;()[\]|/@#*_—–-]*)*$/i;

/** Formats a date as a segment heading: `8 May 2023`. */
export function formatDate(date: Date): string {
  return `${date.getUTCDate()} ${MONTHS[date.getUTCMonth()]} ${date.getUTCFullYear()}`;
}

function utcDate(year: number, month: number, day: number): Date | undefined {
  if (month < 0 || month > 11 || day < 1 || day > 31 || year < 1900 || year > 2200) return undefined;
  return new Date(Date.UTC(year, month, day));
}

/** The date written in `text` (ISO, `8 May 2023` or `May 8, 2023`) and where it sits. */
export function findDate(text: string): { date: Date; index: number; length: number } | undefined {
  const iso = ISO_DATE.exec(text);
  if (iso) {
    const date = utcDate(Number(iso[1]), Number(iso[2]) - 1, Number(iso[3]));
    if (date) return { date, index: iso.index, length: iso[0].length };
  }
  const dmy = DAY_MONTH_YEAR.exec(text);
  const dmyMonth = dmy ? MONTH_INDEX.get(dmy[2]!.slice(0, 3).toLowerCase()) : undefined;
  if (dmy && dmyMonth !== undefined) {
    const date = utcDate(Number(dmy[3]), dmyMonth, Number(dmy[1]));
    if (date) return { date, index: dmy.index, length: dmy[0].length };
  }
  const mdy = MONTH_DAY_YEAR.exec(text);
  const mdyMonth = mdy ? MONTH_INDEX.get(mdy[1]!.slice(0, 3).toLowerCase()) : undefined;
  if (mdy && mdyMonth !== undefined) {
    const date = utcDate(Number(mdy[3]), mdyMonth, Number(mdy[2]));
    if (date) return { date, index: mdy.index, length: mdy[0].length };
  }
  return undefined;
}

/**
 * A date stamp opening `text`: a short first line that is only a date (with a time or a
 * session number), or a bracketed prefix holding a date. Returns the date and the rest.
 */
export function parseStamp(text: string): { date: Date; rest: string } | undefined {
  const start = text.trimStart();
  if (start.startsWith('[')) {
    const close = start.indexOf(']');
    if (close > 0 && close <= MAX_STAMP_CHARS) {
      const found = findDate(start.slice(1, close));
      if (found) return { date: found.date, rest: start.slice(close + 1).trim() };
    }
  }
  const newline = start.indexOf('\n');
  const first = newline < 0 ? start : start.slice(0, newline);
  if (first.length > MAX_STAMP_CHARS) return undefined;
  const found = findDate(first);
  if (!found) return undefined;
  const leftover = first.slice(0, found.index) + first.slice(found.index + found.length);
  if (!STAMP_FILLER.test(leftover)) return undefined;
  return { date: found.date, rest: newline < 0 ? '' : start.slice(newline + 1).trim() };
}

/** The date in a message's metadata (`timestamp`, `date`, `time`, `createdAt`: ISO text, or epoch ms / s). */
export function metaDate(message: Pick<CompactMessage, 'meta'>): Date | undefined {
  const meta = message.meta;
  if (!meta) return undefined;
  const value = meta.timestamp ?? meta.date ?? meta.time ?? meta.createdAt;
  let ms: number | undefined;
  if (typeof value === 'number' && Number.isFinite(value)) ms = value < 1e11 ? value * 1000 : value;
  else if (typeof value === 'string') ms = Date.parse(value);
  if (ms === undefined || Number.isNaN(ms)) return undefined;
  const d = new Date(ms);
  return utcDate(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
}

const SPEAKER_PREFIX = /^([A-Z][\w.'’-]{0,20}(?: [A-Z][\w.'’-]{0,20})?):[ \t]+/;
/** Prefixes that label content rather than name a speaker. */
const LABELS = new Set(
  `note decision constraint todo goal goals error warning update edit step summary question answer remaining blocked
follow-up next hard rule found it still open result output input status reason plan action observation thought
success criteria important fix bug issue problem solution example tip fyi ps re subject title`.split(/\s+/),
);

/** Names used as a `Name:` prefix on at least two lines of the messages. */
export function findSpeakers(messages: readonly Pick<CompactMessage, 'text'>[]): Set<string> {
  return runSteps(findSpeakersSteps(messages));
}

/** Messages read between two steps of the walks below (16k messages at once held the loop ~20 ms). */
const STEP_MESSAGES = 256;

/** {@link findSpeakers} as steps, one every {@link STEP_MESSAGES} messages. */
export function* findSpeakersSteps(messages: readonly Pick<CompactMessage, 'text'>[]): Steps<Set<string>> {
  const counts = new Map<string, number>();
  for (let index = 0; index < messages.length; index++) {
    if (index % STEP_MESSAGES === STEP_MESSAGES - 1) yield;
    const message = messages[index]!;
    for (const line of message.text.split('\n')) {
      const match = SPEAKER_PREFIX.exec(line);
      if (!match || LABELS.has(match[1]!.toLowerCase())) continue;
      counts.set(match[1]!, (counts.get(match[1]!) ?? 0) + 1);
    }
  }
  return new Set([...counts].filter(([, n]) => n >= 2).map(([name]) => name));
}

/** A run of one speaker's text in one message. */
export interface SpeakerPart {
  speaker: string;
  text: string;
}

/** Splits a message text into runs of one speaker, by `Name:` line prefixes. */
export function speakerParts(text: string, fallback: string, speakers: ReadonlySet<string>): SpeakerPart[] {
  if (speakers.size === 0) return [{ speaker: fallback, text }];
  const parts: SpeakerPart[] = [];
  let current: SpeakerPart = { speaker: fallback, text: '' };
  for (const line of text.split('\n')) {
    const match = SPEAKER_PREFIX.exec(line);
    if (match && speakers.has(match[1]!)) {
      if (current.text.trim()) parts.push(current);
      current = { speaker: match[1]!, text: line.slice(match[0].length) };
    } else current.text += current.text ? `\n${line}` : line;
  }
  if (current.text.trim()) parts.push(current);
  return parts;
}

/** A message placed in its segment, with its text split by speaker. */
export interface PlacedMessage {
  segment: number;
  parts: SpeakerPart[];
}

/** The speaker of a message without a `Name:` prefix: its wire `name`, else its role. */
function roleSpeaker(message: CompactMessage): string {
  const name = (message.raw as { name?: unknown } | null)?.name;
  return typeof name === 'string' && name.length > 0 && name.length <= 40 ? name : message.role;
}

/**
 * Places each message in a segment. `segments` may hold the previous summary's segments:
 * the same date reuses its segment, and messages with no date continue the last one.
 */
export function placeMessages(messages: readonly CompactMessage[], segments: Segment[]): PlacedMessage[] {
  return runSteps(placeMessagesSteps(messages, segments));
}

/** {@link placeMessages} as steps, one every {@link STEP_MESSAGES} messages. */
export function* placeMessagesSteps(
  messages: readonly CompactMessage[],
  segments: Segment[],
): Steps<PlacedMessage[]> {
  const speakers = yield* findSpeakersSteps(messages);
  const byLabel = new Map(segments.map((s, i) => [s.label, i]));
  const open = (label: string, date?: Date): number => {
    let index = byLabel.get(label);
    if (index === undefined) {
      index = segments.length;
      segments.push(date ? { label, date } : { label });
      byLabel.set(label, index);
    }
    return index;
  };
  let current = segments.length > 0 ? segments.length - 1 : -1;
  const placed = new ChunkedList<PlacedMessage>();
  for (let index = 0; index < messages.length; index++) {
    if (index % STEP_MESSAGES === STEP_MESSAGES - 1) yield;
    const message = messages[index]!;
    const stamp = parseStamp(message.text);
    const date = stamp?.date ?? metaDate(message);
    if (date) current = open(formatDate(date), date);
    else if (current < 0) current = open(UNDATED_LABEL);
    const text = stamp ? stamp.rest : message.text;
    placed.push({ segment: current, parts: speakerParts(text, roleSpeaker(message), speakers) });
  }
  yield;
  return placed.toArray();
}

// Their machine code is dropped when the last manager shuts down (process-caches.ts).
releaseRegExpCode(ISO_DATE, DAY_MONTH_YEAR, MONTH_DAY_YEAR, STAMP_FILLER, SPEAKER_PREFIX);
