import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { messageList } from '../../../../test/support/compact-messages.js';
import { isInstructionSentence } from '../../language/instruction-sentence.js';
import { lostKeptLines } from '../summary-guard.js';
import { EmbeddedSummarizer } from './index.js';
import {
  collectUserSections,
  isInstruction,
  renderUserSectionSteps,
  renderUserSections,
  splitUserSections,
} from './user-sections.js';

const countTokens = (text: string) => Math.ceil(text.length / 4);
const none = { task: [], instructions: [] };

describe('user sections', () => {
  it('quote the opening request as the task and every instruction sentence of later user turns', () => {
    const list = messageList();
    list.user('Port the billing service to Postgres 15. Never edit files under src/generated/.');
    list.calls([{ id: 'c1', name: 'read_file', arguments: '{"path":"src/db.ts"}' }]);
    list.result({ callId: 'c1', output: 'export const db = connect();' });
    list.user('<system-reminder>Always answer in French.</system-reminder>');
    list.user('Looks good so far. Use pnpm, not npm. Keep ticket BILL-204 in mind.');
    list.user('Thanks!');
    const sections = collectUserSections(list.messages, none);
    expect(sections.task).toEqual([
      '"Port the billing service to Postgres 15. Never edit files under src/generated/."',
    ]);
    // The opening request's instructions are in the task already; injected text is not the user's.
    expect(sections.instructions).toEqual(['"Use pnpm, not npm."', '"Keep ticket BILL-204 in mind."']);
  });

  it('take a less sure instruction of a long opening message beyond its task quote (review-85b)', () => {
    const readme = Array.from(
      { length: 12 },
      (_, k) =>
        `Section ${k}: the ingest service flushes batch ${k} to Postgres through the pool in src/db/pool.ts.`,
    );
    const list = messageList();
    list.user(
      `Here is our README, read it before you start: ${readme.slice(0, 9).join(' ')} Always answer in French. ${readme.slice(9).join(' ')}`,
    );
    list.calls([{ id: 'c1', name: 'read_file', arguments: '{"path":"src/db/pool.ts"}' }]);
    list.result({ callId: 'c1', output: 'export const pool = createPool();' });
    // The same sentence in a later turn is held to the head threshold (log-odds 1.95 here, under 2).
    expect(isInstruction('Always answer in French.', 'assistant', 'middle', 'imp', 'colon')).toBe(false);
    const sections = collectUserSections(list.messages, none);
    expect(sections.task[0]).not.toContain('French');
    expect(sections.instructions).toContain('"Always answer in French."');
  });

  it('leave out the sentences of a quoted passage: the material to work on, not an ask (issue 45, twelfth pass)', () => {
    const list = messageList();
    list.user('Help me with my support inbox today.');
    list.calls([{ id: 'c1', name: 'read_inbox', arguments: '{}' }]);
    list.result({ callId: 'c1', output: '2 new emails' });
    list.user(
      'Reply to this customer email in a friendly tone.\n"Please cancel my order and refund the full amount. Call me back before Friday."\nKeep the reply under 100 words.',
    );
    const sections = collectUserSections(list.messages, none);
    // The asks around the quoted email are kept (the first one since the fifteenth pass's model),
    // the email's own "Please cancel ..." and "Call me back ..." never.
    expect(sections.instructions).toEqual([
      '"Reply to this customer email in a friendly tone."',
      '"Keep the reply under 100 words."',
    ]);
  });

  it('recognise instructions by what they ask of the assistant, not small talk with a modal in it', () => {
    for (const yes of [
      "Don't push to main.",
      'You must keep the public API stable.',
      'Always run the linter first.',
      'Use vitest instead of jest.',
      'Retry at most 3 times.',
      'can you also look at src/billing/invoice.ts?',
      'Keep ticket PAY-9 in mind.',
      'The deadline for the migration is 14 March at 17:00.',
    ])
      expect(isInstruction(yes), yes).toBe(true);
    for (const no of [
      'Thanks, looks great!',
      'Hello there.',
      // Issue 35: what real chats filled the instructions section with.
      'That must have been amazing!',
      'It is so important to slow down sometimes.',
      'What did you like to read as a kid?',
      'that must have been painful to debug!',
    ])
      expect(isInstruction(no), no).toBe(false);
    // Under the section's margin, the model's less sure instructions stay lines of the conversation.
    expect(isInstructionSentence('See OPS-42.')).toBe(true);
    // The learned model (issue 45) misjudges these, which the word lists were written for: missed
    // "it's important that this ships today", "This is tracked in OPS-7781; reference it when you
    // are done."; flagged "Nice work on that.", "Hope you got some rest after such a week.", "You
    // should totally try it sometime.", "I ran the Riverside half marathon in 1:52:10, ...". Since
    // the sentence's position became a feature and the prompt material was labelled 'other', it
    // is under the section's margin on "Whatever you change, the `legacyInvoiceTotal` export has to
    // stay." (log-odds 1.0, said alone); with the word classes of issue 45's fifth pass, "The
    // config lives in config/prod.yaml." went under it too (2.9 to 1.75).
    // Its measured figures are the leave-one-source-out table (eval/instruction-model.test.ts).
  });

  it('are carried from the previous summary; a later instruction on the same thing replaces the earlier one', () => {
    const previous = [
      '## Task',
      '- "Migrate the payments tables."',
      '## User instructions',
      '- "Use Node 18 for the build."',
      '- "Keep ticket PAY-7 open."',
      '## Conversation',
      '- assistant: Migrated t_0.',
    ].join('\n');
    const carried = splitUserSections(previous);
    expect(carried.rest).toBe('## Conversation\n- assistant: Migrated t_0.');
    const list = messageList();
    // An agent's conversation (a system prompt): the user talks to an assistant.
    list.user('You are a coding agent.', { role: 'system' });
    list.user('Use Node 20 for the build.');
    list.user('Keep ticket PAY-9 open.');
    const sections = collectUserSections(list.messages, carried);
    expect(sections.task).toEqual(['"Migrate the payments tables."']);
    // Node 20 replaces Node 18 (same thing, same ids); PAY-9 does not replace PAY-7.
    expect(sections.instructions).toEqual([
      '"Keep ticket PAY-7 open."',
      '"Use Node 20 for the build."',
      '"Keep ticket PAY-9 open."',
    ]);
  });

  it('take their room first and stay within it: the task cut at a word, instructions that fit', () => {
    const sections = {
      task: [`"${'Rewrite the importer so that it streams rows. '.repeat(20).trim()}"`],
      instructions: Array.from({ length: 30 }, (_, i) => `"Keep ticket T-${100 + i} in mind."`),
    };
    const text = renderUserSections(sections, 400, countTokens);
    expect(countTokens(text)).toBeLessThanOrEqual(200);
    expect(text).toMatch(
      /^## Task\n- "Rewrite the importer .* …"\n## User instructions\n- "Keep ticket T-100 in mind\."/,
    );
  });
});

