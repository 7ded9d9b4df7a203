import { describe, expect, it } from 'vitest';
import { messageList } from '../../../../test/support/compact-messages.js';
import { unitMaker } from '../../../../test/support/summary-units.js';
import { EmbeddedSummarizer } from './index.js';
import {
  inverseDocumentFrequency,
  scoreUnits,
  speakerNames,
  textSignal,
  toolSignal,
  wordWeight,
} from './score-units.js';

const unit = unitMaker();

describe('scoring', () => {
  it('rarity: a word in every unit is worth less than a word in one', () => {
    const idf = inverseDocumentFrequency([
      unit('weather rain'),
      unit('weather sun'),
      unit('weather Biscuit'),
    ]);
    expect(idf.get('biscuit')!).toBeGreaterThan(idf.get('weather')!);
  });

  it('signals raise titles, numbers, first-person facts, proper nouns and ids; lower questions and remarks to the other', () => {
    const base = textSignal('the weather turned rainy', 'assistant', false);
    expect(textSignal('I just finished "Piranesi"', 'assistant', false)).toBeGreaterThan(base);
    expect(textSignal('the race took 1:52:07', 'assistant', false)).toBeGreaterThan(base);
    expect(textSignal('we moved to Tacoma', 'assistant', false)).toBeGreaterThan(base);
    expect(textSignal('the weather turned rainy?', 'assistant', false)).toBeLessThan(base);
    expect(textSignal('you always cheer everyone up', 'assistant', false)).toBeLessThan(base);
    // In agent transcripts the user's words outrank the assistant's prose.
    expect(textSignal('use the staging db', 'user', true)).toBeGreaterThan(
      textSignal('use the staging db', 'assistant', true),
    );
  });

  it('tool facts: failures and state changes high, revealed ids higher, scratchpad near zero, reruns low', () => {
    const traits = { stateChanging: false, failed: false, scratch: false, superseded: false };
    const plain = toolSignal(traits, 'read_file(a.ts) → ok');
    expect(toolSignal({ ...traits, failed: true }, 'run(x) → Error: boom')).toBeGreaterThan(plain);
    expect(toolSignal({ ...traits, stateChanging: true }, 'cancel_order(#W1234567) → ok')).toBeGreaterThan(
      plain,
    );
    expect(toolSignal(traits, 'find_user(Maya) → maya_lopez_4821')).toBeGreaterThan(plain);
    expect(toolSignal({ ...traits, scratch: true }, 'think(plan) → ')).toBe(0);
    expect(toolSignal({ ...traits, superseded: true }, 'read_file(a.ts) → ok')).toBeLessThan(plain);
  });

  it('between people, a named clause ranks with a dated one and a photo caption lower (issue 45)', () => {
    const values = (people: boolean) => {
      const units = [
        unit('I took the kids to the museum yesterday (5 July 2023).'),
        unit('I loved "Becoming Nicole" by Amy Ellis Nutt.'),
        unit('[shared a photo of Lake Tahoe at sunset] I took the kids to the lake.'),
        unit('Work has been busy lately.'),
      ];
      scoreUnits(units, { agentic: false, people });
      return units.map((u) => u.value);
    };
    const [dated, named, caption] = values(false);
    // Without the people weights a dated clause outranks the named one.
    expect(dated!).toBeGreaterThan(named!);
    const [peopleDated, peopleNamed, peopleCaption] = values(true);
    expect(peopleNamed!).toBeGreaterThan(peopleDated!);
    expect(peopleCaption! / peopleDated!).toBeLessThan(caption! / dated!);
  });

  it("between people, the speakers' own names are no names: a clause said to the other ranks by its facts (issue 45)", () => {
    const said = (speaker: string, text: string) => unit(text, { speaker });
    const units = [
      said('Caroline', 'Right on, Mel!'),
      said('Melanie', 'Agreed, Caroline.'),
      said('Melanie', 'I got in a car accident in Denver.'),
      said('Caroline', 'I adopted a puppy named Coco.'),
      said('Caroline', 'Work has been busy lately.'),
    ];
    scoreUnits(units, { agentic: false, people: true });
    const [rightOn, agreed, accident, puppy, busy] = units.map((u) => u.value);
    // The vocatives weigh no more than a line of small talk, far below the facts ...
    expect(rightOn!).toBeLessThan(busy! * 1.5);
    expect(agreed!).toBeLessThan(busy! * 1.5);
    expect(agreed! * 5).toBeLessThan(accident!);
    // ... and a word that only begins like a name ("car" for Caroline) is still a word.
    expect(accident!).toBeGreaterThan(puppy! / 3);
    // Another person named (not a speaker) still counts.
    const other = [said('Caroline', 'No worries, Oscar!'), said('Caroline', 'Work has been busy lately.')];
    scoreUnits(other, { agentic: false, people: true });
    expect(other[0]!.value).toBeGreaterThan(other[1]!.value * 1.5);
  });

  it('speakerNames tells a name in full, or capitalized from its first three letters', () => {
    const name = speakerNames(['Melanie', 'Caroline', 'Al']);
    expect(name('melanie')).toBe(true);
    expect(name("Melanie's")).toBe(true);
    expect(name('Mel')).toBe(true);
    expect(name('mel')).toBe(false);
    expect(name('Car')).toBe(true);
    expect(name('car')).toBe(false);
    expect(name('Me')).toBe(false);
    expect(name('Oscar')).toBe(false);
    // A name of two letters is too short to tell.
    expect(name('Al')).toBe(false);
  });

  it('bare numbers weigh less, letter-digit codes more', () => {
    expect(wordWeight('4821')).toBeLessThan(1);
    expect(wordWeight('k7q2zp')).toBeGreaterThan(1);
    expect(wordWeight('biscuit')).toBe(1);
  });

  it('values a stated fact above small talk repeated all along, and a repeat only once', () => {
    const units = [
      ...Array.from({ length: 6 }, () => unit('Work has been busy with the end of the quarter.')),
      unit('The weather has been pretty rainy here lately.'),
      unit('We finally adopted a corgi, we named him Waffles.'),
    ];
    scoreUnits(units, { agentic: false });
    expect(units.slice(0, 5).every((u) => u.value === 0)).toBe(true);
    expect(units[7]!.value).toBeGreaterThan(units[5]!.value);
    expect(units[7]!.value).toBeGreaterThan(units[6]!.value);
  });
});

