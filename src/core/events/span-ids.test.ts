/**
 * Issue 47 point 2: the span ids' per-process prefix was drawn with the global `crypto` (web
 * crypto), whose first use loads modules of its own (~2.5 ms of CPU, ~40 KB of heap that
 * stays); it is drawn from `node:crypto` now, which the core loads anyway. Isolated in
 * vitest.config.ts: the prefix is drawn once per process.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { newSpanId, primeSpanIds } from './events.js';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('span ids', () => {
  it('draw their prefix without the global web crypto', () => {
    const web = vi.spyOn(globalThis.crypto, 'getRandomValues');
    primeSpanIds();
    const first = newSpanId();
    const second = newSpanId();
    expect(web).not.toHaveBeenCalled();
    expect(first).toMatch(/^[0-9a-f]{16}$/);
    expect(second).toMatch(/^[0-9a-f]{16}$/);
    // One prefix, then a counter.
    expect(second.slice(0, 8)).toBe(first.slice(0, 8));
    expect(Number.parseInt(second.slice(8), 16)).toBe(Number.parseInt(first.slice(8), 16) + 1);
  });
});
