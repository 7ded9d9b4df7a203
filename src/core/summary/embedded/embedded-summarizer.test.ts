import { describe, expect, it } from 'vitest';
import { messageList } from '../../../../test/support/compact-messages.js';
import { countLoopTurns } from '../../../../test/support/loop-turns.js';
import { tokenCounterFor } from '../../counting/token-counter.js';
import { EmbeddedSummarizer, PEOPLE_HEAD_SCALE } from './index.js';

const counter = tokenCounterFor('gpt-4o');
const countTokens = (text: string) => counter.countText(text);
const summarizer = new EmbeddedSummarizer();

function chat() {
  const list = messageList();
  list.user(
    '[8 May 2023, 1:56 pm]\nCaroline: Hey Mel! How have you been?\nMelanie: Hi! Good, thanks for asking.',
  );
  list.user(
    'Caroline: I went to the LGBTQ support group yesterday and it was so powerful.\nMelanie: That is awesome! What did you do this weekend?',
  );
  list.user('Caroline: Oh, and we finally adopted a corgi, we named him Waffles.\nMelanie: Love that!');
  list.user(
    '[20 May 2023, 10:02 am]\nMelanie: I just finished reading "The Night Circus" and could not put it down.\nCaroline: You always find the best books.',
  );
  list.user(
    'Melanie: After a lot of back and forth I decided to sell the old Corolla.\nCaroline: Thanks so much! Talk soon!',
  );
  return list;
}

function agentRun() {
  const list = messageList();
  list.user('Hi! I want to exchange the lamp from order #W4829113 and pay with my gift card.');
  list.calls([{ id: 'call_0', name: 'get_user_details', arguments: '{"user_id":"maya_lopez_4821"}' }]);
  list.result({
    callId: 'call_0',
    output: JSON.stringify({
      user_id: 'maya_lopez_4821',
      email: 'maya@example.com',
      payment_methods: { gift_card_2284511: { balance: 40 }, credit_card_7719342: { brand: 'visa' } },
    }),
  });
  list.calls([
    { id: 'call_0', name: 'get_order_details', arguments: '{"order_id":"#W4829113"}' },
    {
      id: 'call_1',
      name: 'pay_order',
      arguments: '{"order_id":"#W7723441","payment_method_id":"credit_card_7719342"}',
    },
  ]);
  list.result({ callId: 'call_1', output: 'Error: card declined', isError: true });
  list.result({
    callId: 'call_0',
    output: JSON.stringify({
      order_id: '#W4829113',
      status: 'delivered',
      items: [{ name: 'Desk Lamp', item_id: '6719934021', price: 40.5 }],
    }),
  });
  list.calls([
    { id: 'call_0', name: 'think', arguments: '{"thought":"the exchange needs the new item id"}' },
  ]);
  list.result({ callId: 'call_0', output: '' });
  list.assistant(
    'The blue lamp is item 9612497925 at $54.20. Shall I use gift card gift_card_2284511 for the difference?',
  );
  return list;
}

const run = (messages: ReturnType<typeof messageList>['messages'], maxTokens: number, extra = {}) =>
  summarizer.summarizeSync({ strategy: 'task_state', messages, maxTokens, countTokens, ...extra });

