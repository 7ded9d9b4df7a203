import { describe, expect, it } from 'vitest';
import { messageList } from '../../../../test/support/compact-messages.js';
import { annotateRelativeDate } from './relative-dates.js';
import {
  findSpeakers,
  formatDate,
  metaDate,
  parseStamp,
  placeMessages,
  placeMessagesSteps,
  speakerParts,
} from './segments.js';
import type { Segment } from './types.js';

describe('segments', () => {
  it('reads date stamps that open a message, in several shapes', () => {
    for (const [text, label] of [
      ['[8 May 2023, 1:56 pm]\nHey!', '8 May 2023'],
      ['1:56 pm on 8 May, 2023\nHey!', '8 May 2023'],
      ['Session 3 — 2023-05-08 10:00\nHey!', '8 May 2023'],
      ['May 8, 2023\nHey!', '8 May 2023'],
      ['[2024-02-29] Leap day plans', '29 February 2024'],
    ] as const) {
      const stamp = parseStamp(text);
      expect(stamp && formatDate(stamp.date), text).toBe(label);
    }
    expect(parseStamp('[8 May 2023, 1:56 pm]\nHey!')!.rest).toBe('Hey!');
    // A date inside a sentence is content, not a stamp.
    expect(parseStamp('We moved on 8 May 2023 to Tacoma.')).toBeUndefined();
    expect(parseStamp('The deadline is 2023-05-08, please hurry')).toBeUndefined();
  });

  it('reads a timestamp from message metadata (ISO text, epoch ms or s)', () => {
    expect(formatDate(metaDate({ meta: { timestamp: '2023-05-08T13:56:00Z' } })!)).toBe('8 May 2023');
    expect(formatDate(metaDate({ meta: { createdAt: Date.UTC(2023, 4, 8, 12) } })!)).toBe('8 May 2023');
    expect(formatDate(metaDate({ meta: { time: Date.UTC(2023, 4, 8) / 1000 } })!)).toBe('8 May 2023');
    expect(metaDate({ meta: { timestamp: 'soon' } })).toBeUndefined();
  });

  it('a stamp opens a dated segment; later undated messages continue it; the same date reuses it', () => {
    const list = messageList();
    list.user('hello, no date yet');
    list.user('[8 May 2023]\nCaroline: I went to the support group.');
    list.assistant('That is great.');
    list.user('Session 2 — 20 May 2023\nMore news.');
    list.user('', { meta: { timestamp: '2023-05-08T09:00:00Z' } });
    const segments: Segment[] = [];
    const placed = placeMessages(list.messages, segments);
    expect(segments.map((s) => s.label)).toEqual(['Conversation', '8 May 2023', '20 May 2023']);
    expect(placed.map((p) => p.segment)).toEqual([0, 1, 1, 2, 1]);
  });

  it('places a long conversation in steps, the same as at once (issue 47: no 16k-message walk in one stretch)', () => {
    const list = messageList();
    for (let i = 0; i < 2_000; i++) {
      if (i % 300 === 0) list.user(`[${1 + (i % 28)} May 2023]\nCaroline: day ${i}\nMelanie: ok`);
      else if (i % 2) list.assistant(`Melanie: reply ${i}`);
      else list.user(`Caroline: message ${i}`);
    }
    const atOnce: Segment[] = [{ label: 'Conversation' }];
    const expected = placeMessages(list.messages, atOnce);
    const inSteps: Segment[] = [{ label: 'Conversation' }];
    const steps = placeMessagesSteps(list.messages, inSteps);
    let pauses = 0;
    let step = steps.next();
    for (; !step.done; step = steps.next()) pauses++;
    // Pauses mid-way (every few hundred messages), and the same placement and segments.
    expect(pauses).toBeGreaterThan(2);
    expect(step.value).toEqual(expected);
    expect(inSteps).toEqual(atOnce);
  });

  it('a "Name:" prefix seen on two lines or more is a speaker; labels are not', () => {
    const texts = [
      'Caroline: hi\nMelanie: hey',
      'Caroline: I adopted a dog.',
      'Note: keep this',
      'Decision: use Redis',
    ];
    const speakers = findSpeakers(texts.map((text) => ({ text })));
    expect([...speakers]).toEqual(['Caroline']);
    expect(
      speakerParts(
        'Caroline: I adopted a dog.\nIt is a corgi.\nMelanie: nice',
        'user',
        new Set(['Caroline', 'Melanie']),
      ),
    ).toEqual([
      { speaker: 'Caroline', text: 'I adopted a dog.\nIt is a corgi.' },
      { speaker: 'Melanie', text: 'nice' },
    ]);
    expect(speakerParts('Note: x', 'assistant', speakers)).toEqual([
      { speaker: 'assistant', text: 'Note: x' },
    ]);
  });

  it('resolves relative dates against the segment date, right after the phrase', () => {
    const monday = new Date(Date.UTC(2023, 4, 8));
    expect(annotateRelativeDate('I went to the group yesterday.', monday)).toBe(
      'I went to the group yesterday (7 May 2023).',
    );
    expect(annotateRelativeDate('We met last Friday at noon', monday)).toBe(
      'We met last Friday (5 May 2023) at noon',
    );
    expect(annotateRelativeDate('It broke 3 days ago', monday)).toBe('It broke 3 days ago (5 May 2023)');
    expect(annotateRelativeDate('It broke yesterday', undefined)).toBe('It broke yesterday');
  });
});
