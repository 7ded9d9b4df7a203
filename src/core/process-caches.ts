/**
 * Tables the core builds on first use and shares across every manager of the process (a
 * decoded model, a word-rank map, memoized lookups). Each module that keeps one registers how
 * to drop it; when the last manager shuts down (`holdEncodings`' last hold ends, as the
 * tokenizer's encodings are released) every table is dropped, so a process that shut its
 * managers down keeps none of them. A later use builds the table again; no answer depends on
 * whether a table was kept.
 *
 * Regular expressions held by modules are kept, but not their compiled code: V8 compiles an
 * expression used more than once to machine code (up to 95 KB for one word list) that lives as
 * long as the expression; {@link releaseRegExpCode} has it dropped with the tables.
 */

const releases = new Set<() => void>();

/** Registers how to drop one module-level table (once, when its module loads). */
export function onProcessCachesRelease(release: () => void): void {
  releases.add(release);
}

/** Matches the empty string: see {@link releaseProcessCaches}. */
const EMPTY = /^/;

/**
 * Drops every registered table (the last manager's `shutdown()`), then the text of the last
 * regular-expression match: V8 keeps the subject of the process's last successful match (for
 * `RegExp.input`, `RegExp.lastMatch`) however large, here a message or a summary of the last
 * session served. A match on the empty string puts an empty one there instead.
 */
export function releaseProcessCaches(): void {
  for (const release of releases) release();
  EMPTY.exec('');
}

/**
 * Has the compiled code of module-level regular expressions dropped with the tables (once, when
 * their module loads). Each is reset in place (`compile` with its own source and flags: same
 * object, same matches, `lastIndex` 0) and V8 compiles it again on next use. One in the middle
 * of a scan (a sticky or global expression whose `lastIndex` is not 0) is left as it is.
 */
export function releaseRegExpCode(...expressions: RegExp[]): void {
  releases.add(() => {
    for (const expression of expressions)
      if (expression.lastIndex === 0) expression.compile(expression.source, expression.flags);
  });
}
