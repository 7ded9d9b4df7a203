/**
 * Arrays that `push` grew past a length while `run` ran (issue 47 point 2): a JavaScript array
 * grows by copying itself whole in one `push`, so an array pushed past 100k elements holds the
 * loop in one stretch. Counted by wrapping `Array.prototype.push` (no timing).
 */
export async function arraysPushedPast(limit: number, run: () => unknown): Promise<number> {
  const push = Array.prototype.push;
  const grown = new WeakSet<object>();
  let count = 0;
  Array.prototype.push = function (this: unknown[], ...values: unknown[]) {
    const length = push.apply(this, values);
    if (length > limit && length - values.length <= limit && !grown.has(this)) {
      grown.add(this);
      count++;
    }
    return length;
  };
  try {
    await run();
  } finally {
    Array.prototype.push = push;
  }
  return count;
}

/**
 * The largest size a `Map` reached through `set` while `run` ran: a `Map` grows by copying
 * every entry into a table twice the size, in one `set` (wraps `Map.prototype.set`, no timing).
 */
export async function largestMapDuring(run: () => unknown): Promise<number> {
  const set = Map.prototype.set;
  let largest = 0;
  Map.prototype.set = function (this: Map<unknown, unknown>, key: unknown, value: unknown) {
    const out = set.call(this, key, value);
    largest = Math.max(largest, this.size);
    return out;
  };
  try {
    await run();
  } finally {
    Map.prototype.set = set;
  }
  return largest;
}
