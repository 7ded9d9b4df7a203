/**
 * Long multi-session personal conversations (seeded): two people chat over many dated
 * sessions; facts are stated in passing among greetings, reactions, questions and small
 * talk, and the last message asks about them. Each fact's probes must survive compaction.
 */
import { MONTHS } from '../src/core/summary/embedded/segments.js';
import { seededRandom } from '../src/testing/synthetic-session.js';
import type { FidelitySession, KeyFact } from './planted-session.js';

/** Options of {@link personalSession}. */
export interface PersonalSessionOptions {
  /** @default 1 */
  seed?: number;
  /** Dated sessions. @default 16 */
  sessions?: number;
  /** Facts planted. @default 12 */
  facts?: number;
}

export type Random = () => number;
export const pick = <T>(rand: Random, list: readonly T[]): T => list[Math.floor(rand() * list.length)]!;
export const int = (rand: Random, min: number, max: number) => min + Math.floor(rand() * (max - min + 1));

export function formatDate(d: Date): string {
  return `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}`;
}

/** A fact template: the sentence, its probes, and the question asked about it later. */
export interface FactTemplate {
  kind: string;
  make: (rand: Random, date: string) => { sentence: string; probes: string[]; question: string };
}

export const FACTS: FactTemplate[] = [
  {
    kind: 'pet',
    make: (rand) => {
      const name = pick(rand, [
        'Biscuit',
        'Pickle',
        'Juniper',
        'Waffles',
        'Mochi',
        'Clementine',
        'Ziggy',
        'Tofu',
      ]);
      const animal = pick(rand, ['beagle puppy', 'tabby kitten', 'rescue greyhound', 'corgi mix']);
      return {
        sentence: `Oh, and we finally adopted a ${animal}, we named him ${name}.`,
        probes: [name],
        question: 'what we named the pet we adopted',
      };
    },
  },
  {
    kind: 'book',
    make: (rand) => {
      const title = pick(rand, [
        'The Night Circus',
        'Piranesi',
        'Klara and the Sun',
        'The Overstory',
        'Project Hail Mary',
        'A Gentleman in Moscow',
        'The Remains of the Day',
      ]);
      return {
        sentence: `I just finished reading "${title}" and honestly could not put it down.`,
        probes: [title],
        question: 'which book I could not put down',
      };
    },
  },
  {
    kind: 'hobby',
    make: (rand) => {
      const hobby = pick(rand, [
        'wheel-throwing pottery',
        'salsa dancing',
        'indoor bouldering',
        'watercolor painting',
        'urban beekeeping',
        'woodcarving',
        'ukulele lessons',
      ]);
      return {
        sentence: `Work is fine, but the fun part is I signed up for ${hobby} at the community center on Thursdays.`,
        probes: [hobby],
        question: 'what I signed up for at the community center',
      };
    },
  },
  {
    kind: 'decision',
    make: (rand) => {
      const decision = pick(rand, [
        'turn down the offer from Halvorsen Logistics',
        'move to Tacoma in the spring',
        'sell the old Corolla',
        'enroll in the nursing program at Whitmore College',
        'keep the apartment on Linden Street',
      ]);
      return {
        sentence: `After a lot of back and forth I decided to ${decision}.`,
        probes: [decision],
        question: 'what I decided after all that back and forth',
      };
    },
  },
  {
    kind: 'family',
    make: (rand) => {
      const sibling = pick(rand, ['Priya', 'Marcus', 'Elena', 'Tobias']);
      const baby = pick(rand, ['Theo', 'Ada', 'Rafael', 'Wren', 'Otis']);
      return {
        sentence: `My sibling ${sibling} had a baby last month, they called the little one ${baby}.`,
        probes: [baby],
        question: "the name of my sibling's baby",
      };
    },
  },
  {
    kind: 'number',
    make: (rand) => {
      const time = `${int(rand, 1, 2)}:${int(rand, 10, 59)}:${String(int(rand, 0, 59)).padStart(2, '0')}`;
      return {
        sentence: `I ran the Riverside half marathon in ${time}, which is my best time so far.`,
        probes: [time],
        question: 'my half marathon time',
      };
    },
  },
  {
    kind: 'dated_event',
    make: (rand, date) => {
      const event = pick(rand, [
        'my first gallery show at the Loft',
        'the charity bake sale at Elmwood School',
        'my citizenship ceremony',
        'the open mic night at Bluebird Cafe',
      ]);
      return {
        sentence: `So ${event} happened today and I am still buzzing.`,
        probes: [event, date],
        question: 'on which day the event I was buzzing about took place',
      };
    },
  },
  {
    kind: 'place',
    make: (rand) => {
      const place = pick(rand, ['Lake Chelan', 'Tofino', 'the Outer Banks', 'Big Sur', 'Asheville', 'Moab']);
      return {
        sentence: `We booked a cabin near ${place} for the summer, two whole weeks.`,
        probes: [place],
        question: 'where we booked the summer cabin',
      };
    },
  },
  {
    kind: 'health',
    make: (rand) => {
      const thing = pick(rand, ['cashews', 'shellfish', 'kiwi', 'penicillin']);
      return {
        sentence: `Turns out I am allergic to ${thing}, the doctor confirmed it.`,
        probes: [`allergic to ${thing}`],
        question: 'what I am allergic to',
      };
    },
  },
  {
    kind: 'job',
    make: (rand) => {
      const role = pick(rand, ['data analyst', 'pastry chef', 'physical therapist', 'park ranger']);
      const company = pick(rand, [
        'Northwind Health',
        'Crumb & Co',
        'Cascade Parks Service',
        'Brightline Labs',
      ]);
      return {
        sentence: `Big news: I started as a ${role} at ${company} on Monday.`,
        probes: [role, company],
        question: 'my new job and where',
      };
    },
  },
  {
    kind: 'home',
    make: (rand) => {
      const street = pick(rand, ['Alder Street', 'Juniper Court', 'Harbor Lane', 'Maple Terrace']);
      return {
        sentence: `Traffic was awful, but the good news is I got the keys to the new place on ${street}.`,
        probes: [street],
        question: 'which street the new place is on',
      };
    },
  },
  {
    kind: 'gift',
    make: (rand) => {
      const gift = pick(rand, [
        'a vintage Polaroid camera',
        'a cast-iron dutch oven',
        'a telescope',
        'a sewing machine',
      ]);
      return {
        sentence: `For my birthday my partner got me ${gift}, I love it.`,
        probes: [gift],
        question: 'what my partner got me for my birthday',
      };
    },
  },
];

