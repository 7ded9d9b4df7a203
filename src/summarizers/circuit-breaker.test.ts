import { afterEach, describe, expect, it } from 'vitest';
import {
  CircuitBreaker,
  type CircuitEvent,
  type CircuitSnapshot,
  circuitBreakerFor,
  onCircuitEvent,
  resetCircuitBreakers,
} from './circuit-breaker.js';

afterEach(() => resetCircuitBreakers());

const strip = (events: CircuitEvent[]) => events.map(({ at: _at, ...rest }) => rest);

describe('CircuitBreaker', () => {
  it('is one per key in the process', () => {
    const a = circuitBreakerFor('openai:gpt-4o-mini', { failureThreshold: 2 });
    expect(circuitBreakerFor('openai:gpt-4o-mini')).toBe(a);
    expect(circuitBreakerFor('openai:gpt-4o-mini', { failureThreshold: 9 }).failureThreshold).toBe(2);
    expect(circuitBreakerFor('anthropic:claude-haiku-4-5')).not.toBe(a);
  });

  it('opens at the threshold, refuses until the cool-down, lets exactly one probe through, closes on its success', async () => {
    let clock = 0;
    const events: CircuitEvent[] = [];
    const off = onCircuitEvent((event) => events.push(event));
    const breaker = new CircuitBreaker('k', { failureThreshold: 3, cooldownMs: 100, now: () => clock });
    for (let i = 0; i < 3; i++) {
      expect(await breaker.acquire()).toEqual({ allowed: true, probe: false });
      breaker.failure(false, `boom ${i}`);
    }
    expect(breaker.snapshot()).toEqual({ state: 'open', failures: 3, openUntil: 100 });
    expect(await breaker.acquire()).toMatchObject({ allowed: false, state: 'open', retryAt: 100 });
    clock = 100;
    const [first, second, third] = await Promise.all([
      breaker.acquire(),
      breaker.acquire(),
      breaker.acquire(),
    ]);
    expect(first).toEqual({ allowed: true, probe: true });
    expect(second).toMatchObject({ allowed: false, state: 'half_open' });
    expect(third).toMatchObject({ allowed: false, state: 'half_open' });
    breaker.success(true);
    expect(breaker.snapshot()).toEqual({ state: 'closed', failures: 0 });
    expect(await breaker.acquire()).toEqual({ allowed: true, probe: false });
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
    await breaker.acquire();
    breaker.failure(false, 'down');
    clock = 60;
    const probe = await breaker.acquire((event) => local.push(event));
    expect(probe).toEqual({ allowed: true, probe: true });
    breaker.release(true);
    expect(await breaker.acquire()).toEqual({ allowed: true, probe: true });
    breaker.failure(true, 'still down', (event) => local.push(event));
    expect(breaker.snapshot()).toEqual({ state: 'open', failures: 2, openUntil: 110 });
    expect(strip(local)).toEqual([
      { key: 'k', transition: 'probe', failures: 1 },
      { key: 'k', transition: 'open', failures: 2, retryAt: 110, reason: 'still down' },
    ]);
    // A late failure of a call let through before the circuit opened does not extend it.
    breaker.failure(false, 'late');
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
    const a = new CircuitBreaker('openai:m', {
      failureThreshold: 2,
      cooldownMs: 100,
      shared,
      now: () => clock,
    });
    const b = new CircuitBreaker('openai:m', {
      failureThreshold: 2,
      cooldownMs: 100,
      shared,
      now: () => clock,
    });
    await a.acquire();
    a.failure(false, 'x');
    await a.acquire();
    a.failure(false, 'x');
    await Promise.resolve();
    expect(store.get('openai:m')).toEqual({ failures: 2, openUntil: 100 });
    expect(await b.acquire()).toMatchObject({ allowed: false, state: 'open' });
    clock = 100;
    expect(await a.acquire()).toEqual({ allowed: true, probe: true });
    expect(await b.acquire()).toMatchObject({ allowed: false, state: 'half_open' });
    a.success(true);
    await Promise.resolve();
    expect(await b.acquire()).toEqual({ allowed: true, probe: false });
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
    expect(await breaker.acquire()).toEqual({ allowed: true, probe: false });
    breaker.failure(false, 'x');
    expect(await breaker.acquire()).toMatchObject({ allowed: false });
  });
});
