/**
 * The summary's first sections: what the user asked. `## Task` quotes the opening request
 * (and keeps it through every later version); `## User instructions` quotes every user
 * sentence that asks the assistant to do, keep, avoid or prefer something
 * (instruction-sentence.ts: imperatives, requests, don't, never, always, must, use X not Y,
 * deadlines), not small talk with a modal verb in it. Both are carried from the previous summary
 * into every later version until a later instruction on the same thing supersedes one; they
 * get their room before anything else.
 */

import { INSTRUCTION_THRESHOLD } from '../../language/instruction-model.js';
import {
  type InstructionContext,
  instructionContextSteps,
  isInstructionSentence,
  type LaterCue,
  laterCuesOf,
  type MaterialCue,
  materialCuesOf,
  positionOf,
  type SentencePosition,
} from '../../language/instruction-sentence.js';
import { findIdentifiers } from '../../language/key-identifiers.js';
import type { CompactMessage } from '../../messages/message.js';
import { releaseRegExpCode } from '../../process-caches.js';
import { runSteps, type Steps } from '../../time-slice.js';
import { contentWords, splitSentences } from './units.js';

/** The heading of the task section. */
export const TASK_TITLE = 'Task';
/** The heading of the user's instructions section. */
export const INSTRUCTIONS_TITLE = 'User instructions';
/** Share of the summary budget the task may take. */
export const TASK_SHARE = 0.2;
/** Share of the summary budget the instructions may take. */
export const INSTRUCTIONS_SHARE = 0.3;
/** Summary size (tokens) from which the instructions get their whole share. */
export const FULL_INSTRUCTIONS_SHARE_FROM = 1024;

/**
 * The instructions' share of a summary of `maxTokens`: {@link INSTRUCTIONS_SHARE}, scaled down
 * by `maxTokens / 1024` below 1024 tokens. A small summary (a rolling one at 1/10 or 1/20 of a
 * coding session) spent 30% of itself on carried instructions and kept too few facts of the
 * work: on SWE-agent transcripts the fact rows went from 52.9% to 64.7% (one-shot 10:1) and
 * 47.1% to 70.6% (rolling 10:1) with the scaled share, the user's asks still all kept (issue 45).
 */
export function instructionsShareOf(maxTokens: number): number {
  return maxTokens >= FULL_INSTRUCTIONS_SHARE_FROM
    ? INSTRUCTIONS_SHARE
    : (INSTRUCTIONS_SHARE * Math.max(0, maxTokens)) / FULL_INSTRUCTIONS_SHARE_FROM;
}
/**
 * The model's log-odds a sentence needs to be quoted under "User instructions" (probability
 * about 0.88): that section takes its room before anything else and is carried into every
 * later version, so it holds the sure instructions; a sentence the model is less sure of stays
 * a line of the conversation, where it competes by value like any other (issue 45).
 */
export const HEAD_INSTRUCTION_LOG_ODDS = 2;
/**
 * The log-odds a sentence of the opening message (the one `## Task` quotes) needs: the model's
 * own threshold (more likely than not). A short opening message is carried whole in the task
 * quote, its less sure instructions with it; a long one (a pasted spec with "Always answer in
 * French." in it, log-odds 1.5-1.95) is quoted up to `MAX_QUOTE_CHARS`, and a sentence beyond
 * the quote held to the head threshold stayed a line of the conversation, lost to a later
 * rolling summary (review-85b: gone after round 145 of 150).
 */
export const OPENING_INSTRUCTION_LOG_ODDS = INSTRUCTION_THRESHOLD;
/** Longest quote of one message (longer ones are cut at a word). */
const MAX_QUOTE_CHARS = 700;
/** Longest user message read for instructions (a paste beyond it is data, not instructions). */
const MAX_SCAN_CHARS = 20_000;

/** Text a framework injects into a user turn (`<system-reminder>`, `<environment_context>`...). */
const INJECTED = /^\s*<[a-z][\w-]{0,40}>/i;
const HEADING = /^#{1,3}\s+(.+?)\s*$/;
const MARKUP = /<\/?compact-summary/i;
/** A transcript pasted as one user turn: a `[date]` stamp first, or several `Name: ` lines. */
const STAMP = /^\s*\[[^\]\n]{1,40}\]/;
const SPEAKER_LINE = /^[\w.'’-]{1,30}(?: [\w.'’-]{1,20})?: /gm;

/** The user's sections of a summary. */
export interface UserSections {
  task: string[];
  instructions: string[];
}

