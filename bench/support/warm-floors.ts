/**
 * What the warm-call benches (bench/speed.ts, bench/back-to-back-steps.ts) share: the scale
 * session, the message appended per call, and the floors a warm call is stated against (the
 * tokenizing of the appended message, a fresh array of the result's length).
 */
import { tokenCounterFor } from '../../src/core/counting/token-counter.js';
import { syntheticSession } from '../../src/testing/synthetic-session.js';

export const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** A coding session of about `count` messages (~340 tokens each at 3,300 result chars), ending on a complete round. */
export function sessionOf(count: number, seed = 3, resultChars = 3_300): unknown[] {
  const messages: unknown[] = [];
  for (let part = 0; messages.length < count; part++) {
    const chunk = syntheticSession({ turns: 200, seed: seed + part, toolDensity: 3, resultChars });
    // Only the first part keeps its system prompt and policy.
    messages.push(
      ...(part === 0 ? chunk : chunk.filter((m) => m.role !== 'system' && m.role !== 'developer')),
    );
  }
  let end = count;
  while (end > 1 && (messages[end] as { role?: string }).role !== 'user') end--;
  return messages.slice(0, end);
}

let appendedId = 0;
/** The message appended per warm call (each one new text). */
export const newMessage = () => ({
  role: 'user',
  content: `follow-up ${appendedId++}: please check src/auth/token.ts again and run the tests`,
});

/** Median ms to count one appended message's text over `rounds` messages (what the appended path must pay). */
export function tokenizeFloor(rounds: number): number {
  const counter = tokenCounterFor('gpt-4o');
  const times: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const text = newMessage().content;
    const t = performance.now();
    counter.countText(text);
    times.push(performance.now() - t);
  }
  return median(times);
}

/**
 * Median ms of a fresh array of `source`'s length (slice), the last few kept alive as results
 * are: what a call that returns a new array costs at least.
 */
export function copyFloor(source: readonly unknown[]): number {
  const kept: unknown[][] = [];
  const times: number[] = [];
  for (let i = 0; i < 60; i++) {
    const t = performance.now();
    kept.push(source.slice());
    times.push(performance.now() - t);
    if (kept.length > 8) kept.shift();
  }
  return median(times);
}
