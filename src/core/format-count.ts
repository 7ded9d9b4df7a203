/**
 * `n.toLocaleString('en-US')` for a safe integer (`1,234,567`), written without `Intl`: the
 * first use of a locale's number format loads it from ICU, about 40 ms of CPU in one block
 * (the first tool result a compaction cleared held the loop 23-32 ms for it). Other numbers
 * (fractions, -0, beyond 2^53) go to `toLocaleString`, so the text is the same for every input.
 */
export function formatCount(n: number): string {
  if (!Number.isSafeInteger(n) || Object.is(n, -0)) return n.toLocaleString('en-US');
  const digits = String(Math.abs(n));
  let out = digits.slice(0, ((digits.length - 1) % 3) + 1);
  for (let at = out.length; at < digits.length; at += 3) out += `,${digits.slice(at, at + 3)}`;
  return n < 0 ? `-${out}` : out;
}
