/**
 * Waits for a condition, not for a number of milliseconds: tests must pass on a busy, slow
 * machine. The limit is only a generous upper bound that fails with what was awaited, well
 * before the test's own timeout (vitest.config.ts, ten minutes): CI runs beside two CPU
 * burners and may be many times slower than a quiet machine.
 */

/** Resolves once `condition()` is true (checked every few ms); rejects after `limitMs` naming `what`. */
export async function until(
  condition: () => boolean | Promise<boolean>,
  what: string,
  limitMs = 300_000,
): Promise<void> {
  const start = Date.now();
  while (!(await condition())) {
    if (Date.now() - start > limitMs) throw new Error(`still waiting after ${limitMs} ms for: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}