const GREETINGS = [
  'Hey {B}! How have you been?',
  'Hi {B}, long time no talk!',
  'Hey! Hope your week is going well.',
  'Good morning {B}!',
];
const REPLIES_TO_GREETING = [
  'Hey {A}! Good to hear from you.',
  'Hi! I have been good, thanks for asking.',
  'Hey {A}! Doing well, how about you?',
];
const REACTIONS = [
  'That is awesome!',
  'Wow, that sounds amazing.',
  'I am so happy for you!',
  'That must have been fun.',
  'Can not wait to hear more.',
  'Haha, classic.',
  'Oh no, that sounds rough.',
  'Thanks so much!',
  'That is so cool.',
  'Love that for you!',
];
const QUESTIONS = [
  'What have you been up to lately?',
  'How was your weekend?',
  'How is work going?',
  'Did you end up going?',
  'What are you reading these days?',
  'How is the family doing?',
  'Any plans for the holidays?',
];
const SMALL_TALK = [
  'Work has been busy with the end of the quarter.',
  'The weather has been pretty rainy here lately.',
  'I have been trying to get more sleep.',
  'We watched a movie last night, it was fine.',
  'I have been cooking at home more to save money.',
  'The kids have been keeping me busy.',
  'I went for a long walk by the river.',
  'My coffee machine broke again, so that was annoying.',
  'We had friends over for dinner on Saturday.',
  'I am trying to spend less time on my phone.',
  'The garden is finally starting to come back.',
  'I have been listening to a lot of podcasts on my commute.',
];
const ABOUT_YOU = [
  'You always know how to cheer me up.',
  'You should totally try it sometime.',
  'You are so talented, seriously.',
  'You have been such a good friend.',
];
const CLOSINGS = [
  'Anyway, I have to run. Talk soon!',
  'Bye! Take care!',
  'Okay, talk later!',
  'Have a great night!',
];

