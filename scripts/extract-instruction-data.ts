/**
 * Builds eval/data/instructions/sentences.jsonl from the raw public sources (issue 45): one
 * labelled sentence a line, `{text, label, source, license, context}`. The label comes from each
 * source's own structure (dialogue acts, prompt fields, who is talking), by the rules written in
 * eval/data/instructions/LABELS.md; nothing is tuned on a model's output.
 *
 * Run once by hand (the raw files are not in the repository; they are named in LABELS.md):
 *   npx tsx scripts/extract-instruction-data.ts <raw-dir>
 * where <raw-dir> holds sgd/*.json (dstc8-schema-guided-dialogue dev/ and test/ dialogues),
 * camrest.json (CamRest676.json), selfinstruct.jsonl (user_oriented_instructions.jsonl),
 * mtbench.jsonl and vicuna.jsonl (FastChat llm_judge questions), tc_*.json (Topical-Chat),
 * lottery.jsonl (oasst-model-eval's prompt_lottery_en_250_text.jsonl: where each oasst1 row stands),
 * en100.jsonl (oasst-model-eval's en_100_text.jsonl, labelled by hand in oasst1-en100-hand-labelled.json).
 */

import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { positionOf, type SentencePosition } from '../src/core/language/instruction-features.js';
import { isDataLine } from '../src/core/language/instruction-model.js';
import { type LaterCue, laterCuesOf } from '../src/core/language/later-cue.js';
import { splitSentences } from '../src/core/summary/embedded/units.js';
import { sweAgentTurns } from './swe-agent-turns.js';

type Label = 'instruction' | 'other';
type Context = 'assistant' | 'person';
interface Row {
  text: string;
  label: Label;
  source: string;
  license: string;
  context: Context;
  /** The sentence's place among its message's sentences (instruction-features.ts `positionOf`). */
  position: SentencePosition;
  /** What the sentences after it in its message ask (later-cue.ts `laterCuesOf`). */
  later: LaterCue;
}
/** The position of the `k`th of a message's sentences and what the sentences after it ask, as a row's fields. */
const at = (k: number, sentences: readonly string[], cues = laterCuesOf(sentences)) => ({
  position: positionOf(k, sentences.length),
  later: cues[k] as LaterCue,
});

const raw: string = process.argv[2] ?? '';
/**
 * `--oasst1-en100`: add the hand-labelled sentences of oasst-model-eval's en_100_text.jsonl to
 * oasst1 (measured and not shipped: eval/data/instructions/LABELS.md, ninth pass).
 */
const WITH_EN100 = process.argv.includes('--oasst1-en100');
if (!raw) throw new Error('usage: npx tsx scripts/extract-instruction-data.ts <raw-dir>');
const OUT = 'eval/data/instructions/sentences.jsonl';
const rows: Row[] = [];
const seen = new Set<string>();

/** A stable pseudo-random order: rows are sampled by a hash of their text, never by Math.random. */
const rank = (text: string) => createHash('sha1').update(text).digest().readUInt32BE(0);

/**
 * Labels the extraction rules give against the written definition (LABELS.md, "Corrections ...,
 * fourth pass"): each names the rule it follows. Applied after sampling, so the rows are the same.
 */
const CORRECTIONS = new Map(
  (
    JSON.parse(readFileSync('eval/data/instructions/label-corrections.json', 'utf8')) as Array<{
      source: string;
      text: string;
      label: Label;
    }>
  ).map((c) => [`${c.source}|${c.text}`, c.label]),
);

function push(row: Row): void {
  const key = `${row.source}|${row.text.toLowerCase()}`;
  if (seen.has(key) || row.text.length < 2) return;
  seen.add(key);
  rows.push({ ...row, label: CORRECTIONS.get(`${row.source}|${row.text}`) ?? row.label });
}

/** Keeps at most `max` rows of `label` from `candidates`, chosen by hash. */
function sample(candidates: Row[], max: number): Row[] {
  return [...candidates].sort((a, b) => rank(a.text) - rank(b.text)).slice(0, max);
}