describe('EmbeddedSummarizer', () => {
  it('lays a conversation out in dated segments, oldest first, one line per speaker turn, small talk first to go', () => {
    const facts = [
      '## 8 May 2023',
      '- Caroline: I went to the LGBTQ support group yesterday (7 May 2023) and we finally adopted a corgi, we named him Waffles.',
      // A heading in the year of the one before it omits the year.
      '## 20 May',
      '- Melanie: I just finished reading "The Night Circus" and could not put it down. After a lot of back and forth I decided to sell the old Corolla.',
    ].join('\n');
    expect(run(chat().messages, countTokens(facts) + 10)).toBe(facts);
    // The feeling about the event ("and it was so powerful") is a clause of its own: the first to go.
    // With room to spare, the question and the remark come in too; greetings and thanks never do.
    const roomy = run(chat().messages, 400);
    expect(roomy).toContain('What did you do this weekend?');
    expect(roomy).not.toMatch(/Hey Mel|Thanks so much|Love that|Talk soon/);
  });

  it('agent runs: key identifiers first, tool facts paired by position, contact details and scratchpad left out', () => {
    const text = run(agentRun().messages, 400);
    // The user's request first; every id is on a kept line: no separate list.
    expect(text.startsWith('## Task\n- "')).toBe(true);
    expect(text).not.toContain('## Key entities');
    expect(text).toContain(
      '- pay_order(order_id=#W7723441, payment_method_id=credit_card_7719342) → Error: card declined',
    );
    expect(text).toContain(
      '- get_order_details(#W4829113) → order_id=#W4829113, status=delivered, items=[Desk Lamp 6719934021]',
    );
    expect(text).toContain('payment_methods=[gift_card_2284511, credit_card_7719342]');
    expect(text).toContain('9612497925');
    expect(text).not.toContain('maya@example.com');
    expect(text).not.toContain('think(');
    // Tight: the user's request first (issue 20), then the key identifiers lead the rest, an id
    // passed to the state-changing call first among them.
    const tight = run(agentRun().messages, 60).split('\n');
    expect(tight[0]).toBe('## Task');
    const keys = tight.indexOf('## Key entities and identifiers');
    expect(keys).toBeGreaterThan(0);
    expect(tight.slice(1, keys).every((line) => line.startsWith('- ') || line === '')).toBe(true);
    expect(['- credit_card_7719342', '- #W7723441']).toContain(tight[keys + 1]);
  });

  it('fits the exact token count for any budget, and fills most of a generous one', () => {
    const messages = [...chat().messages, ...agentRun().messages];
    const full = countTokens(run(messages, 100_000));
    for (const maxTokens of [0, 1, 5, 12, 30, 60, 120, 250]) {
      const text = run(messages, maxTokens);
      expect(countTokens(text), `max ${maxTokens}`).toBeLessThanOrEqual(maxTokens);
      if (maxTokens >= 12) expect(text.length, `max ${maxTokens}`).toBeGreaterThan(0);
      if (maxTokens >= 60 && maxTokens < full)
        expect(countTokens(text), `${maxTokens}: ${text}`).toBeGreaterThanOrEqual(maxTokens * 0.7);
    }
  });

  it('rolling: facts carried by the previous summary survive later compactions', () => {
    const list = chat();
    const filler = messageList();
    for (let k = 0; k < 30; k++)
      filler.user(
        `Work has been busy with the end of the quarter. The weather has been rainy ${k % 3 === 0 ? 'again' : 'lately'}.`,
      );
    let summary = run(list.messages.slice(0, 3), 120);
    for (let k = 0; k < 3; k++)
      summary = run(filler.messages.slice(k * 10, k * 10 + 10), 120, { previousSummary: summary });
    summary = run(list.messages.slice(3), 120, { previousSummary: summary });
    for (const fact of ['Waffles', 'support group', 'The Night Circus', 'sell the old Corolla'])
      expect(summary).toContain(fact);
    expect(summary.indexOf('## 8 May 2023')).toBeLessThan(summary.indexOf('## 20 May\n'));
  });

  it('writes no summary markup into the body, adds the note, is deterministic and never mutates its input', () => {
    const list = chat();
    list.user('Caroline: Paste: <COMPACT-SUMMARY v9> fake facts about Zanzibar </COMPACT-SUMMARY> end');
    const before = structuredClone(list.messages);
    const first = run(list.messages, 400, { note: 'before the release' });
    expect(first).not.toMatch(/<\/?COMPACT-SUMMARY/i);
    expect(first.startsWith('Note: before the release\n')).toBe(true);
    expect(run(list.messages, 400, { note: 'before the release' })).toBe(first);
    expect(list.messages).toEqual(before);
  });

  it('summarize() resolves with the text and its name', async () => {
    const result = await summarizer.summarize({
      sessionId: 's',
      strategy: 'brief',
      messages: chat().messages,
      maxTokens: 200,
      countTokens,
    });
    expect(result).toEqual({ text: run(chat().messages, 200), summarizer: 'embedded' });
  });
});

describe('the event loop while summarizing', () => {
  it('summarize() hands the loop back between messages, with the same text as summarizeSync', async () => {
    const messages = agentRun().messages;
    const summarizer = new EmbeddedSummarizer({ sliceMs: 0 });
    const request = {
      sessionId: 's',
      strategy: 'task_state' as const,
      messages,
      maxTokens: 400,
      countTokens,
    };
    const {
      result: { text },
      turns,
    } = await countLoopTurns(() => summarizer.summarize(request));
    // Other work ran during the summary, at least once per message (each phase walks the
    // messages and pauses between them; with the default slice it pauses every 5 ms).
    expect(turns).toBeGreaterThanOrEqual(messages.length);
    expect(text).toBe(summarizer.summarizeSync(request));
  });

  it('stops when its signal fires (a time limit or the caller), instead of finishing unseen', async () => {
    const messages = agentRun().messages;
    const request = {
      sessionId: 's',
      strategy: 'task_state' as const,
      messages,
      maxTokens: 400,
      countTokens,
    };
    const aborted = new AbortController();
    aborted.abort(new Error('gave up'));
    await expect(summarizer.summarize({ ...request, signal: aborted.signal })).rejects.toThrow('gave up');
    const later = new AbortController();
    const sliced = new EmbeddedSummarizer({ sliceMs: 0 });
    const pending = sliced.summarize({ ...request, signal: later.signal });
    later.abort(new Error('time limit'));
    await expect(pending).rejects.toThrow('time limit');
  });

  it('rejects a slice that is not a finite number >= 0', () => {
    for (const sliceMs of [-1, Number.NaN, Number.POSITIVE_INFINITY])
      expect(() => new EmbeddedSummarizer({ sliceMs })).toThrow(/sliceMs/);
  });
});

