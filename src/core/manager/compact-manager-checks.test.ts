/**
 * Checked options and state: per-call options are checked like the constructor's, a stored
 * state that does not match its schema is treated as lost (one event, the session goes on as
 * new), and circular or absurdly deep messages are typed errors naming the index.
 */
import { describe, expect, it } from 'vitest';
import { charCounter, chatTurns } from '../../../test/support/manager-fixtures.js';
import { type CompactError, isCompactError } from '../errors.js';
import type { AnyCompactEvent } from '../events/events.js';
import { MemorySessionStore, type SessionState, type SessionStore } from '../session/session-store.js';
import { CompactManager } from './compact-manager.js';

async function errorOf(work: () => Promise<unknown>): Promise<CompactError> {
  const error = await work().then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isCompactError(error)) throw new Error(`expected a CompactError, got ${String(error)}`);
  return error;
}

describe('per-call options', () => {
  const manager = new CompactManager({ maxContextTokens: 10_000, tokenCounter: charCounter });
  for (const bad of [Number.NaN, -5, 0, 1.5, Number.POSITIVE_INFINITY, '8000']) {
    it(`maxContextTokens: ${String(bad)} is invalid_config naming the field`, async () => {
      const error = await errorOf(() =>
        manager.compact('s', chatTurns(2), { maxContextTokens: bad as unknown as number }),
      );
      expect(error.code).toBe('invalid_config');
      expect(error.issues?.[0]?.path).toEqual(['maxContextTokens']);
    });
  }
  it('other fields of the wrong type name the field', async () => {
    const cases: [string, Record<string, unknown>][] = [
      ['force', { force: 'yes' }],
      ['agent', { agent: 5 }],
      ['tools', { tools: {} }],
      ['signal', { signal: {} }],
      ['policy', { policy: 3 }],
      ['options', null as unknown as Record<string, unknown>],
    ];
    for (const [field, options] of cases) {
      const error = await errorOf(() => manager.compact('s', chatTurns(2), options as never));
      expect(error.code, field).toBe('invalid_config');
      expect(error.message, field).toContain(field);
    }
  });
  it('a NaN window never sends a request over the window: it throws before anything is sent', async () => {
    const error = await errorOf(() =>
      manager.preflight('s', chatTurns(60), { maxContextTokens: Number.NaN }),
    );
    expect(error.code).toBe('invalid_config');
  });
});

describe('corrupted stored state', () => {
  /** A shared store whose raw values the test can corrupt. */
  function corruptible() {
    const inner = new MemorySessionStore();
    let override: unknown;
    const store: SessionStore = {
      name: 'corruptible',
      get: async (id) => (override !== undefined ? (override as SessionState) : inner.get(id)),
      set: (id, state, options) => inner.set(id, state, options),
      delete: async (id) => {
        override = undefined;
        await inner.delete(id);
      },
      acquireLock: (id, ttl) => inner.acquireLock(id, ttl),
    };
    return { store, inner, corrupt: (value: unknown) => (override = value) };
  }

  for (const [label, value] of [
    ['a string', '{"version": 3, "coveredIds": ['],
    ['the wrong shape', { version: 'three', coveredIds: 'm1' }],
    ['a summary that is not a string', { version: 2, coveredIds: ['x'], summary: { text: 42, tokens: 1 } }],
    ['a broken rewrite', { version: 2, coveredIds: [], rewrites: { a: { kind: 'melted' } } }],
  ] as const) {
    it(`${label}: one compact.error, the session goes on as new, and the next calls work`, async () => {
      const { store, inner, corrupt } = corruptible();
      const manager = new CompactManager({ maxContextTokens: 10_000, tokenCounter: charCounter, store });
      const events: AnyCompactEvent[] = [];
      manager.on('compact.error', (event) => events.push(event as AnyCompactEvent));
      await manager.compact('s', chatTurns(45));
      corrupt(value);
      const first = await manager.compact('s', chatTurns(46));
      expect(first.tokensAfter).toBeLessThanOrEqual(manager.budget);
      const second = await manager.compact('s', chatTurns(47));
      expect(second.tokensAfter).toBeLessThanOrEqual(manager.budget);
      const corruptEvents = events.filter(
        (e) => (e.properties as { errorType?: string }).errorType === 'corrupt_state',
      );
      expect(corruptEvents).toHaveLength(1);
      expect(String((corruptEvents[0]!.properties as { message?: string }).message)).toMatch(
        /stored state of session "s"/,
      );
      expect(await inner.get('s')).toBeDefined();
    });
  }
});

describe('hostile input', () => {
  const manager = new CompactManager({ maxContextTokens: 10_000, tokenCounter: charCounter });
  it('a circular message is invalid_messages naming its index', async () => {
    const history = chatTurns(3);
    const circular: Record<string, unknown> = { role: 'user', content: 'loop' };
    circular.self = circular;
    history.push(circular);
    const error = await errorOf(() => manager.compact('circular', history));
    expect(error.code).toBe('invalid_messages');
    expect(error.message).toContain('messages[6]');
    expect(error.message).toMatch(/circular/);
  });
  it('20,000-deep nesting is invalid_messages naming its index, not a RangeError', async () => {
    let deep: Record<string, unknown> = { leaf: true };
    for (let i = 0; i < 20_000; i++) deep = { next: deep };
    const history = [...chatTurns(2), { role: 'user', content: 'deep', extra: deep }];
    const error = await errorOf(() => manager.compact('deep', history));
    expect(error.code).toBe('invalid_messages');
    expect(error.message).toContain('messages[4]');
  });
});
