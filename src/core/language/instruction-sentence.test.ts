import { describe, expect, it } from 'vitest';
import { messageList } from '../../../test/support/compact-messages.js';
import { collectUserSections, HEAD_INSTRUCTION_LOG_ODDS } from '../summary/embedded/user-sections.js';
import {
  instructionContextOf,
  isInstructionSentence,
  type LaterCue,
  type SentencePosition,
} from './instruction-sentence.js';

describe('instruction sentences: the learned model and who the user talks to (issue 45)', () => {
  it('the same imperative is an instruction to an assistant and small talk to a friend', () => {
    for (const sentence of [
      'Check the logs for errors.',
      'Book the earliest train.',
      'Talk like a pirate from now on.',
      'I want to cancel my hotel booking.',
    ]) {
      expect(isInstructionSentence(sentence, 'assistant'), sentence).toBe(true);
      expect(isInstructionSentence(sentence, 'person'), sentence).toBe(false);
    }
  });

  it("the same verb as an ask and as a report, a question or a tool's output (fifteenth pass)", () => {
    // None of these sentences is a training row; each pair shares its verb.
    const asks: Array<[string, SentencePosition, LaterCue]> = [
      ['Do this in one SQL query.', 'middle', 'imp'],
      ['The assistant must not push to the main branch.', 'middle', 'imp'],
      ['Find all files with the given name.', 'middle', 'imp'],
      ['Run the tests and tell me what failed.', 'only', 'none'],
    ];
    const others: Array<[string, SentencePosition, LaterCue]> = [
      ['Do these numbers add up?', 'only', 'none'],
      ['The assistant pushed to the main branch.', 'middle', 'imp'],
      ['Finds all files with the given name.', 'middle', 'imp'],
      ['Your build has finished and the tests passed.', 'only', 'none'],
    ];
    for (const [sentence, position, later] of asks)
      expect(isInstructionSentence(sentence, 'assistant', undefined, position, later), sentence).toBe(true);
    for (const [sentence, position, later] of others)
      expect(isInstructionSentence(sentence, 'assistant', undefined, position, later), sentence).toBe(false);
  });

  it('wants, preferences and negations the word lists missed, to an assistant', () => {
    for (const sentence of [
      "I'd prefer a window seat.",
      'I want to cancel my hotel booking.',
      'Prove that the square root of 2 is irrational.',
      'Book the earliest train.',
    ])
      expect(isInstructionSentence(sentence), sentence).toBe(true);
    for (const sentence of [
      'Thanks for all your help.',
      'What is the chemical symbol for gold?',
      'Have a great day!',
    ])
      expect(isInstructionSentence(sentence), sentence).toBe(false);
  });

  it('an imperative behind "never", "always", "please" is sure enough for ## User instructions wherever it stands in its message', () => {
    // Read with "never" as its verb, the first sentence scored 1.4 opening a message (under the 2 the
    // section asks) and a compaction dropped it from 74 requests of eval:fidelity's support session.
    for (const sentence of [
      'Never close a case the customer reopened.',
      'Always use the staging database for tests.',
      'Please book the earliest train.',
    ])
      for (const position of ['only', 'first', 'middle', 'last'] as const)
        expect(
          isInstructionSentence(sentence, 'assistant', HEAD_INSTRUCTION_LOG_ODDS, position),
          `${sentence} (${position})`,
        ).toBe(true);
  });

  it("an agent's notes that open on a label, and a request opening a message, stay instructions (issue 45, eighth pass)", () => {
    // Planted facts of eval/planted-session.ts. A model over WordNet's word classes alone scored
    // them -1.21, -0.74 and -0.04 ("todo" and "backfill" are no WordNet words), and the rolling
    // summary at 20:1 then kept 3 planted facts fewer; the shipped model averages it with the plain one.
    for (const [sentence, position] of [
      ['TODO: backfill currency_code for the legacy invoices created before the migration.', 'last'],
      [
        'Constraint: we must not change the public signature of LedgerClient.post because three teams call it.',
        'middle',
      ],
      ['Could you see why the server test sometimes times out?', 'first'],
    ] as const)
      expect(isInstructionSentence(sentence, 'assistant', undefined, position), sentence).toBe(true);
  });

  it('a sentence of quoted material is never an instruction, whatever it says (issue 45, twelfth pass)', () => {
    for (const sentence of [
      'Please cancel my order and refund the full amount.',
      'Never buy this blender.',
    ]) {
      expect(isInstructionSentence(sentence, 'assistant', undefined, 'middle', 'none'), sentence).toBe(true);
      expect(
        isInstructionSentence(sentence, 'assistant', undefined, 'middle', 'none', 'colon'),
        sentence,
      ).toBe(true);
      expect(
        isInstructionSentence(sentence, 'assistant', undefined, 'middle', 'none', 'quote'),
        sentence,
      ).toBe(false);
    }
  });

  it('reads a curly apostrophe as a straight one', () => {
    for (const [curly, straight] of [
      ['Don’t summarize the text.', "Don't summarize the text."],
      ['I’d like two flat whites.', "I'd like two flat whites."],
      ['Can’t wait!', "Can't wait!"],
    ] as const) {
      expect(isInstructionSentence(curly), curly).toBe(isInstructionSentence(straight));
      expect(isInstructionSentence(curly, 'person'), curly).toBe(isInstructionSentence(straight, 'person'));
    }
    expect(isInstructionSentence('Don’t summarize the text.')).toBe(true);
  });

  it('the other side is an assistant when a system prompt or a tool call shows one, a person otherwise', () => {
    const chat = messageList();
    chat.user('Look at this photo I took!');
    chat.assistant('Wow, that must be so much fun.');
    expect(instructionContextOf(chat.messages)).toBe('person');
    const agent = messageList();
    agent.user('Check the logs.');
    agent.calls([{ id: 'c1', name: 'read_file', arguments: '{"path":"app.log"}' }]);
    agent.result({ callId: 'c1', output: 'ok' });
    expect(instructionContextOf(agent.messages)).toBe('assistant');
    const prompted = messageList();
    prompted.user('Check the logs.');
    expect(
      instructionContextOf(prompted.messages, [{ role: 'system', content: 'You are a coding agent.' }]),
    ).toBe('assistant');
    expect(instructionContextOf(prompted.messages, [{ role: 'developer', content: 'Be brief.' }])).toBe(
      'assistant',
    );
  });

  it('the summary quotes "Check out this photo" said to a friend as nothing, and "Check the logs" to an agent', () => {
    const none = { task: [], instructions: [] };
    const chat = messageList();
    chat.user('Hi! How was the trip?');
    chat.assistant('Great, thanks!');
    chat.user('Check out this photo I took!');
    expect(collectUserSections(chat.messages, none).instructions).toEqual([]);
    const agent = messageList();
    agent.user('Hi! Deploy the service.');
    agent.calls([{ id: 'c1', name: 'deploy', arguments: '{}' }]);
    agent.result({ callId: 'c1', output: 'deployed' });
    agent.user('Check the logs for errors after each deploy.');
    expect(collectUserSections(agent.messages, none).instructions).toEqual([
      '"Check the logs for errors after each deploy."',
    ]);
  });

  it('the context rule: a chat between people quotes no instruction, whatever its wording; the same turns to an agent do', () => {
    const turns = ['Book the earliest train.', 'Don’t forget the charger.', 'Please call me back tomorrow.'];
    const none = { task: [], instructions: [] };
    const chat = messageList();
    chat.user('Hey, how are you?');
    chat.assistant('Good! Busy week.');
    for (const turn of turns) chat.user(turn);
    expect(instructionContextOf(chat.messages)).toBe('person');
    expect(collectUserSections(chat.messages, none).instructions).toEqual([]);
    const agent = messageList();
    agent.user('You are a travel assistant.', { role: 'system' });
    agent.user('Hey, how are you?');
    agent.assistant('Good! How can I help?');
    for (const turn of turns) agent.user(turn);
    expect(instructionContextOf(agent.messages)).toBe('assistant');
    expect(collectUserSections(agent.messages, none).instructions).toEqual(
      expect.arrayContaining(['"Book the earliest train."']),
    );
    for (const turn of turns) {
      expect(isInstructionSentence(turn, 'person'), turn).toBe(false);
      expect(isInstructionSentence(turn, 'assistant'), turn).toBe(true);
    }
  });

  it('a line of data is no instruction: key armor, a key body line, a pasted token (issue 45: a quoted END line left a flattened key the redactor could not see)', () => {
    for (const line of [
      '-----BEGIN RSA PRIVATE KEY-----',
      '-----END RSA PRIVATE KEY-----',
      'Rr5z/AZgyML5eDHBGhjNjTECAg/UU6hz9GoUJ9Y3iNka69rBKi7jrrVwaNw9evzC',
      'AKIAPIYEIVZM7MDZHGBG',
      'Authorization: Bearer oyT6k4mK/1aj7~RjOe4XN7P8b2py+',
      '9fceb02d 3f2b8c1e 1c5d7e9f',
    ])
      expect(isInstructionSentence(line), line).toBe(false);
    expect(isInstructionSentence('Deploy build 9fceb02d0ae598e95dc970b74767f19372d61af8 to staging.')).toBe(
      true,
    );
  });

  it('reads a 10 MB sentence in bounded time (only its head decides)', () => {
    const huge = `Please book the earliest train. ${'word, '.repeat(2_000_000)}`;
    expect(isInstructionSentence(huge)).toBe(true);
    expect(isInstructionSentence(`Thanks for all your help! ${'word, '.repeat(2_000_000)}`)).toBe(false);
  });
});