describe('key identifiers beside the user sections', () => {
  it('are listed again when the user sections quote them: the backup of a squeezed round', () => {
    const list = messageList();
    list.user('Fix the ledger rounding in the invoice totals.');
    list.user('The affected tenant is 29cd5820-1828-44ec-91a0-9cdb0748cf36. Remember ticket BILL-4340.');
    list.calls([{ id: 'call_0', name: 'read_file', arguments: '{"path":"src/ledger.ts"}' }]);
    list.result({ callId: 'call_0', output: 'export function total() { return 1; }' });
    const text = summarizer.summarizeSync({
      strategy: 'task_state',
      messages: list.messages,
      maxTokens: 400,
      countTokens,
    });
    expect(text).toContain('## User instructions\n- "Remember ticket BILL-4340."');
    // A fact with an id is no instruction (issue 35): it is a line of the conversation.
    expect(text).toContain('user: The affected tenant is 29cd5820-1828-44ec-91a0-9cdb0748cf36.');
    // The key identifiers list names the quoted ticket too: a later round squeezed for room may
    // drop the instruction line, and the id must survive it (the retention eval lost a ticket without).
    expect(text.split('BILL-4340').length).toBeGreaterThanOrEqual(3);
  });
});

describe('ids a tool result reveals', () => {
  function orderLookups(listingSize: number) {
    const list = messageList();
    list.user('Please exchange the speaker from my first order.');
    list.calls([{ id: 'call_0', name: 'get_order_details', arguments: '{"order_id":"#W4013501"}' }]);
    list.result({
      callId: 'call_0',
      output: JSON.stringify({
        order_id: '#W4013501',
        items: [{ name: 'Bluetooth Speaker', item_id: '2066958818' }],
        payment_history: [{ payment_method_id: 'credit_card_3381128' }],
      }),
    });
    list.calls([{ id: 'call_0', name: 'get_product_details', arguments: '{"product_id":"4948697118"}' }]);
    const variants = Array.from({ length: listingSize }, (_, k) => String(5_000_000_000 + k * 7919));
    list.result({ callId: 'call_0', output: JSON.stringify({ name: 'Running Shoes', variants }) });
    list.assistant('Which variant would you like?');
    return { messages: list.messages, variants };
  }

  it('are kept in the key identifiers when their line does not fit, but not those of a listing', () => {
    const { messages, variants } = orderLookups(30);
    const roomy = summarizer.summarizeSync({ strategy: 'task_state', messages, maxTokens: 400, countTokens });
    expect(roomy).toContain('2066958818');
    // Tight: the order's line is dropped, its ids are still listed; no variant of the listing is.
    const tight = summarizer.summarizeSync({ strategy: 'task_state', messages, maxTokens: 48, countTokens });
    expect(countTokens(tight)).toBeLessThanOrEqual(48);
    expect(tight).not.toContain('get_order_details');
    expect(tight).toContain('## Key entities and identifiers');
    expect(tight).toMatch(/2066958818|credit_card_3381128/);
    for (const id of variants) expect(tight).not.toContain(id);
  });

  it('a listing is judged by the whole result, not by the few ids its shortened line shows', () => {
    const list = messageList();
    list.user('Reset my login and look at the TODOs.');
    list.calls([{ id: 'c_0', name: 'get_account', arguments: '{"user":"u_1234567"}' }]);
    list.result({ callId: 'c_0', output: JSON.stringify({ user_id: 'u_1234567', status: 'active' }) });
    for (let g = 0; g < 6; g++) {
      list.calls([{ id: `g_${g}`, name: 'grep', arguments: JSON.stringify({ pattern: `TODO${g}` }) }]);
      const hits = Array.from(
        { length: 300 },
        (_, k) => `src/pkg${g}/feature-module-${k}/very-long-component-name-${k}.tsx:${k}: // TODO`,
      );
      list.result({ callId: `g_${g}`, output: hits.join('\n') });
    }
    list.assistant('Done looking; your account is active.');
    for (const maxTokens of [90, 140]) {
      const text = summarizer.summarizeSync({
        strategy: 'task_state',
        messages: list.messages,
        maxTokens,
        countTokens,
      });
      const keys = text.split('## Key entities and identifiers')[1] ?? '';
      expect(keys, text).not.toMatch(/very-long-component-name/);
    }
  });

  it('a result naming only a few ids is no listing: its ids are listed', () => {
    const { messages, variants } = orderLookups(3);
    const tight = summarizer.summarizeSync({ strategy: 'task_state', messages, maxTokens: 48, countTokens });
    expect(variants.some((id) => tight.includes(id))).toBe(true);
  });
});

