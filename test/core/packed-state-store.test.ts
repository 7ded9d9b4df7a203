/**
 * Issue 47 point 1: a compacted long session's state is written to a store outside the process
 * with its lists packed (a few counted strings, not thousands of JSON values), so a fresh
 * process's store parses and checks little; it reads back as the warm manager holds it, an
 * earlier form (lists as arrays) still reads, and a malformed packed form is rejected (the
 * session starts over, the call answers). A real file store, as a user's own.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CompactManager, type SessionStore } from '../../src/index.js';
import { syntheticSession } from '../../src/testing/synthetic-session.js';
import { jsonFileStore } from '../support/json-file-store.js';

// The store's deadline (500 ms by default) far away: this file checks the packed form, and a
// loaded machine's file writes past the deadline take the fail-open path instead (a rehearsal
// under CI_LOAD read back a state of no covered ids).
const options = { model: 'gpt-4o', maxContextTokens: 32_000, storeTimeoutMs: 600_000 } as const;
const ask = (i: number) => ({ role: 'user', content: `follow-up ${i}: run the tests again` });
const copy = <T>(value: T): T => JSON.parse(JSON.stringify(value));

/** Values a JSON parser makes for `value` (array entries and object fields, nested). */
function jsonValues(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 1;
  const children = Array.isArray(value) ? value : Object.values(value);
  return 1 + children.reduce((sum: number, child) => sum + jsonValues(child), 0);
}

describe('a compacted session in a store outside the process', () => {
  let dir: string;
  let store: SessionStore;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'packed-state-'));
    store = jsonFileStore(dir);
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function compacted() {
    const messages: unknown[] = syntheticSession({
      turns: 300,
      seed: 11,
      toolDensity: 2.5,
      resultChars: 400,
    });
    const manager = new CompactManager({ ...options, store });
    expect((await manager.compact('s', messages)).applied).toBe(true);
    await manager.flush();
    const state = (await manager.state('s'))!;
    return { manager, messages, state };
  }

  it('is stored as a few strings, reads back as the warm manager holds it and sends the same', async () => {
    const { manager, messages, state } = await compacted();
    const values = jsonValues(state);
    expect(state.coveredIds.length + (state.keptIds?.length ?? 0)).toBeGreaterThan(500);
    const stored = (await store.get('s'))!;
    expect(stored.packed?.coveredIds?.count).toBe(state.coveredIds.length);
    expect(stored.coveredIds).toEqual([]);
    expect(jsonValues(stored)).toBeLessThan(100);
    expect(values).toBeGreaterThan(500);
    expect(JSON.stringify(stored).length).toBeLessThan(JSON.stringify(state).length);
    const fresh = new CompactManager({ ...options, store });
    expect(copy(await fresh.state('s'))).toEqual(copy(state));
    messages.push(ask(1));
    const got = await fresh.compact('s', copy(messages));
    const warm = await manager.compact('s', copy(messages));
    expect(got.messages).toEqual(warm.messages);
    await fresh.shutdown();
    await manager.shutdown();
  });

  it('reads a state written in the earlier form (every list an array) as it is', async () => {
    const { manager, messages, state } = await compacted();
    await manager.shutdown();
    // What an earlier version of the library wrote.
    await store.set('s', copy(state));
    expect((await store.get('s'))?.packed).toBeUndefined();
    const fresh = new CompactManager({ ...options, store });
    expect(copy(await fresh.state('s'))).toEqual(copy(state));
    messages.push(ask(1));
    const got = await fresh.compact('s', copy(messages));
    expect(got.version).toBe(state.version);
    expect(got.applied).toBe(false);
    await fresh.shutdown();
  });

  it('rejects a malformed packed state: one corrupt_state error, the session starts over, the call answers', async () => {
    const { manager, messages } = await compacted();
    await manager.shutdown();
    // A packed form whose covered list has no count (here in place of the one written).
    const stored = (await store.get('s'))!;
    stored.packed = { v: 1, coveredIds: { count: 'many' as unknown as number, text: 'h:1 h:2' } };
    await store.set('s', stored);
    const fresh = new CompactManager({ ...options, store });
    const errors: string[] = [];
    fresh.on('compact.error', (event) => {
      errors.push(String((event.properties as { errorType?: string }).errorType));
    });
    messages.push(ask(1));
    const got = await fresh.compact('s', copy(messages));
    expect(errors).toContain('corrupt_state');
    expect(got.messages.length).toBeGreaterThan(0);
    expect(got.applied).toBe(true);
    await fresh.shutdown();
  });
});
