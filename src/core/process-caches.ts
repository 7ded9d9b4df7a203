/**
 * Tables the core builds on first use and shares across every manager of the process (a
 * decoded model, a word-rank map, memoized lookups). Each module that keeps one registers how
 * to drop it; when the last manager shuts down (`holdEncodings`' last hold ends, as the
 * tokenizer's encodings are released) every table is dropped, so a process that shut its
 * managers down keeps none of them. A later use builds the table again; no answer depends on
 * whether a table was kept.
 */

const releases = new Set<() => void>();

/** Registers how to drop one module-level table (once, when its module loads). */
export function onProcessCachesRelease(release: () => void): void {
  releases.add(release);
}

/** Drops every registered table (the last manager's `shutdown()`). */
export function releaseProcessCaches(): void {
  for (const release of releases) release();
}
