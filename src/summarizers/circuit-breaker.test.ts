import { afterEach, describe, expect, it } from 'vitest';
import {
  CircuitBreaker,
  type CircuitEvent,
  type CircuitPass,
  type CircuitSnapshot,
  type CircuitTicket,
  circuitBreakerFor,
  onCircuitEvent,
  resetCircuitBreakers,
} from './circuit-breaker.js';

afterEach(() => resetCircuitBreakers());

const strip = (events: CircuitEvent[]) => events.map(({ at: _at, ...rest }) => rest);

/** The pass of an allowed ticket (fails the test when refused). */
function pass(ticket: CircuitTicket): CircuitPass {
  expect(ticket.allowed).toBe(true);
  return ticket as CircuitPass;
}

/** `n` calls one after another, each failing. */
async function failTimes(breaker: CircuitBreaker, n: number, reason = 'boom'): Promise<void> {
  for (let i = 0; i < n; i++) breaker.failure(pass(await breaker.acquire()), `${reason} ${i}`);
}

describe('CircuitBreaker', () => {
  it('is one per key in the process', () => {
    const a = circuitBreakerFor('openai:gpt-4o-mini', { failureThreshold: 2 });
    expect(circuitBreakerFor('openai:gpt-4o-mini')).toBe(a);
    expect(circuitBreakerFor('openai:gpt-4o-mini', { failureThreshold: 9 }).failureThreshold).toBe(2);
    expect(circuitBreakerFor('anthropic:claude-haiku-4-5')).not.toBe(a);
  });

  it('starts half-open: one call at a time until the first success, then any number', async () => {
    const breaker = new CircuitBreaker('k');
    const [first, second] = await Promise.all([breaker.acquire(), breaker.acquire()]);
    expect(first).toEqual({ allowed: true, probe: false, trial: true });
    expect(second).toMatchObject({ allowed: false, state: 'half_open' });
    breaker.failure(pass(first), 'down');
    const retry = pass(await breaker.acquire());
    expect(retry.trial).toBe(true);
    breaker.success(retry);
    const burst = await Promise.all([breaker.acquire(), breaker.acquire(), breaker.acquire()]);
    expect(burst).toEqual(Array(3).fill({ allowed: true, probe: false, trial: false }));
    const eager = new CircuitBreaker('k2', { startHalfOpen: false });
    expect((await Promise.all([eager.acquire(), eager.acquire()])).every((t) => t.allowed)).toBe(true);
  });

  it('opens at the threshold, refuses until the cool-down, lets exactly one probe through, closes on its success', async () => {
    let clock = 0;
    const events: CircuitEvent[] = [];
    const off = onCircuitEvent((event) => events.push(event));
    const breaker = new CircuitBreaker('k', { failureThreshold: 3, cooldownMs: 100, now: () => clock });
    await failTimes(breaker, 3);
    expect(breaker.snapshot()).toEqual({ state: 'open', failures: 3, openUntil: 100 });
    expect(await breaker.acquire()).toMatchObject({ allowed: false, state: 'open', retryAt: 100 });
    clock = 100;
    const [first, second, third] = await Promise.all([
      breaker.acquire(),
      breaker.acquire(),
      breaker.acquire(),
    ]);
    expect(first).toEqual({ allowed: true, probe: true, trial: false });
    expect(second).toMatchObject({ allowed: false, state: 'half_open' });
    expect(third).toMatchObject({ allowed: false, state: 'half_open' });
    breaker.success(pass(first));
    expect(breaker.snapshot()).toEqual({ state: 'closed', failures: 0 });
    expect(await breaker.acquire()).toEqual({ allowed: true, probe: false, trial: false });
    off();
    expect(strip(events)).toEqual([
      { key: 'k', transition: 'open', failures: 3, retryAt: 100, reason: 'boom 2' },
      { key: 'k', transition: 'probe', failures: 3 },
      { key: 'k', transition: 'close', failures: 0 },
    ]);
  });

  it('reopens for a full cool-down when the probe fails; an aborted probe frees the slot', async () => {
    let clock = 0;
    const local: CircuitEvent[] = [];
    const breaker = new CircuitBreaker('k', { failureThreshold: 1, cooldownMs: 50, now: () => clock });
    const early = pass(await breaker.acquire());
    breaker.failure(early, 'down');
    clock = 60;
    const probe = await breaker.acquire((event) => local.push(event));
    expect(probe).toEqual({ allowed: true, probe: true, trial: false });
    breaker.release(pass(probe));
    const again = pass(await breaker.acquire());
    expect(again.probe).toBe(true);
    breaker.failure(again, 'still down', (event) => local.push(event));
    expect(breaker.snapshot()).toEqual({ state: 'open', failures: 2, openUntil: 110 });
    expect(strip(local)).toEqual([
      { key: 'k', transition: 'probe', failures: 1 },
      { key: 'k', transition: 'open', failures: 2, retryAt: 110, reason: 'still down' },
    ]);
    // A late failure of a call let through before the circuit opened does not extend it.
    breaker.failure({ allowed: true, probe: false, trial: false }, 'late');
    expect(breaker.snapshot().openUntil).toBe(110);
  });

  it('shares state across processes through the hook, with one probe claimed for all', async () => {
    let clock = 0;
    const store = new Map<string, CircuitSnapshot>();
    const claims = new Map<string, number>();
    const shared = {
      read: async (key: string) => store.get(key),
      write: async (key: string, snapshot: CircuitSnapshot) => {
        store.set(key, snapshot);
      },
      claimProbe: async (key: string, ttlMs: number) => {
        if ((claims.get(key) ?? -1) > clock) return false;
        claims.set(key, clock + ttlMs);
        return true;
      },
    };
    // Two "processes": two breakers of one key over one store.
    const options = { failureThreshold: 2, cooldownMs: 100, shared, now: () => clock, startHalfOpen: false };
    const a = new CircuitBreaker('openai:m', options);
    const b = new CircuitBreaker('openai:m', options);
    await failTimes(a, 2, 'x');
    await Promise.resolve();
    expect(store.get('openai:m')).toEqual({ failures: 2, openUntil: 100 });
    expect(await b.acquire()).toMatchObject({ allowed: false, state: 'open' });
    clock = 100;
    const probe = pass(await a.acquire());
    expect(probe.probe).toBe(true);
    expect(await b.acquire()).toMatchObject({ allowed: false, state: 'half_open' });
    a.success(probe);
    await Promise.resolve();
    expect(await b.acquire()).toEqual({ allowed: true, probe: false, trial: false });
  });

  it('goes on with its own state when the hook throws', async () => {
    const broken = {
      read: () => {
        throw new Error('redis down');
      },
      write: async () => {
        throw new Error('redis down');
      },
    };
    const breaker = new CircuitBreaker('k', { failureThreshold: 1, shared: broken });
    await failTimes(breaker, 1);
    expect(await breaker.acquire()).toMatchObject({ allowed: false });
  });
});
