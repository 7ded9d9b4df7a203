/** A pooled body buffer is used again only after its every hold was let go. */
import { describe, expect, it } from 'vitest';
import { BodyPool } from './body-pool.js';

const sameMemory = (a: Buffer, b: Buffer) => a.buffer === b.buffer && a.byteOffset === b.byteOffset;

describe('BodyPool', () => {
  it('lends a buffer again once its last hold is let go, not before', () => {
    const pool = new BodyPool();
    const first = pool.take(600_000);
    expect(first.bytes.length).toBe(600_000);
    first.hold(); // kept as a session's last body
    first.release(); // the request's hold
    const second = pool.take(600_000);
    expect(sameMemory(second.bytes, first.bytes)).toBe(false);
    first.release(); // the session's next body replaced it
    const third = pool.take(600_100);
    expect(third.bytes.length).toBe(600_100);
    expect(sameMemory(third.bytes, first.bytes)).toBe(true);
    // A much smaller body does not take a large buffer.
    third.release();
    expect(sameMemory(pool.take(1000).bytes, first.bytes)).toBe(false);
  });

  it('refuses a hold or a release after the last release, and keeps to its byte budget', () => {
    const pool = new BodyPool(100_000);
    const body = pool.take(10);
    body.release();
    expect(() => body.release()).toThrow(/released more often/);
    expect(() => body.hold()).toThrow(/after its last release/);
    const large = pool.take(200_000);
    large.release();
    expect(pool.freeBytes).toBeLessThanOrEqual(100_000);
  });
});