/** A previous summary split into its user sections and the rest of its body. */
export function splitUserSections(body: string | undefined): UserSections & { rest: string | undefined } {
  const out: UserSections & { rest: string | undefined } = { task: [], instructions: [], rest: body };
  if (!body) return out;
  const rest: string[] = [];
  let into: string[] | undefined;
  for (const line of body.split('\n')) {
    const heading = HEADING.exec(line);
    if (heading) {
      into =
        heading[1] === TASK_TITLE
          ? out.task
          : heading[1] === INSTRUCTIONS_TITLE
            ? out.instructions
            : undefined;
      if (into) continue;
    }
    if (!into) rest.push(line);
    else if (line.trim()) into.push(line.replace(/^\s*[-*•]\s+/, '').trim());
  }
  out.rest = rest.join('\n');
  return out;
}

/** `text` flattened and cut at a word under `max` characters. */
function quote(text: string, max = MAX_QUOTE_CHARS): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= max) return `"${flat}"`;
  const cut = flat.slice(0, max);
  return `"${cut.slice(0, Math.max(0, cut.lastIndexOf(' ')))} …"`;
}

/**
 * True when `sentence`, said to `context` at `position` among its message's sentences (`later`:
 * what the sentences after it ask; `material`: whether it stands in quoted material), asks the
 * assistant to do, keep, avoid or prefer something.
 */
export function isInstruction(
  sentence: string,
  context: InstructionContext = 'assistant',
  position?: SentencePosition,
  later?: LaterCue,
  material?: MaterialCue,
  threshold = HEAD_INSTRUCTION_LOG_ODDS,
): boolean {
  return isInstructionSentence(sentence, context, threshold, position, later, material);
}

/** True when `message` is text the user wrote (not tool results, not injected text). */
export function isUserMessage(message: CompactMessage): boolean {
  return (
    message.role === 'user' &&
    message.kind === 'message' &&
    message.toolResults.length === 0 &&
    message.text.trim() !== '' &&
    !INJECTED.test(message.text) &&
    !isTranscript(message.text)
  );
}

/** True when `text` is a conversation pasted into one turn (speakers inside, not the user's own words). */
function isTranscript(text: string): boolean {
  if (STAMP.test(text)) return true;
  const head = text.length > 4_000 ? text.slice(0, 4_000) : text;
  return (head.match(SPEAKER_LINE)?.length ?? 0) >= 2;
}

const normalize = (line: string) =>
  line
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
const idsOf = (line: string) =>
  findIdentifiers(line)
    .map((f) => f.text)
    .sort()
    .join('|');

/** A line's identifiers and content words, worked out once per line (the comparisons are pairwise). */
interface LineKeys {
  ids: string;
  words: string[];
  wordSet: Set<string>;
}

function keysOf(cache: Map<string, LineKeys>, line: string): LineKeys {
  let keys = cache.get(line);
  if (!keys) {
    const words = contentWords(line);
    keys = { ids: idsOf(line), words, wordSet: new Set(words) };
    cache.set(line, keys);
  }
  return keys;
}

/** True when the later instruction `next` is on the same thing as `earlier` (it supersedes it). */
function supersedes(next: LineKeys, earlier: LineKeys): boolean {
  if (next.ids !== earlier.ids) return false;
  const a = next.wordSet;
  const b = earlier.words;
  if (a.size === 0 || b.length === 0) return false;
  const shared = b.filter((w) => a.has(w)).length;
  return shared / Math.min(a.size, b.length) >= 0.6;
}

/**
 * The user sections after `messages`: the carried task, or the first user message quoted;
 * the carried instructions, then each new instruction sentence (a repeat is dropped, an
 * instruction on the same thing replaces the earlier one). `agentic`: the conversation is
 * already known to be with an assistant at work (the previous summary holds its tool calls),
 * whatever the folded messages show.
 */
export function collectUserSections(
  messages: readonly CompactMessage[],
  carried: UserSections,
  sent?: readonly unknown[],
  agentic = false,
): UserSections {
  return runSteps(collectUserSectionSteps(messages, carried, sent, agentic));
}