const words = (text: string) => text.trim().split(/\s+/).length;
/** A request for information phrased as a request ("Could I get the phone number?"): an ask and a question at once, left out. */
const ASKED_AS_REQUEST =
  /^(?:(?:ok|okay|yes|great|thanks|and|also|so|sure)[, ]+)?(?:can|could|may|would|will)\s+(?:i|you|we)\b|\bplease\b/i;

/** A question asking for an answer now (not "can you ..." / "could you ..." which asks for work). */
const PLAIN_QUESTION = (text: string) =>
  text.trimEnd().endsWith('?') && !/^(?:please\s+)?(?:can|could|would|will)\s+(?:you|u)\b/i.test(text);
// --- Schema-Guided Dialogue: user acts. -------------------------------------------------------
const SGD_DO = new Set([
  'INFORM_INTENT',
  'INFORM',
  'REQUEST_ALTS',
  'SELECT',
  'AFFIRM_INTENT',
  'NEGATE_INTENT',
]);
const SGD_NOT = new Set(['THANK_YOU', 'GOODBYE', 'REQUEST', 'AFFIRM', 'NEGATE']);
/** Acts that make a turn ambiguous ("That one sounds good", "Yes I would", "What else is there?"). */
const SGD_AMBIGUOUS = new Set(['SELECT', 'AFFIRM_INTENT', 'REQUEST_ALTS', 'REQUEST', 'THANK_YOU', 'GOODBYE']);
function sgd(): void {
  const pos: Row[] = [];
  const neg: Row[] = [];
  const base = { source: 'sgd', license: 'CC-BY-SA-4.0', context: 'assistant' as const };
  for (const file of readdirSync(join(raw, 'sgd')).sort()) {
    const dialogues = JSON.parse(readFileSync(join(raw, 'sgd', file), 'utf8')) as Array<{
      turns: Array<{
        speaker: string;
        utterance: string;
        frames: Array<{ actions: Array<{ act: string }> }>;
      }>;
    }>;
    for (const dialogue of dialogues) {
      for (const turn of dialogue.turns) {
        if (turn.speaker !== 'USER') continue;
        const acts = turn.frames.flatMap((f) => f.actions.map((a) => a.act));
        const sentences = splitSentences(turn.utterance);
        // One sentence a turn on both sides, so a sentence's position tells nothing of how it was chosen.
        if (sentences.length !== 1) continue;
        const text = sentences[0] as string;
        if (acts.every((a) => SGD_NOT.has(a))) {
          if (!ASKED_AS_REQUEST.test(text)) neg.push({ text, label: 'other', ...base, ...at(0, sentences) });
        } else if (
          sentences.length === 1 &&
          words(turn.utterance) >= 3 &&
          acts.some((a) => SGD_DO.has(a)) &&
          !acts.some((a) => SGD_AMBIGUOUS.has(a)) &&
          !PLAIN_QUESTION(turn.utterance)
        ) {
          pos.push({ text: turn.utterance.trim(), label: 'instruction', ...base, ...at(0, sentences) });
        }
      }
    }
  }
  for (const row of [...sample(pos, 800), ...sample(neg, 600)]) push(row);
}