const fill = (text: string, a: string, b: string) => text.replaceAll('{A}', a).replaceAll('{B}', b);

/** Builds one long conversation with `facts` facts spread over `sessions` dated sessions. */
export function personalSession(options: PersonalSessionOptions = {}): FidelitySession {
  const seed = options.seed ?? 1;
  const rand = seededRandom(seed * 104_729 + 3);
  const sessions = options.sessions ?? 16;
  const nameA = pick(rand, ['Maya', 'Jonah', 'Aisha', 'Lukas']);
  const nameB = pick(rand, ['Sam', 'Noor', 'Felix', 'Ines']);
  const prefixed = seed % 2 === 1;
  const templates = [...FACTS].sort(() => rand() - 0.5).slice(0, options.facts ?? 12);
  // Facts go to sessions before the last, several may share one.
  const plan = templates.map((t) => ({ template: t, session: int(rand, 0, sessions - 2) }));
  const messages: Record<string, unknown>[] = [];
  const facts: KeyFact[] = [];
  const questions: string[] = [];
  let date = new Date(Date.UTC(2023, int(rand, 0, 5), int(rand, 1, 28)));
  for (let s = 0; s < sessions; s++) {
    date = new Date(date.getTime() + int(rand, 3, 20) * 86_400_000);
    const label = formatDate(date);
    const stamp =
      s % 2 === 0
        ? `[${label}, ${int(rand, 1, 11)}:${int(rand, 10, 59)} pm]`
        : `Session ${s + 1} — ${label}, ${int(rand, 8, 11)}:${int(rand, 10, 59)} am`;
    const turns = int(rand, 14, 22);
    const here = plan
      .filter((p) => p.session === s)
      .map((p) => ({ ...p.template.make(rand, label), kind: p.template.kind }));
    const slots = new Map(here.map((f) => [int(rand, 2, turns - 3), f]));
    for (let t = 0; t < turns; t++) {
      const user = t % 2 === 0;
      const me = user ? nameA : nameB;
      const parts: string[] = [];
      if (t === 0) parts.push(fill(pick(rand, GREETINGS), nameA, nameB));
      else if (t === 1) parts.push(fill(pick(rand, REPLIES_TO_GREETING), nameA, nameB));
      else if (t >= turns - 2) parts.push(pick(rand, CLOSINGS));
      else {
        if (rand() < 0.6) parts.push(pick(rand, REACTIONS));
        if (rand() < 0.7) parts.push(pick(rand, SMALL_TALK));
        if (rand() < 0.2) parts.push(pick(rand, ABOUT_YOU));
        if (rand() < 0.5) parts.push(pick(rand, QUESTIONS));
      }
      const fact = slots.get(t);
      if (fact) parts.splice(Math.min(1, parts.length), 0, fact.sentence);
      let content = parts.join(' ');
      if (prefixed) content = `${me}: ${content}`;
      if (t === 0) content = `${stamp}\n${content}`;
      messages.push({ role: user ? 'user' : 'assistant', content });
      if (fact) {
        facts.push({
          id: `${fact.kind}-${facts.length + 1}`,
          kind: 'identifier',
          probes: fact.probes,
          messageIndex: messages.length - 1,
        });
        questions.push(fact.question);
      }
    }
  }
  const ask = `Quick quiz, since you never forget anything: ${questions.map((q) => `do you remember ${q}?`).join(' ')}`;
  messages.push({ role: 'user', content: prefixed ? `${nameA}: ${ask}` : ask });
  return { name: `personal-${seed}`, messages, facts };
}