/** renderUserSections as it was written before its steps (the text it must keep giving). */
function renderedAtOnce(
  sections: { task: string[]; instructions: string[] },
  maxTokens: number,
  count: (text: string) => number,
): string {
  const taskRoom = Math.floor(maxTokens * 0.2);
  const task: string[] = [];
  let used = 0;
  for (const line of sections.task) {
    let fitted = line;
    if (count(line) + 2 > taskRoom - used) {
      const words = line.replace(/^"|"$/g, '').split(' ');
      const cut = (n: number) => `"${words.slice(0, n).join(' ')} …"`;
      let low = 0;
      let high = words.length;
      while (low < high) {
        const mid = (low + high + 1) >> 1;
        if (count(cut(mid)) + 2 <= taskRoom - used) low = mid;
        else high = mid - 1;
      }
      fitted = low > 0 ? cut(low) : '';
    }
    if (!fitted) break;
    task.push(fitted);
    used += count(fitted) + 2;
  }
  const room = Math.floor(maxTokens * (0.2 + (0.3 * Math.min(maxTokens, 1024)) / 1024)) - used;
  const instructions: string[] = [];
  let spent = 0;
  for (const line of sections.instructions) {
    const cost = count(line) + 2;
    if (spent + cost > room) continue;
    instructions.push(line);
    spent += cost;
  }
  const parts: string[] = [];
  if (task.length > 0) parts.push(`## Task\n${task.map((l) => `- ${l}`).join('\n')}`);
  if (instructions.length > 0)
    parts.push(`## User instructions\n${instructions.map((l) => `- ${l}`).join('\n')}`);
  return parts.join('\n');
}

describe('user sections in a small summary', () => {
  const sections = {
    task: [],
    instructions: Array.from({ length: 120 }, (_, i) => `"Keep ticket T-${100 + i} in mind."`),
  };

  it('leave the work its room: below 1024 tokens the instructions share shrinks with the size (issue 45)', () => {
    // 512 tokens: 20% task room (unused here) + 30% x 512/1024 = 35%, not the 50% a large summary gives them.
    const small = countTokens(renderUserSections(sections, 512, countTokens));
    expect(small).toBeLessThanOrEqual(Math.floor(512 * 0.35));
    expect(small).toBeGreaterThan(Math.floor(512 * 0.25));
    const large = countTokens(renderUserSections(sections, 2_048, countTokens));
    expect(large).toBeGreaterThan(Math.floor(2_048 * 0.4));
    expect(large).toBeLessThanOrEqual(1_024);
  });
});

