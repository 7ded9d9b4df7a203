/**
 * The library's monotonic clock, in milliseconds from an arbitrary origin. On Node it reads
 * `process.hrtime.bigint()`: the global `performance` loads Node's `perf_hooks` modules on
 * first use (about 70 KB of heap that stays for the life of the process), which a process that
 * never asked for them should not keep after the library shut down. Elsewhere it reads
 * `performance.now()`. A property of an object, so that tests can drive it
 * (`vi.spyOn(clock, 'now')`).
 */
export const clock: { now: () => number } = {
  now:
    typeof process !== 'undefined' && typeof process.hrtime?.bigint === 'function'
      ? () => Number(process.hrtime.bigint()) / 1e6
      : () => performance.now(),
};
