/**
 * Review 88: docs/cli.md says OpenAI Responses messages are read and a body's
 * `max_output_tokens` is kept free, but `compact` and `estimate` on a Responses request body
 * (`{model, instructions, input, tools, max_output_tokens}`, what the proxy compacts on
 * `/v1/responses`) failed: `an object input needs a "messages" array`, exit 2. The body's
 * `input` is its messages, `instructions` its system prompt; the output keeps the shape.
 */
import { describe, expect, it } from 'vitest';
import { cli, useTempFiles, words } from '../support/cli-fixtures.js';

const temp = useTempFiles();

function responsesBody(): Record<string, unknown> & { input: Record<string, unknown>[] } {
  const input: Record<string, unknown>[] = [{ role: 'user', content: `Find the bug. ${words('task', 40)}` }];
  for (let i = 0; i < 40; i++) {
    input.push(
      { type: 'reasoning', id: `rs_${i}`, summary: [], encrypted_content: 'e'.repeat(80) },
      { type: 'function_call', id: `fc_${i}`, call_id: `call_${i}`, name: 'read', arguments: `{"i":${i}}` },
      { type: 'function_call_output', call_id: `call_${i}`, output: words(`out${i}`, 120) },
    );
  }
  return {
    model: 'gpt-4o',
    instructions: 'You fix bugs.',
    input,
    tools: [{ type: 'function', name: 'read', parameters: { type: 'object', properties: {} } }],
    max_output_tokens: 1000,
    store: false,
  };
}

describe('the CLI on an OpenAI Responses request body', () => {
  it('compact prints the same body with its input compacted, paired and under the window', async () => {
    const body = responsesBody();
    const run = await cli(['compact', await temp.file('responses.json', body), '--max-context', '6000']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout) as ReturnType<typeof responsesBody>;
    expect(Object.keys(out)).toEqual(Object.keys(body));
    expect(out.instructions).toBe('You fix bugs.');
    expect(out).not.toHaveProperty('messages');
    expect(out.input.length).toBeLessThan(body.input.length);
    expect(JSON.stringify(out.input)).toContain('<COMPACT-SUMMARY v1>');
    // Every output after its call, every call answered: what the Responses API accepts.
    const open = new Set<unknown>();
    for (const item of out.input) {
      if (item.type === 'function_call') open.add(item.call_id);
      if (item.type === 'function_call_output') expect(open.delete(item.call_id)).toBe(true);
    }
    expect(open.size).toBe(0);
    const estimate = await cli(['estimate', await temp.file('out.json', out), '--max-context', '6000']);
    expect(estimate.code).toBe(0);
    const counted = JSON.parse(estimate.stdout) as { total: number; breakdown: { system: number } };
    expect(counted.breakdown.system).toBeGreaterThan(0);
    expect(counted.total + 1000).toBeLessThanOrEqual(6000);
  });

  it('a body with neither "messages" nor an "input" array names both', async () => {
    const run = await cli([
      'compact',
      await temp.file('neither.json', { model: 'gpt-4o', input: 'hi' }),
      '--max-context',
      '6000',
    ]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/"messages" array \(or a Responses body's "input" array\)/);
  });
});
