/**
 * Harder personal conversations (issue 35): the facts of eval/personal-sessions.ts, stated
 * once in passing in the first half of the conversation and asked about only at its end,
 * among the noise of real chats: pleasantries, emotional reactions and sympathy (with modal
 * verbs and "important" in them), questions back about the other's life, topic drift with
 * names, numbers and places nobody asks about, as many other facts of the same kinds that
 * are never asked about, and themes that come back session after session. The old generator
 * stays beside it (its figures are kept for one wave).
 */
import { seededRandom } from '../src/testing/synthetic-session.js';
import { FACTS, formatDate, int, pick, type Random } from './personal-sessions.js';
import type { FidelitySession, KeyFact } from './planted-session.js';

/** Options of {@link noisyPersonalSession}. */
export interface NoisyPersonalOptions {
  /** @default 1 */
  seed?: number;
  /** Dated sessions. @default 16 */
  sessions?: number;
  /** Facts planted and asked about at the end. @default 12 */
  facts?: number;
  /** Facts of the same kinds mentioned and never asked about. @default 12 */
  unasked?: number;
}

const PLEASANTRIES = [
  'Hey {B}! So good to hear from you again.',
  'Hi {B}! How have you been holding up?',
  'Hope you got some rest after such a week.',
  'Morning! I just made coffee and thought of you.',
  'Thanks so much for checking in, it really means a lot.',
  'Aww, you are the sweetest, thank you!',
];
const REACTIONS = [
  'That must have been amazing!',
  'Oh wow, that must have been so hard for you.',
  'It is so important to slow down sometimes.',
  'You must be so proud of yourself!',
  'I am so sorry you had to deal with that.',
  'That sounds absolutely wonderful, I am so happy for you!',
  'Honestly, you should be really proud.',
  'It is important to take care of yourself, you know.',
  'Wow, I can only imagine how that felt!',
  'Haha, that is hilarious, I would have lost it.',
];
const QUESTIONS_BACK = [
  'What did you like to read as a kid?',
  'How did that make you feel?',
  'Do you ever miss living near the ocean?',
  'What is your favorite thing to cook when you have time?',
  'Did you always want to do what you do now?',
  'How do you usually unwind after a long day?',
  'What was the best trip you ever took?',
];
/** Drift: talk about other people, places and numbers nobody asks about later. */
const DRIFT = [
  'My cousin Dana just got back from Lisbon, she said the trams were packed.',
  'We watched the game last night, the Hawks lost 98 to 104 in overtime.',
  'The neighbors on Birch Road are repainting their fence again, third time this year.',
  'My coworker Malik keeps talking about his sourdough starter, it is called Gerald.',
  'I saw that the bakery on 5th Street closed after 22 years.',
  'Our book club picked a thriller this month, I forget the title already.',
  'My mom called for an hour about her tomato plants.',
  'There was a 40 minute delay on the train this morning.',
  'Remember when we got lost driving to that wedding in Fresno?',
  'I have been thinking about repainting the kitchen a pale green.',
  'Work was a blur, two deadlines moved up to Friday.',
  'I tried that new ramen place near the station, it was fine.',
];
/** Themes that come back session after session (they should collapse to one line). */
const THEMES = [
  'Work has been really busy lately with all the meetings.',
  'Work has been so busy, the meetings never end.',
  'I have been so tired lately, work is just a lot right now.',
  'I really need to get more sleep, I keep staying up too late.',
  'I keep saying I will sleep more, but here I am up late again.',
];
const CLOSINGS = [
  'Anyway, I should let you go. Take care!',
  'Okay, talk soon! Sending hugs.',
  'Gotta run, but this was so nice. Bye!',
  'Have a great night, and get some rest!',
];
/** Lead-ins that bury a fact in the middle of a turn. */
const PASSING = [
  'Oh, and by the way, ',
  'Random thing, but ',
  'Not a big deal, but ',
  'Totally forgot to say, ',
];