describe('user sections rendered in steps', () => {
  const word = fc.stringMatching(/^[A-Za-z0-9-]{1,12}$/);
  const line = fc.array(word, { minLength: 1, maxLength: 30 }).map((words) => `"${words.join(' ')}"`);

  it('give the text they gave at once, whatever the counter and the room', () => {
    fc.assert(
      fc.property(
        fc.array(line, { maxLength: 2 }),
        fc.array(line, { maxLength: 120 }),
        fc.integer({ min: 0, max: 2_000 }),
        fc.integer({ min: 1, max: 6 }),
        (task, instructions, maxTokens, per) => {
          const count = (text: string) => Math.ceil(text.length / per);
          const sections = { task, instructions };
          expect(renderUserSections(sections, maxTokens, count)).toBe(
            renderedAtOnce(sections, maxTokens, count),
          );
        },
      ),
      { numRuns: 300 },
    );
  });

  it('count a few instructions between two pauses, not all of them in one', () => {
    const sections = {
      task: ['"Port the billing service."'],
      instructions: Array.from({ length: 900 }, (_, i) => `"Keep ticket T-${i} in mind."`),
    };
    let counted = 0;
    let most = 0;
    const steps = renderUserSectionSteps(sections, 1_130, (text) => {
      counted++;
      most = Math.max(most, counted);
      return Math.ceil(text.length / 4);
    });
    let next = steps.next();
    let pauses = 0;
    while (!next.done) {
      pauses++;
      counted = 0;
      next = steps.next();
    }
    expect(next.value).toBe(renderUserSections(sections, 1_130, (text) => Math.ceil(text.length / 4)));
    expect(pauses).toBeGreaterThan(50);
    expect(most).toBeLessThanOrEqual(16);
  });
});

describe('rolling without decay', () => {
  it('keeps the task and every instruction through 20 rolling compactions of tool-heavy history', () => {
    const summarizer = new EmbeddedSummarizer();
    let previous: string | undefined;
    for (let round = 0; round < 20; round++) {
      const list = messageList();
      if (round === 0)
        list.user('Upgrade the API to v3. Never change the public schema in api/schema.graphql.');
      if (round % 4 === 1) list.user(`Also keep ticket API-${round} in mind.`);
      for (let k = 0; k < 12; k++) {
        const id = `c${round}_${k}`;
        list.calls([
          {
            id,
            name: 'edit_file',
            arguments: JSON.stringify({ path: `src/mod${k}.ts`, old: 'a', new: 'b' }),
          },
        ]);
        list.result({ callId: id, output: 'File edited successfully.' });
        const rid = `r${round}_${k}`;
        list.calls([{ id: rid, name: 'grep', arguments: JSON.stringify({ pattern: `fn${round}_${k}` }) }]);
        list.result({ callId: rid, output: `src/mod${k}.ts:${k + 1}: export function fn${round}_${k}() {}` });
      }
      const text = summarizer.summarizeSync({
        strategy: 'task_state',
        messages: list.messages,
        maxTokens: 400,
        countTokens,
        ...(previous ? { previousSummary: previous } : {}),
      });
      expect(countTokens(text)).toBeLessThanOrEqual(400);
      previous = text;
    }
    expect(previous).toMatch(/^## Task\n- "Upgrade the API to v3\./);
    expect(previous).toContain('api/schema.graphql');
    for (const round of [1, 5, 9, 13, 17]) expect(previous).toContain(`API-${round}`);
    // Edits that only echo collapse to one line per file.
    expect(previous!.match(/edit_file\(src\/mod3\.ts\)/g)?.length ?? 0).toBeLessThanOrEqual(1);
    expect(lostKeptLines(previous!, previous)).toEqual([]);
  });

  it('quote a rule from a fold of user turns alone when the previous summary shows the assistant at work', () => {
    // eval:fidelity's support session 2 at 8k: the tool calls around these two turns were folded
    // before, so the fold held user turns alone and was read as said to a person; the rule was
    // never quoted and left the request at call 287.
    const summarizer = new EmbeddedSummarizer();
    const list = messageList();
    list.user('Found such are be some as and found study some most that temperature station model.');
    list.user('One more thing. Never close a case the customer reopened. Carry on after that.');
    const previousSummary = [
      '## Task',
      '- "Work through the escalation queue, oldest cases first."',
      '## Progress',
      '- read_file(kb/returns/late_delivery_3.txt) → 40 lines',
    ].join('\n');
    const text = summarizer.summarizeSync({
      strategy: 'task_state',
      messages: list.messages,
      maxTokens: 400,
      countTokens,
      previousSummary,
    });
    expect(splitUserSections(text).instructions).toContain('"Never close a case the customer reopened."');
    // Without a tool line before, two user turns alone are still read as said to a person.
    const chat = summarizer.summarizeSync({
      strategy: 'task_state',
      messages: list.messages,
      maxTokens: 400,
      countTokens,
    });
    expect(splitUserSections(chat).instructions).toEqual([]);
  });

  it('the guard finds the lines a summary lost', () => {
    const keep =
      '## Task\n- "Port billing to Postgres 15."\n## User instructions\n- "Keep ticket BILL-204 in mind."';
    expect(lostKeptLines('## Goals\n- Port billing to Postgres 15 (BILL-204 kept in mind).', keep)).toEqual(
      [],
    );
    expect(lostKeptLines('## Goals\n- Port billing to Postgres 15.', keep)).toEqual([
      '"Keep ticket BILL-204 in mind."',
    ]);
  });
});
