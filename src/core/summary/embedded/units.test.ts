import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  chunkLong,
  cleanUnit,
  contentWords,
  isPhatic,
  MAX_UNIT_CHARS,
  splitClauses,
  splitSentences,
  textUnits,
} from './units.js';

describe('units', () => {
  it('splits sentences with the built-in segmenter and re-joins after abbreviations', () => {
    expect(splitSentences('I met Dr. Patel at 5 pm. She said hi! Did you see it?')).toEqual([
      'I met Dr. Patel at 5 pm.',
      'She said hi!',
      'Did you see it?',
    ]);
    expect(splitSentences('line one\n\nline two without a stop')).toEqual([
      'line one',
      'line two without a stop',
    ]);
  });

  it('splits clauses at dashes, semicolons and ", but / and / so / which"; in a chat at any comma and a conjunction before a new subject too, keeping each verbatim', () => {
    const sentence =
      'I adopted a beagle last week, and his name is Biscuit; the vet visit is on Friday — it was a long day';
    const clauses = splitClauses(sentence);
    expect(clauses).toEqual([
      'I adopted a beagle last week,',
      'and his name is Biscuit;',
      'the vet visit is on Friday —',
      'it was a long day',
    ]);
    for (const clause of clauses) expect(sentence).toContain(clause);
    // A clause of fewer than three words stays with its neighbour.
    expect(splitClauses('Yes, and so on')).toEqual(['Yes, and so on']);
    // In a chat, the fact and the feeling about it are two units: selection can keep the fact alone.
    const feeling = 'I went to a counseling workshop and it was really enlightening because I learned a lot';
    expect(splitClauses(feeling)).toEqual([feeling]);
    expect(splitClauses(feeling, true)).toEqual([
      'I went to a counseling workshop',
      'and it was really enlightening',
      'because I learned a lot',
    ]);
    // Code keeps its commas: a call's arguments are no clauses.
    const call = 'Then I ran parse(rows, cols, opts) again and it printed the same table';
    expect(splitClauses(call, true)).toEqual([call]);
    expect(splitClauses('After the race in Boston, we went out for pizza with the whole team', true)).toEqual(
      ['After the race in Boston,', 'we went out for pizza with the whole team'],
    );
    // A bracketed aside (a shared photo's caption) is a unit of its own: the fact is kept
    // without its 15-20 token description (issue 45: held-out LoCoMo 27.2% -> 29.6%).
    const photo =
      'I bought myself an adventure book with cool arts. [shared a photo of a person holding a book]';
    expect(textUnits(photo, true).map((u) => u.text)).toEqual([
      'I bought myself an adventure book with cool arts.',
      '[shared a photo of a person holding a book]',
    ]);
    // Only an aside in words: a file banner or an index in a tool's output stays with its line
    // (splitting there cost a fact of the SWE-agent fidelity set).
    for (const line of [
      'Opened the file [File: setup.py (94 lines total)]',
      'Install it with pip install -e . [dev]',
    ])
      expect(textUnits(line, true).map((u) => u.text)).toEqual([line]);
  });

  it('strips leading interjections, vocatives, emoji and markdown decoration, not time words', () => {
    expect(cleanUnit('Oh wow, Caroline, I finally booked the cabin 🎉')).toBe('I finally booked the cabin');
    expect(cleanUnit('## **Plan**: move the db')).toBe('Plan: move the db');
    expect(cleanUnit('- 3. Yesterday, I ran 10 km')).toBe('Yesterday, I ran 10 km');
    expect(cleanUnit('Caroline, look at this photo of the cabin')).toBe('look at this photo of the cabin');
    expect(cleanUnit('Jon!')).toBe('');
  });

  it('keeps a leading place, list or date that only looks like a vocative', () => {
    for (const text of [
      'Edinburgh, Scotland is where we moved last spring',
      'Python, Rust and Go are the languages I use',
      'Saturday, we hiked the ridge trail',
      'October, I start the new job',
    ])
      expect(cleanUnit(text)).toBe(text);
  });

  it('keeps content words and numbers, drops function words and small talk', () => {
    expect(contentWords("That's so fun, we adopted Biscuit's brother in 2023!")).toEqual([
      'adopted',
      'biscuit',
      'brother',
      '2023',
    ]);
    expect(contentWords('ae03feac-5fd5-406c-88a1-a04687d421fc')).toHaveLength(1);
  });

  it('the phatic filter drops greetings, thanks and bare reactions, keeps facts', () => {
    for (const text of [
      'Hi there!',
      'Great, thanks!',
      'That must have been fun.',
      "Can't wait.",
      'Thank you so much!',
      'Yep!',
    ])
      expect(isPhatic(cleanUnit(text) || text), text).toBe(true);
    for (const text of [
      'Thanks to the new job I moved to Tacoma.',
      'My sister named the baby Theo.',
      'The limit is 40 ms.',
    ])
      expect(isPhatic(text), text).toBe(false);
  });

  it('turns a chatty message into its fact units only', () => {
    const units = textUnits(
      'Hey Sam! How are you? Oh, and we finally adopted a corgi, we named him Waffles. Love that!',
    );
    expect(units.map((u) => u.text)).toEqual(['and we finally adopted a corgi, we named him Waffles.']);
    expect(
      textUnits('Oh, and we finally adopted a corgi, we named him Waffles.', true).map((u) => u.text),
    ).toEqual(['and we finally adopted a corgi,', 'we named him Waffles.']);
  });

  it('never cuts inside a word: long runs are left out, long units cut at whitespace', () => {
    const blob = 'a'.repeat(80_000);
    expect(textUnits(blob)).toEqual([]);
    const long = Array.from({ length: 200 }, (_, k) => `word${k}`).join(' ');
    const chunks = chunkLong(long);
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) {
      expect(chunk.length).toBeLessThanOrEqual(MAX_UNIT_CHARS);
      for (const word of chunk.split(' ')) expect(word).toMatch(/^word\d+$/);
    }
    expect(chunkLong(`key sk-${'x'.repeat(100)} end`)).toEqual(['key end']);
  });

  it('splits a line with no terminator as the segmenter does (one sentence, no segmenter call)', () => {
    // The segmenter's path for every line, as splitSentences was before its shortcut.
    const segmenter = new Intl.Segmenter('en', { granularity: 'sentence' });
    const abbreviation =
      /(?:^|[\s(])(?:mr|mrs|ms|dr|prof|st|sr|jr|vs|etc|e\.g|i\.e|approx|no|fig|inc|ltd|co|mt|dept|u\.s|[a-z])\.$/i;
    const segmented = (text: string) => {
      const out: string[] = [];
      for (const line of text.split('\n')) {
        if (line.trim() === '') continue;
        let pending = '';
        for (const { segment } of segmenter.segment(line)) {
          pending += segment;
          if (abbreviation.test(pending.trimEnd().slice(-12))) continue;
          if (pending.trim()) out.push(pending.trim());
          pending = '';
        }
        if (pending.trim()) out.push(pending.trim());
      }
      return out;
    };
    const piece = fc.constantFrom(
      'hi',
      ' ',
      '1',
      'Dr',
      'x',
      '.',
      '!',
      '?',
      '\n',
      '\r',
      '\u0085',
      '\u2028',
      '\u2029',
      '\u3002',
      '\u2024',
      '\uFF0E',
      '\u0964',
      '\u061F',
      '\u2026',
      '"',
      ')',
      '\t',
      '\u00A0',
      'A',
      'é',
      '🙂',
    );
    fc.assert(
      fc.property(
        fc.array(fc.oneof(piece, fc.string({ maxLength: 4 }), fc.string({ unit: 'binary', maxLength: 3 })), {
          maxLength: 14,
        }),
        (parts) => {
          const text = parts.join('');
          expect(splitSentences(text)).toEqual(segmented(text));
        },
      ),
      { numRuns: 3000 },
    );
  });
});
