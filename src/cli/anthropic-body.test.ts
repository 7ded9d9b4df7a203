/**
 * Review 81d: `compact` on an Anthropic Messages request body whose turns are plain text (valid
 * in every format) read it as Chat, and the compacted body opened with the summary as an
 * assistant turn, which the Messages API refuses ("first message must use the user role").
 * A top-level `system` names the body's format: Anthropic.
 */
import { describe, expect, it } from 'vitest';
import { cli, useTempFiles, words } from '../../test/support/cli-fixtures.js';

const temp = useTempFiles();

function turns(): { role: string; content: string }[] {
  const messages = [{ role: 'user', content: `Plan the migration. ${words('task', 80)}` }];
  for (let i = 0; i < 30; i++)
    messages.push(
      { role: 'assistant', content: words(`answer${i}`, 120) },
      { role: 'user', content: words(`question${i}`, 120) },
    );
  return messages;
}

describe('compact on an Anthropic body of plain turns', () => {
  it('the compacted body opens with a user turn, its other keys kept', async () => {
    const body = {
      model: 'claude-sonnet-4-6',
      max_tokens: 1024,
      system: 'Be brief.',
      messages: turns(),
      metadata: { user_id: 'u1' },
    };
    const run = await cli(['compact', await temp.file('claude.json', body), '--max-context', '6000']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout) as typeof body;
    expect(out.messages.length).toBeLessThan(body.messages.length);
    expect(out.messages[0]!.role).toBe('user');
    expect(out.messages[0]!.content).toContain('<COMPACT-SUMMARY v1>');
    expect(Object.keys(out)).toEqual(Object.keys(body));
    expect(out.system).toBe('Be brief.');
  });

  it('a Chat body (system prompt as a message) is still read as Chat', async () => {
    const body = { model: 'gpt-4o', messages: [{ role: 'system', content: 'Be brief.' }, ...turns()] };
    const run = await cli(['compact', await temp.file('chat.json', body), '--max-context', '6000']);
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout) as typeof body;
    expect(out.messages[0]).toEqual({ role: 'system', content: 'Be brief.' });
    expect(out.messages[1]!.role).toBe('assistant');
    expect(out.messages[1]!.content).toContain('<COMPACT-SUMMARY v1>');
  });
});