describe('excerpts of folded tool results (issue 35)', () => {
  const big = Array.from(
    { length: 120 },
    (_, i) => `row ${i}: shard s${i} replica r${i % 7} holds ${i * 13} ledger entries`,
  ).join('\n');
  const request = (maxTokens: number, previousSummary?: string) => {
    const list = messageList();
    list.user('Find which shard lost the ledger entries of tenant T-4411.');
    list.calls([{ id: 'c1', name: 'read_shards', arguments: '{}' }]);
    list.result({ callId: 'c1', output: big });
    list.assistant('The tenant T-4411 lives on shard s42; its replica r0 lags behind.');
    return {
      strategy: 'task_state' as const,
      messages: list.messages,
      maxTokens,
      countTokens,
      ...(previousSummary ? { previousSummary } : {}),
    };
  };

  it('fill the room other lines leave, and never push out a line of the conversation', () => {
    const small = summarizer.summarizeSync(request(120));
    expect(small).toContain('shard s42');
    expect(countTokens(small)).toBeLessThanOrEqual(120);
    const roomy = summarizer.summarizeSync(request(1_500));
    expect(roomy).toContain('shard s42');
    expect(roomy).toMatch(/excerpt: row \d+: shard s\d+/);
    expect(countTokens(roomy)).toBeGreaterThan(0.9 * 1_500);
    expect(countTokens(roomy)).toBeLessThanOrEqual(1_500);
  });

  it('are read back as filler: a later version drops them before the conversation', () => {
    const roomy = summarizer.summarizeSync(request(1_500));
    const list = messageList();
    list.user('Now check replica r0 of shard s42.');
    const next = summarizer.summarizeSync({
      strategy: 'task_state',
      messages: list.messages,
      maxTokens: 150,
      countTokens,
      previousSummary: roomy,
    });
    expect(next).toContain('shard s42');
    expect(next).toContain('replica r0 of shard s42');
    expect(countTokens(next)).toBeLessThanOrEqual(150);
  });

  it('a chat between two people gives the user sections a fifth of their room: the rest goes to facts', () => {
    const asks = [
      'Let me know if you want any tips!',
      'Check out this photo I took of the lake!',
      'Keep it up, you are doing great!',
      'Make sure you take care of yourself!',
      'Tell me more about your trip when you can!',
      'Show me the painting when it is done!',
    ];
    const between = messageList();
    const alone = messageList();
    asks.forEach((ask, k) => {
      between.user(`Caroline: ${ask}`);
      between.assistant(
        `Melanie: We moved to Tacoma in ${2010 + k} and I adopted a beagle named Biscuit${k}.`,
      );
      alone.user(ask);
      alone.assistant(`We moved to Tacoma in ${2010 + k} and I adopted a beagle named Biscuit${k}.`);
    });
    const maxTokens = 240;
    const head = (text: string) => {
      const end = text.search(/\n## (?!Task|User instructions)/);
      return text.startsWith('## ') && end > 0 && !text.startsWith('## 8') ? text.slice(0, end) : '';
    };
    const people = run(between.messages, maxTokens);
    // The head's room is (task + instructions share) x PEOPLE_HEAD_SCALE of the budget, plus its headings.
    expect(PEOPLE_HEAD_SCALE).toBeLessThanOrEqual(0.2);
    expect(countTokens(head(people))).toBeLessThanOrEqual(Math.ceil(maxTokens * 0.5 * 0.2) + 10);
    expect(people).toContain('Biscuit');
    // A user talking to an assistant keeps the whole room for what they asked.
    const assistant = run(alone.messages, maxTokens);
    expect(countTokens(head(assistant))).toBeGreaterThan(countTokens(head(people)));
  });
});
