import { describe, expect, it } from 'vitest';
import { messageList } from '../../../../test/support/compact-messages.js';
import { isStateChanging, keyArguments, outcome, toolFacts } from './tool-facts.js';

describe('tool facts', () => {
  it('pairs results with calls by position when ids repeat every turn (call_0)', () => {
    const list = messageList();
    list.user('Check my orders please.');
    list.calls([{ id: 'call_0', name: 'get_order_details', arguments: '{"order_id":"#W1111111"}' }]);
    list.result({ callId: 'call_0', output: '{"order_id":"#W1111111","status":"delivered","total":112.5}' });
    list.user('And the other one?');
    list.calls([
      { id: 'call_0', name: 'get_order_details', arguments: '{"order_id":"#W2222222"}' },
      {
        id: 'call_1',
        name: 'pay_order',
        arguments: '{"order_id":"#W2222222","payment_method_id":"credit_card_7719342"}',
      },
    ]);
    // Answered out of order.
    list.result({ callId: 'call_1', output: 'Error: card declined', isError: true });
    list.result({ callId: 'call_0', output: '{"order_id":"#W2222222","status":"pending"}' });
    const lines = toolFacts(list.messages).map((f) => f.text);
    expect(lines).toEqual([
      'get_order_details(#W1111111) → order_id=#W1111111, status=delivered, total=112.5',
      'get_order_details(#W2222222) → order_id=#W2222222, status=pending',
      'pay_order(order_id=#W2222222, payment_method_id=credit_card_7719342) → Error: card declined',
    ]);
    const facts = toolFacts(list.messages);
    expect(facts[2]!.traits).toMatchObject({ stateChanging: true, failed: true });
    expect(facts[2]!.argumentIds).toEqual(['#W2222222', 'credit_card_7719342']);
  });

  it('reduces results to key fields: arrays to named ids, id-keyed objects to their ids, contact details out', () => {
    const output = JSON.stringify({
      user_id: 'maya_lopez_4821',
      email: 'maya@example.com',
      phone: '555-0100',
      address: { address1: '12 Elm Street', city: 'Springfield' },
      payment_methods: { credit_card_7719342: { source: 'credit_card' }, gift_card_2284511: { balance: 40 } },
      items: [
        { name: 'T-Shirt', product_id: '9523456873', item_id: '6719934021', price: 53.27 },
        { name: 'Desk Lamp', product_id: '1234567890', item_id: '5555555555', price: 20 },
      ],
    });
    const text = outcome(output).text;
    expect(text).toBe(
      'user_id=maya_lopez_4821, payment_methods=[credit_card_7719342, gift_card_2284511], items=[T-Shirt 6719934021, Desk Lamp 5555555555]',
    );
    expect(text).not.toContain('maya@example.com');
    expect(text).not.toContain('Elm Street');
  });

  it('never cuts an argument value: long values are left out whole, commands keep whole leading words', () => {
    const secretish = `sk-${'a'.repeat(70)}`;
    const args = keyArguments(JSON.stringify({ path: 'src/app.ts', content: secretish, token: 'abc' }));
    expect(args.text).toBe('src/app.ts');
    const command = keyArguments(
      JSON.stringify({
        command: `curl -H 'Authorization: Bearer ${'x'.repeat(50)}' https://api.example.com/v1/things`,
      }),
    );
    expect(command.text).toBe("curl -H 'Authorization: Bearer …");
    expect(keyArguments('not json at all').text).toBe('not json at all');
  });

  it('text results: the error line, else the first line plus the ids it names', () => {
    expect(outcome('collected 3 items\nFAILED test_x.py::test_a - AssertionError\n').text).toBe(
      'FAILED test_x.py::test_a - AssertionError',
    );
    expect(outcome('On branch fix/ledger-rounding-12\nnothing to commit').text).toBe(
      'On branch fix/ledger-rounding-12',
    );
    expect(outcome(' id | status\n----\n ae03feac-5fd5-406c-88a1-a04687d421fc | suspended').text).toBe(
      'id | status [ae03feac-5fd5-406c-88a1-a04687d421fc]',
    );
    expect(outcome('[cleared: grep output, 518 chars; ids: AUTH-1; recall "tool-abc123"]').text).toBe(
      '(cleared; recall ref tool-abc123)',
    );
    expect(outcome('[cleared: grep output, 518 chars]').text).toBe('(cleared)');
    // The longer form of earlier versions, still in views persisted by callers.
    expect(
      outcome('[agent-compaction: output of tool "grep" cleared (518 chars); recall ref "tool-abc123"]').text,
    ).toBe('(cleared; recall ref tool-abc123)');
    expect(outcome(undefined).text).toBe('no result');
  });

  it('names the file a call reads by its file_path (Claude Code, Qwen Code): reads of two files are two facts', () => {
    const list = messageList();
    for (const [file, absolute] of [
      ['/work/a.txt', { file_path: '/work/a.txt' }],
      ['/work/b.txt', { filePath: '/work/b.txt' }],
      ['/work/c.txt', { absolute_path: '/work/c.txt', limit: 40 }],
      ['/work/d.txt', { file_path: '/work/d.txt' }],
    ] as const) {
      list.calls([{ id: 'call_0', name: 'read_file', arguments: JSON.stringify(absolute) }]);
      list.result({ callId: 'call_0', output: `contents of ${file}\nline 2` });
    }
    const facts = toolFacts(list.messages);
    expect(facts.map((fact) => fact.text.split(' → ')[0])).toEqual([
      'read_file(/work/a.txt)',
      'read_file(/work/b.txt)',
      'read_file(/work/c.txt)',
      'read_file(/work/d.txt)',
    ]);
    // Another file read is no rerun of the first.
    expect(facts.map((fact) => fact.traits.superseded)).toEqual([false, false, false, false]);
  });

  it('marks a rerun superseded unless the earlier result named ids the later one lacks; scratchpad calls are flagged', () => {
    const list = messageList();
    for (const output of ['Tests 1 failed | 3 passed', 'Tests 4 passed']) {
      list.calls([{ id: 'call_0', name: 'run_tests', arguments: '{"command":"npm test"}' }]);
      list.result({ callId: 'call_0', output });
    }
    for (const id of ['ae03feac-5fd5-406c-88a1-a04687d421fc', '62771eac-1b3b-41ca-ae70-210de37e5ca0']) {
      list.calls([{ id: 'call_0', name: 'bash', arguments: '{"command":"psql -c \\"select id\\""}' }]);
      list.result({ callId: 'call_0', output: id });
    }
    list.calls([{ id: 'call_0', name: 'think', arguments: '{"thought":"plan the refund"}' }]);
    list.result({ callId: 'call_0', output: '' });
    const traits = toolFacts(list.messages).map((f) => f.traits);
    expect(traits.map((t) => t.superseded)).toEqual([true, false, false, false, false]);
    expect(traits[4]!.scratch).toBe(true);
    expect(isStateChanging('exchange_delivered_order_items')).toBe(true);
    expect(isStateChanging('get_order_details')).toBe(false);
  });
});

