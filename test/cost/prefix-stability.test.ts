import { describe, expect, it } from 'vitest';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { quarterCounter } from '../support/quarter-counter.js';
import { codingSessionHead, readFileRound } from '../support/read-file-session.js';

/**
 * Issue 21, what prompt caching needs from the engine: between triggers each request extends
 * the previous one byte for byte (the cached prefix is read, never rewritten); a trigger
 * rewrites the prefix once, on the call it fires, never on several consecutive calls; and a
 * cache-aware clearing pass leaves the next trigger further away than clearing to the target.
 */

/** Runs `calls` tool calls through preflight; returns the requests and the calls that compacted. */
async function session(calls: number, cacheAware: boolean, costTrigger = true) {
  const manager = new CompactManager({
    maxContextTokens: 16_000,
    tokenCounter: quarterCounter,
    policy: { cacheAware, costTrigger },
  });
  const compacted = new Set<number>();
  let call = 0;
  manager.on('compact.trigger_decision', (event) => {
    if (event.properties.triggered) compacted.add(call);
  });
  const history: Record<string, unknown>[] = codingSessionHead();
  const requests: string[][] = [];
  for (call = 1; call <= calls; call++) {
    if (call % 25 === 0) history.push({ role: 'user', content: `Keep ticket BILL-${call} in mind.` });
    history.push(...readFileRound(call, `${call} `.repeat(300 + ((call * 37) % 900))));
    requests.push((await manager.preflight('s', history)).map((m) => JSON.stringify(m)));
  }
  await manager.shutdown();
  return { requests, compacted };
}

/** Calls whose request does not extend the previous one (a prefix rewrite). */
function rewrites(requests: readonly string[][]): number[] {
  const out: number[] = [];
  for (let k = 1; k < requests.length; k++) {
    const before = requests[k - 1]!;
    const now = requests[k]!;
    if (before.some((message, i) => now[i] !== message)) out.push(k + 1);
  }
  return out;
}

describe('the prompt prefix under compaction', () => {
  it('is extended byte for byte between triggers and rewritten only on a call that compacted, never twice in a row', async () => {
    const { requests, compacted } = await session(150, true);
    const rewritten = rewrites(requests);
    expect(rewritten.length).toBeGreaterThan(2);
    for (const call of rewritten)
      expect(compacted.has(call), `call ${call} rewrote the prefix without compacting`).toBe(true);
    for (let k = 1; k < rewritten.length; k++) expect(rewritten[k]! - rewritten[k - 1]!).toBeGreaterThan(1);
  });

  it('clearing every old tool result (cacheAware) rewrites less often than clearing to the target', async () => {
    // At the trigger alone (the cost trigger compacts each mode at its own pace).
    const aware = rewrites((await session(150, true, false)).requests).length;
    const toTarget = rewrites((await session(150, false, false)).requests).length;
    expect(aware).toBeLessThan(toTarget);
  });
});
