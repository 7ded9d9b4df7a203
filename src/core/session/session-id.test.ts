import { describe, expect, it } from 'vitest';
import { CompactManager } from '../manager/compact-manager.js';
import { MemorySessionStore } from './session-store.js';

const history = [
  { role: 'user', content: 'hello' },
  { role: 'assistant', content: 'hi' },
];

describe('session ids that name a session record', () => {
  it.each([
    'victim::prepared',
    'victim::counts',
    'victim::quick',
    'victim::agent::planner',
    'victim::prepared-forks',
    'victim::prepared@0123abcd',
  ])('%s is refused with a typed error naming sessionId, and the store is not touched', async (id) => {
    const store = new MemorySessionStore();
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 8_000, store });
    await expect(manager.preflight(id, history)).rejects.toMatchObject({
      code: 'invalid_messages',
      issues: [{ path: ['sessionId'] }],
    });
    await expect(manager.reset(id)).rejects.toMatchObject({ code: 'invalid_messages' });
    expect(await store.get(id)).toBeUndefined();
    await manager.shutdown();
  });

  it('an id holding :: elsewhere is served', async () => {
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 8_000 });
    expect(await manager.preflight('team::alice', history)).toEqual(history);
    expect(await manager.preflight('team::prepared::2', history)).toEqual(history);
    await manager.shutdown();
  });
});