describe('tool echoes', () => {
  it('collapse into one line per tool and target, the latest, with the number of calls', () => {
    const list = messageList();
    list.user('Fix the app.');
    for (let i = 0; i < 5; i++) {
      const args = { path: 'src/app.ts', old_string: `v${i}`, new_string: `v${i + 1}` };
      list.calls([{ id: `e${i}`, name: 'edit_file', arguments: JSON.stringify(args) }]);
      list.result({ callId: `e${i}`, output: 'File edited successfully.' });
    }
    const write = { path: 'README.md', content: 'long text '.repeat(20) };
    list.calls([{ id: 'w0', name: 'write_file', arguments: JSON.stringify(write) }]);
    list.result({ callId: 'w0', output: 'ok' });
    list.calls([{ id: 'r0', name: 'run_tests', arguments: '{"command":"npm test"}' }]);
    list.result({ callId: 'r0', output: 'FAIL src/app.test.ts: expected 3, got 4' });
    const facts = toolFacts(list.messages).map((fact) => fact.text);
    expect(facts).toEqual([
      'edit_file(src/app.ts) → File edited successfully. (5 calls)',
      'write_file(README.md) → ok',
      expect.stringMatching(/^run_tests\(.*npm test.*\) → .*FAIL src\/app\.test\.ts/),
    ]);
  });
});