describe('facts get the room small talk had (issue 35)', () => {
  const summarizer = new EmbeddedSummarizer();
  const countTokens = (text: string) => Math.ceil(text.length / 4);
  const chat = () => {
    const list = messageList();
    const noise = [
      'It is so important to slow down sometimes, especially after weeks like these.',
      'Oh wow, that must have been so hard for you and the whole family.',
      'Work has been really busy lately with all the meetings.',
      'I hope you got some rest after such a long week of travel.',
      'Work has been so busy, the meetings never end.',
      'Honestly I am so proud of you for getting through the semester.',
      'Work has been busy again, so many meetings this week.',
    ];
    list.user('Hi Sam, long time no talk!');
    list.assistant(noise[0]!);
    list.user(noise[1]!);
    list.user('We booked a cabin near Tofino for the summer, two whole weeks.');
    list.assistant(noise[2]!);
    list.user(noise[3]!);
    list.assistant(noise[4]!);
    list.user('My sister Elena had a baby last month, they called him Otis.');
    list.assistant(noise[5]!);
    list.user(noise[6]!);
    return list.messages;
  };

  it('names, places and events outrank sympathy, pleasantries and a recurring theme', () => {
    const text = summarizer.summarizeSync({
      strategy: 'task_state',
      messages: chat(),
      maxTokens: 75,
      countTokens,
    });
    expect(text).toContain('Tofino');
    expect(text).toContain('Otis');
    expect(text).not.toContain('slow down');
    expect(text).not.toContain('so hard for you');
    expect(text).not.toContain('proud of you');
    // What room the facts leave is filled, by one line of the recurring theme at most.
    expect(text.match(/busy/g)?.length ?? 0).toBeLessThanOrEqual(1);
  });

  it('a theme that keeps coming back counts for less than the same words said once', () => {
    const recurring = [
      unit('Work has been busy with meetings.'),
      unit('Work is busy, meetings all day.'),
      unit('So busy at work, meetings again.'),
      unit('We adopted a puppy named Biscuit.'),
    ];
    scoreUnits(recurring, { agentic: false });
    expect(recurring[0]!.value).toBeLessThan(recurring[3]!.value / 2);
    expect(textSignal('That must have been so hard for you.', 'user', false)).toBeLessThan(
      textSignal('We booked a cabin near Tofino.', 'user', false) / 4,
    );
  });
});
