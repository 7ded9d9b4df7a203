import { describe, expect, it } from 'vitest';
import { compactMessages } from './compact-messages.js';
import { CompactManager } from './manager/compact-manager.js';
import { onProcessCachesRelease } from './process-caches.js';

/**
 * The count of live managers behind the process caches (process-caches.ts): every manager
 * made ends its hold, so the shared tables drop when the last one shuts down, also after a
 * constructor that threw or a `compactMessages()` (which makes managers of its own).
 */
describe('the holds on the process caches', () => {
  it('a manager whose constructor throws holds nothing', async () => {
    let released = 0;
    onProcessCachesRelease(() => released++);
    expect(() => new CompactManager({ model: 'gpt-4o', maxContextTokens: 1 })).toThrow(
      expect.objectContaining({ code: 'invalid_config' }),
    );
    expect(
      () => new CompactManager({ model: 'gpt-4o', agents: { a: { policy: { triggerPct: 7 } } } }),
    ).toThrow(expect.objectContaining({ code: 'invalid_config' }));
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 16_000 });
    await manager.shutdown();
    expect(released).toBe(1);
  });

  it('compactMessages, concurrent or not, leaves no hold behind', async () => {
    let released = 0;
    onProcessCachesRelease(() => released++);
    const messages = [
      { role: 'user', content: 'Never edit files under src/generated/.' },
      { role: 'assistant', content: 'Understood.' },
    ];
    const results = await Promise.all(
      [1, 2, 3].map(() => compactMessages(messages, { model: 'gpt-4o', maxTokens: 16_000 })),
    );
    expect(results.map((result) => result.messages.length)).toEqual([2, 2, 2]);
    expect(messages).toHaveLength(2);
    const before = released;
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 16_000 });
    await manager.shutdown();
    expect(released).toBe(before + 1);
  });

  it('a manager shut down twice ends its own hold once', async () => {
    let released = 0;
    onProcessCachesRelease(() => released++);
    const first = new CompactManager({ model: 'gpt-4o', maxContextTokens: 16_000 });
    const second = new CompactManager({ model: 'gpt-4o', maxContextTokens: 16_000 });
    await Promise.all([first.shutdown(), first.shutdown()]);
    await first.shutdown();
    expect(released).toBe(0);
    // Called after its shutdown it still answers (the caches it uses are built again).
    const messages = [{ role: 'user', content: 'Never edit files under src/generated/.' }];
    expect((await first.compact('s', messages)).messages).toEqual(messages);
    await second.shutdown();
    expect(released).toBe(1);
  });
});
