/** Runs `run` with `target[name]` replaced by `wrap` of it (restored after, even on a throw). */
async function whileWrapped<T extends object, K extends keyof T>(
  target: T,
  name: K,
  wrap: (original: T[K]) => T[K],
  run: () => unknown,
): Promise<void> {
  const original = target[name];
  target[name] = wrap(original);
  try {
    await run();
  } finally {
    target[name] = original;
  }
}

/**
 * Arrays that `push` grew past a length while `run` ran (issue 47 point 2): a JavaScript array
 * grows by copying itself whole in one `push`, so an array pushed past 100k elements holds the
 * loop in one stretch. Counted by wrapping `Array.prototype.push` (no timing).
 */
export async function arraysPushedPast(limit: number, run: () => unknown): Promise<number> {
  const grown = new WeakSet<object>();
  let count = 0;
  await whileWrapped(
    Array.prototype,
    'push',
    (push) =>
      function (this: unknown[], ...values: unknown[]) {
        const length = push.apply(this, values);
        if (length > limit && length - values.length <= limit && !grown.has(this)) {
          grown.add(this);
          count++;
        }
        return length;
      },
    run,
  );
  return count;
}

/**
 * The largest size a `Map` reached through `set` while `run` ran: a `Map` grows by copying
 * every entry into a table twice the size, in one `set` (wraps `Map.prototype.set`, no timing).
 */
export async function largestMapDuring(run: () => unknown): Promise<number> {
  let largest = 0;
  await whileWrapped(
    Map.prototype,
    'set',
    (set) =>
      function (this: Map<unknown, unknown>, key: unknown, value: unknown) {
        const out = set.call(this, key, value);
        largest = Math.max(largest, this.size);
        return out;
      },
    run,
  );
  return largest;
}