/** {@link collectUserSections} as {@link Steps}: a pause after each user message, and every few sentences. */
export function* collectUserSectionSteps(
  messages: readonly CompactMessage[],
  carried: UserSections,
  sent?: readonly unknown[],
  agentic = false,
): Steps<UserSections> {
  // Who the user talks to: "Check this out!" is work for an assistant, small talk to a friend.
  // A fold of user turns alone (the tool calls between them cleared or folded before) is still
  // said to the assistant whose calls the previous summary records.
  const context = agentic ? 'assistant' : yield* instructionContextSteps(messages, sent);
  const task = [...carried.task];
  const instructions = [...carried.instructions];
  const seen = new Set(instructions.map(normalize));
  const keys = new Map<string, LineKeys>();
  for (const message of messages) {
    if (!isUserMessage(message)) continue;
    yield;
    const text = message.text.length > MAX_SCAN_CHARS ? message.text.slice(0, MAX_SCAN_CHARS) : message.text;
    let opening: string | undefined;
    if (task.length === 0 && !MARKUP.test(text)) {
      opening = quote(text);
      task.push(opening);
    }
    let work = 0;
    const sentences = splitSentences(text);
    const cues = laterCuesOf(sentences);
    const material = materialCuesOf(sentences);
    const threshold = opening ? OPENING_INSTRUCTION_LOG_ODDS : HEAD_INSTRUCTION_LOG_ODDS;
    for (const [index, sentence] of sentences.entries()) {
      if (++work % 16 === 0) yield;
      const position = positionOf(index, sentences.length);
      const asks = isInstruction(sentence, context, position, cues[index], material[index], threshold);
      if (!asks || MARKUP.test(sentence)) continue;
      const line = quote(sentence, 400);
      const key = normalize(line);
      if (seen.has(key) || (opening && normalize(opening).includes(key))) continue;
      const lineKeys = keysOf(keys, line);
      for (let k = instructions.length - 1; k >= 0; k--)
        if (supersedes(lineKeys, keysOf(keys, instructions[k]!))) {
          seen.delete(normalize(instructions[k]!));
          instructions.splice(k, 1);
        }
      seen.add(key);
      instructions.push(line);
    }
  }
  return { task, instructions };
}

/** Lines counted between two pauses of {@link linesFittingSteps}. */
const LINES_PER_STEP = 16;

/**
 * The most lines of `lines` (in order, each whole) that fit `budget` tokens, each counted once,
 * a pause every {@link LINES_PER_STEP} lines: a long conversation carries hundreds of
 * instructions (917 in a 16k-message history), and counting them all held the loop 3-11 ms.
 */
function* linesFittingSteps(
  lines: readonly string[],
  budget: number,
  countTokens: (text: string) => number,
): Steps<string[]> {
  const out: string[] = [];
  let used = 0;
  for (const [index, line] of lines.entries()) {
    if (index > 0 && index % LINES_PER_STEP === 0) yield;
    const cost = countTokens(line) + 2;
    if (used + cost > budget) continue;
    out.push(line);
    used += cost;
  }
  return out;
}

/** A quote cut after the most whole words that fit `budget` tokens (never inside a word). */
function quoteFitting(line: string, budget: number, countTokens: (text: string) => number): string {
  if (countTokens(line) + 2 <= budget) return line;
  const words = line.replace(/^"|"$/g, '').split(' ');
  let low = 0;
  let high = words.length;
  const cut = (n: number) => `"${words.slice(0, n).join(' ')} …"`;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if (countTokens(cut(mid)) + 2 <= budget) low = mid;
    else high = mid - 1;
  }
  return low > 0 ? cut(low) : '';
}

/**
 * The user sections rendered within their room of `maxTokens`: the task first (cut at a word
 * when it alone is over its share), then as many instructions as fit theirs
 * ({@link instructionsShareOf}; the room the task leaves unused goes to them).
 */
export function renderUserSections(
  sections: UserSections,
  maxTokens: number,
  countTokens: (text: string) => number,
): string {
  return runSteps(renderUserSectionSteps(sections, maxTokens, countTokens));
}

/** {@link renderUserSections} as {@link Steps}: a pause after each task line and every few instructions. */
export function* renderUserSectionSteps(
  sections: UserSections,
  maxTokens: number,
  countTokens: (text: string) => number,
): Steps<string> {
  const taskRoom = Math.floor(maxTokens * TASK_SHARE);
  const task: string[] = [];
  let used = 0;
  for (const line of sections.task) {
    const fitted = quoteFitting(line, taskRoom - used, countTokens);
    if (!fitted) break;
    task.push(fitted);
    used += countTokens(fitted) + 2;
    yield;
  }
  const room = Math.floor(maxTokens * (TASK_SHARE + instructionsShareOf(maxTokens))) - used;
  const instructions = yield* linesFittingSteps(sections.instructions, room, countTokens);
  const parts: string[] = [];
  if (task.length > 0) parts.push(`## ${TASK_TITLE}\n${task.map((l) => `- ${l}`).join('\n')}`);
  if (instructions.length > 0)
    parts.push(`## ${INSTRUCTIONS_TITLE}\n${instructions.map((l) => `- ${l}`).join('\n')}`);
  return parts.join('\n');
}

// Their machine code is dropped when the last manager shuts down (process-caches.ts).
releaseRegExpCode(INJECTED, HEADING, MARKUP, STAMP, SPEAKER_LINE);
