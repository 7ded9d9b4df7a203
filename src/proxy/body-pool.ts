/**
 * Buffers for request bodies, used again. A 128k-token body is ~600 KB: a fresh Buffer of that
 * size per request is fresh memory the kernel maps and zeroes page by page as the body is copied
 * in, and external memory that makes V8 collect early; a Buffer used before costs neither. A
 * buffer is lent with one hold (the request's); whoever else keeps it (the session's last body)
 * takes a hold of its own; it goes back to the pool when the last hold is let go, never before.
 * A hold that is never let go (a request whose upstream write did not complete) only costs the
 * buffer: the garbage collector takes it as it would any other.
 */

/** Capacities are rounded up to this, so that a body a message longer fits the last one's buffer. */
const GRAIN = 64 * 1024;

/** One body's buffer, lent out by a {@link BodyPool}. */
export class PooledBody {
  readonly #pool: BodyPool;
  readonly #backing: Buffer;
  #holds = 1;
  /** The body's bytes (the first `size` bytes of the pooled buffer). */
  readonly bytes: Buffer;

  constructor(pool: BodyPool, backing: Buffer, size: number) {
    this.#pool = pool;
    this.#backing = backing;
    this.bytes = backing.subarray(0, size);
  }

  /** Takes a hold: the buffer stays lent until this one is let go too. */
  hold(): void {
    if (this.#holds === 0) throw new Error('a pooled body was held after its last release');
    this.#holds++;
  }

  /** Lets go of a hold; the last one returns the buffer to its pool. */
  release(): void {
    if (this.#holds === 0) throw new Error('a pooled body was released more often than held');
    this.#holds--;
    if (this.#holds === 0) this.#pool.give(this.#backing);
  }
}

/** Free body buffers, up to a byte budget. */
export class BodyPool {
  readonly #maxBytes: number;
  readonly #free: Buffer[] = [];
  #bytes = 0;

  constructor(maxBytes = 16 * 1024 * 1024) {
    this.#maxBytes = maxBytes;
  }

  /** A buffer of `size` bytes (its content is whatever it held before), lent with one hold. */
  take(size: number): PooledBody {
    // The smallest free buffer that fits, not over twice the size (a small body leaves a large buffer).
    let best = -1;
    for (let i = 0; i < this.#free.length; i++) {
      const length = this.#free[i]!.length;
      if (length >= size && length <= 2 * size + GRAIN && (best < 0 || length < this.#free[best]!.length))
        best = i;
    }
    if (best < 0)
      return new PooledBody(this, Buffer.allocUnsafeSlow(Math.ceil((size + 1) / GRAIN) * GRAIN), size);
    const [backing] = this.#free.splice(best, 1) as [Buffer];
    this.#bytes -= backing.length;
    return new PooledBody(this, backing, size);
  }

  /** Takes back a buffer no one holds (dropped when over the budget). */
  give(backing: Buffer): void {
    if (this.#bytes + backing.length > this.#maxBytes) return;
    this.#free.push(backing);
    this.#bytes += backing.length;
  }

  /** Free bytes held. */
  get freeBytes(): number {
    return this.#bytes;
  }
}
