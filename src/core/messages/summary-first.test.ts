import { describe, expect, it } from 'vitest';
import { CHAT_TURNS, isSummaryText, responsesSummaryFirst, summaryFirst } from './summary-first.js';

const S = '<COMPACT-SUMMARY v2>\nsummary\n</COMPACT-SUMMARY>';
const summary = { role: 'assistant', content: S };
const isSummary = (message: unknown) => isSummaryText(message, S);
const call = { role: 'assistant', content: null, tool_calls: [{ id: 'c1' }] };
const result = { role: 'tool', tool_call_id: 'c1', content: 'ok' };
const user = { role: 'user', content: 'Next?' };
const system = { role: 'system', content: 'Be brief.' };
const developer = { role: 'developer', content: 'Be brief.' };

describe('summaryFirst', () => {
  it('writes a summary that opens the request as a user turn', () => {
    const out = summaryFirst([system, summary, user], isSummary, CHAT_TURNS);
    expect(out).toEqual([system, { role: 'user', content: S }, user]);
  });

  it('moves the summary ahead of a pinned round that opens the request, the round whole', () => {
    const out = summaryFirst([developer, call, result, summary, user], isSummary, CHAT_TURNS);
    expect(out).toEqual([developer, { role: 'user', content: S }, call, result, user]);
  });

  it('leaves a request that opens with a user turn as it is (the same array)', () => {
    const given = [system, user, call, result, summary, user];
    expect(summaryFirst(given, isSummary, CHAT_TURNS)).toBe(given);
  });

  it('leaves a request without a summary as it is', () => {
    const given = [call, result, user];
    expect(summaryFirst(given, isSummary, CHAT_TURNS)).toBe(given);
  });

  it('reads a summary written in text parts', () => {
    const parts = { role: 'assistant', content: [{ type: 'text', text: S }] };
    expect(summaryFirst([call, result, parts, user], isSummary, CHAT_TURNS)[0]).toEqual({
      ...parts,
      role: 'user',
    });
  });
});

describe('responsesSummaryFirst', () => {
  const item = { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: S }] };
  const fnCall = { type: 'function_call', call_id: 'c1', name: 'probe', arguments: '{}' };
  const output = { type: 'function_call_output', call_id: 'c1', output: 'ok' };
  const ask = { type: 'message', role: 'user', content: 'Next?' };

  it('moves the summary ahead of a pinned call, as a user input_text message', () => {
    expect(responsesSummaryFirst([fnCall, output, item, ask], S)).toEqual([
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: S }] },
      fnCall,
      output,
      ask,
    ]);
  });

  it('never moves it ahead of a provider compaction item', () => {
    const given = [{ type: 'compaction', encrypted_content: 'x' }, fnCall, output, item, ask];
    expect(responsesSummaryFirst(given, S)).toBe(given);
  });
});
