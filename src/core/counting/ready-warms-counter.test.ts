/**
 * Issue 47 point 1: a fresh process's first call on a known session (bench/cold-process.ts)
 * built the counter's sticky expression and compiled it in its first count, after `ready()`
 * (about 10 ms of CPU on a quiet machine, 30 in a loaded fresh process). `ready()` builds and
 * runs it now: the first count after `ready()` builds no counter.
 */
import { describe, expect, it } from 'vitest';
import { CompactManager } from '../manager/compact-manager.js';
import { piecesCountersBuilt } from './count-pieces.js';
import { BpeTokenCounter } from './token-counter.js';

describe('ready() and the first count', () => {
  it("builds the counter's expression in ready(), not in the first count after it", async () => {
    const counter = new BpeTokenCounter({ encoding: 'cl100k_base' });
    const before = piecesCountersBuilt();
    await counter.ready();
    const afterReady = piecesCountersBuilt();
    expect(afterReady).toBe(before + 1);
    expect(counter.countText('the first count after ready')).toBeGreaterThan(0);
    expect(piecesCountersBuilt()).toBe(afterReady);
  });

  it("a manager's ready() leaves nothing for its first call to build", async () => {
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 128_000 });
    await manager.ready();
    const afterReady = piecesCountersBuilt();
    await manager.compact('s', [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'hello there' },
    ]);
    expect(piecesCountersBuilt()).toBe(afterReady);
    await manager.shutdown();
  });
});