const fill = (text: string, b: string) => text.replaceAll('{B}', b);
const lower = (text: string) => text[0]!.toLowerCase() + text.slice(1);

/** One noisy turn: some of pleasantry, reaction, question back, drift, theme. */
function noise(rand: Random): string[] {
  const parts: string[] = [];
  if (rand() < 0.6) parts.push(pick(rand, REACTIONS));
  if (rand() < 0.45) parts.push(pick(rand, DRIFT));
  if (rand() < 0.3) parts.push(pick(rand, THEMES));
  if (rand() < 0.5) parts.push(pick(rand, QUESTIONS_BACK));
  if (parts.length === 0) parts.push(pick(rand, REACTIONS));
  return parts;
}

/** Builds one noisy conversation; the facts sit in the first half, the quiz comes at the end. */
export function noisyPersonalSession(options: NoisyPersonalOptions = {}): FidelitySession {
  const seed = options.seed ?? 1;
  const rand = seededRandom(seed * 7_919 + 11);
  const sessions = options.sessions ?? 16;
  const nameB = pick(rand, ['Sam', 'Noor', 'Felix', 'Ines']);
  const labels: string[] = [];
  let date = new Date(Date.UTC(2023, int(rand, 0, 5), int(rand, 1, 28)));
  for (let s = 0; s < sessions; s++) {
    date = new Date(date.getTime() + int(rand, 3, 20) * 86_400_000);
    labels.push(formatDate(date));
  }
  // Asked facts in the first half; unasked ones anywhere, never naming an asked probe (a
  // mention of it would count as the asked fact kept).
  const half = Math.max(1, Math.floor(sessions / 2));
  const made = (template: (typeof FACTS)[number], session: number, asked: boolean) => ({
    ...template.make(rand, labels[session]!),
    kind: template.kind,
    session,
    asked,
  });
  const planned = [...FACTS]
    .sort(() => rand() - 0.5)
    .slice(0, options.facts ?? 12)
    .map((t) => made(t, int(rand, 0, half - 1), true));
  const askedProbes = planned.flatMap((f) => f.probes);
  for (let k = 0; k < (options.unasked ?? 12); k++) {
    const fact = made(pick(rand, FACTS), int(rand, 0, sessions - 2), false);
    if (!askedProbes.some((probe) => fact.sentence.includes(probe))) planned.push(fact);
  }
  const messages: Record<string, unknown>[] = [];
  const facts: KeyFact[] = [];
  const questions: string[] = [];
  for (let s = 0; s < sessions; s++) {
    const turns = int(rand, 16, 24);
    const slots = new Map<number, (typeof planned)[number]>();
    for (const fact of planned.filter((f) => f.session === s)) {
      const free = Array.from({ length: turns - 4 }, (_, i) => i + 2).filter((t) => !slots.has(t));
      if (free.length > 0) slots.set(pick(rand, free), fact);
    }
    for (let t = 0; t < turns; t++) {
      let parts: string[];
      if (t === 0) parts = [fill(pick(rand, PLEASANTRIES), nameB)];
      else if (t >= turns - 2) parts = [pick(rand, CLOSINGS)];
      else parts = noise(rand);
      const fact = slots.get(t);
      // In passing: after a reaction, before more noise, sometimes led in as an aside.
      if (fact)
        parts.splice(
          Math.min(1, parts.length),
          0,
          rand() < 0.5 ? `${pick(rand, PASSING)}${lower(fact.sentence)}` : fact.sentence,
        );
      let content = parts.join(' ');
      if (t === 0) content = `[${labels[s]}, ${int(rand, 1, 11)}:${int(rand, 10, 59)} pm]\n${content}`;
      messages.push({ role: t % 2 === 0 ? 'user' : 'assistant', content });
      if (fact?.asked) {
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
  const ask = `Okay, memory test, since you never forget anything: ${questions.map((q) => `do you remember ${q}?`).join(' ')}`;
  messages.push({ role: 'user', content: ask });
  return { name: `personal-noisy-${seed}`, messages, facts };
}