// --- CamRest676: user SLU acts. ---------------------------------------------------------------
function camrest(): void {
  // The distributed file opens with a copyright banner of `#` lines before the JSON.
  const text = readFileSync(join(raw, 'camrest.json'), 'utf8').replace(/^#.*\n/gm, '');
  const dialogues = JSON.parse(text) as Array<{
    dial: Array<{ usr: { transcript: string; slu: Array<{ act: string; slots: string[][] }> } }>;
  }>;
  const pos: Row[] = [];
  const neg: Row[] = [];
  const base = { source: 'camrest676', license: 'Apache-2.0', context: 'assistant' as const };
  for (const dialogue of dialogues) {
    // The annotation is the state so far: a turn's own acts are the informs new since the turn before.
    let before = new Set<string>();
    for (const { usr } of dialogue.dial) {
      const informs = usr.slu.filter((a) => a.act === 'inform').map((a) => JSON.stringify(a.slots));
      const fresh = informs.filter((k) => !before.has(k));
      const requests = usr.slu.some((a) => a.act === 'request');
      before = new Set(informs);
      const sentences = splitSentences(usr.transcript);
      // One sentence a turn on both sides, so a sentence's position tells nothing of how it was chosen.
      if (sentences.length !== 1) continue;
      const text = sentences[0] as string;
      if (fresh.length === 0) {
        if (!ASKED_AS_REQUEST.test(text)) neg.push({ text, label: 'other', ...base, ...at(0, sentences) });
      } else if (
        !requests &&
        sentences.length === 1 &&
        words(usr.transcript) >= 3 &&
        !PLAIN_QUESTION(usr.transcript)
      ) {
        pos.push({ text: usr.transcript.trim(), label: 'instruction', ...base, ...at(0, sentences) });
      }
    }
  }
  for (const row of [...sample(pos, 600), ...sample(neg, 500)]) push(row);
}

// --- Prompts written for assistants: self-instruct user-oriented, MT-Bench, Vicuna. ------------
/**
 * The sentences of every prompt of two sentences or more, labelled by hand by the rules of
 * LABELS.md (the prompt's ask and constraints `instruction`; the situation, the material it quotes
 * and a premise `other`; quoted imperatives, code, list markers and role set-ups `left-out`).
 */
const PROMPT_LABELS = new Map(
  (
    JSON.parse(readFileSync('eval/data/instructions/prompts-hand-labelled.json', 'utf8')) as Array<{
      source: string;
      text: string;
      label: Label | 'left-out';
    }>
  ).map((row) => [`${row.source}|${row.text}`, row.label]),
);
function promptRows(prompts: string[], source: string, license: string): void {
  for (const prompt of prompts) {
    const sentences = splitSentences(prompt);
    const cues = laterCuesOf(sentences);
    sentences.forEach((text, k) => {
      // A line of the material (code, a data row, a list marker, a formula) asks nothing: left out.
      if (isDataLine(text)) return;
      const base = { text, source, license, context: 'assistant' as const, ...at(k, sentences, cues) };
      if (sentences.length === 1) {
        push({ ...base, label: PLAIN_QUESTION(text) ? 'other' : 'instruction' });
        return;
      }
      const label = PROMPT_LABELS.get(`${source}|${text}`);
      if (label === undefined) throw new Error(`${source}: no hand label for ${JSON.stringify(text)}`);
      if (label !== 'left-out') push({ ...base, label });
    });
  }
}
function prompts(): void {
  const self = readFileSync(join(raw, 'selfinstruct.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => (JSON.parse(line) as { instruction: string }).instruction);
  promptRows(self, 'self-instruct', 'Apache-2.0');
  const bench = ['mtbench.jsonl', 'vicuna.jsonl'].flatMap((file) =>
    readFileSync(join(raw, file), 'utf8')
      .split('\n')
      .filter(Boolean)
      .flatMap((line) => (JSON.parse(line) as { turns: string[] }).turns),
  );
  promptRows(bench, 'fastchat-bench', 'Apache-2.0');
}

// --- Topical-Chat: two people talking; nothing is said to an assistant. ------------------------
const FRIENDLY_IMPERATIVE =
  /^(?:let|check|look|keep|try|go|come|tell|make|take|don'?t|please|imagine|watch|read|listen|give|get|guess|think|see|enjoy|stay|have (?:a|fun)|be)\b/i;
function topicalChat(): void {
  const pool: Row[] = [];
  const base = { source: 'topical-chat', license: 'CDLA-Sharing-1.0', context: 'person' as const };
  for (const file of readdirSync(raw)
    .filter((f) => f.startsWith('tc_'))
    .sort()) {
    const chats = JSON.parse(readFileSync(join(raw, file), 'utf8')) as Record<
      string,
      { content: Array<{ message: string }> }
    >;
    for (const chat of Object.values(chats))
      for (const turn of chat.content) {
        const sentences = splitSentences(turn.message);
        const cues = laterCuesOf(sentences);
        sentences.forEach((text, k) => {
          pool.push({ text, label: 'other', ...base, ...at(k, sentences, cues) });
        });
      }
  }
  const imperative = pool.filter((r) => FRIENDLY_IMPERATIVE.test(r.text));
  for (const row of [...sample(imperative, 300), ...sample(pool, 600)]) push(row);
}

// --- Hand-labelled rows from issue 35 (oasst1 prompts, SWE-agent user turns). ------------------
/** The position of a hand-cut sentence: the message holding it and the sentence of that message it opens in. */
function placeIn(messages: readonly string[], text: string): Pick<Row, 'position' | 'later'> {
  const probe = text.slice(0, 40);
  for (const message of messages) {
    if (!message.includes(probe)) continue;
    const sentences = splitSentences(message);
    const k = sentences.findIndex((s) => s.includes(probe) || probe.includes(s));
    if (k >= 0) return at(k, sentences);
  }
  throw new Error(`no message holds ${JSON.stringify(text)}`);
}
/** The oasst1 prompts (each the conversation's first message) of one of oasst-model-eval's prompt files. */
function lotteryPrompts(file = 'lottery.jsonl'): string[] {
  return readFileSync(join(raw, file), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as string);
}
function handLabelled(): void {
  const file = 'test/fixtures/instructions/labelled-sentences.jsonl';
  const lottery = lotteryPrompts();
  const swe = sweAgentTurns();
  // The lottery file's other sentences, labelled by hand in issue 45 by the same rules.
  const rest = 'eval/data/instructions/oasst1-rest-hand-labelled.json';
  for (const row of JSON.parse(readFileSync(rest, 'utf8')) as Array<{ text: string; label: Label }>)
    push({
      text: row.text,
      label: row.label,
      source: 'oasst1',
      license: 'Apache-2.0',
      context: 'assistant',
      ...placeIn(lottery, row.text),
    });
  // oasst-model-eval's en_100_text.jsonl, every sentence labelled by hand by the same rules
  // (code lines, list fragments, a pasted transcript and a quoted imperative left out).
  const en100 = WITH_EN100 ? lotteryPrompts('en100.jsonl') : [];
  const more = 'eval/data/instructions/oasst1-en100-hand-labelled.json';
  for (const row of JSON.parse(readFileSync(more, 'utf8')) as Array<{
    text: string;
    label: Label | 'left-out';
  }>)
    if (WITH_EN100 && row.label !== 'left-out')
      push({
        text: row.text,
        label: row.label,
        source: 'oasst1',
        license: 'Apache-2.0',
        context: 'assistant',
        ...placeIn(en100, row.text),
      });
  for (const line of readFileSync(file, 'utf8').split('\n').filter(Boolean)) {
    const row = JSON.parse(line) as { text: string; label: Label; source: string };
    if (row.source.startsWith('OpenAssistant'))
      push({
        text: row.text,
        label: row.label,
        source: 'oasst1',
        license: 'Apache-2.0',
        context: 'assistant',
        ...placeIn(lottery, row.text),
      });
    else if (row.source.startsWith('SWE-agent'))
      push({
        text: row.text,
        label: row.label,
        source: 'swe-agent',
        license: 'MIT',
        context: 'assistant',
        ...placeIn(swe, row.text),
      });
  }
}

/** A sentence of a rules file has more of its rules after it: what the sentences after it ask is orders. */
const DOC_LATER: LaterCue = 'imp';
/** Sentences of AGENTS.md and SKILL.md files (instructions to coding agents), labelled by hand. */
function agentsMd(): void {
  for (const file of [
    'eval/data/instructions/agents-md-hand-labelled.json',
    'eval/data/instructions/agent-rules-hand-labelled.json',
  ])
    for (const row of JSON.parse(readFileSync(file, 'utf8')) as Row[])
      push({
        text: row.text,
        label: row.label,
        source: row.source,
        license: row.license,
        context: row.context,
        // A sentence inside a long document, said first (the file is the session's setup), with
        // more of the document's rules after it.
        position: 'middle',
        later: DOC_LATER,
      });
}

sgd();
camrest();
agentsMd();
prompts();
topicalChat();
handLabelled();
writeFileSync(OUT, `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
const counts = new Map<string, number>();
for (const r of rows) counts.set(`${r.source} ${r.label}`, (counts.get(`${r.source} ${r.label}`) ?? 0) + 1);
console.log(rows.length, Object.fromEntries(counts));
