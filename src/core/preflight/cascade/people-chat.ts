/**
 * A chat between people: two or more `Name:` speakers and no tool call, in the view or in
 * the previous summary (its tool lines read `- name(args) → ...`). The built-in summarizer
 * reads the same signs (summary/embedded/index.ts); the plan gives such a chat's summary the
 * room its facts need (plan-summary.ts).
 */
import { releaseRegExpCode } from '../../process-caches.js';
import { findSpeakers } from '../../summary/embedded/segments.js';
import type { ViewEntry } from '../session-view.js';

/** Text messages read for speakers (the newest): enough to see two names said twice each. */
export const SPEAKER_SCAN_MESSAGES = 64;
/** A tool fact line of a summary written by the built-in summarizer. */
const TOOL_LINE = /^- [\w.:-]{1,64}\(/m;

/** True when `entries` (and `previousSummary`) are a chat between named people (see the module comment). */
export function isPeopleChat(entries: readonly ViewEntry[], previousSummary: string | undefined): boolean {
  if (previousSummary && TOOL_LINE.test(previousSummary)) return false;
  const texts: { text: string }[] = [];
  for (let k = entries.length - 1; k >= 0; k--) {
    const parsed = entries[k]!.content ?? entries[k]!.item.entry.parsed;
    if (parsed.role === 'tool' || parsed.toolCalls.length > 0 || parsed.toolResults.length > 0) return false;
    if (texts.length < SPEAKER_SCAN_MESSAGES && (parsed.role === 'user' || parsed.role === 'assistant'))
      texts.push({ text: parsed.text });
  }
  return findSpeakers(texts).size >= 2;
}

// Their machine code is dropped when the last manager shuts down (process-caches.ts).
releaseRegExpCode(TOOL_LINE);
