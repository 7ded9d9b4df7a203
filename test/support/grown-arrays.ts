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
