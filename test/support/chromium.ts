/** Finds Chromium for the browser tests (Debian's `chromium` package). */
import { existsSync } from 'node:fs';

/** Where Debian installs Chromium; `CHROMIUM_PATH` overrides it. */
export function chromiumPath(env: { CHROMIUM_PATH?: string } = process.env): string {
  return env.CHROMIUM_PATH ?? '/usr/bin/chromium';
}

/**
 * Whether the browser suites can run: `true` when Chromium is installed. Without it they are
 * skipped with one notice line, unless `COMPACT_REQUIRE_CHROMIUM=1` (set by CI) makes that an error.
 */
export function chromiumAvailable(
  suite: string,
  env: { CHROMIUM_PATH?: string; COMPACT_REQUIRE_CHROMIUM?: string } = process.env,
  warn: (line: string) => void = console.warn,
): boolean {
  const path = chromiumPath(env);
  if (existsSync(path)) return true;
  if (env.COMPACT_REQUIRE_CHROMIUM === '1') {
    throw new Error(
      `${suite}: COMPACT_REQUIRE_CHROMIUM=1 but ${path} is missing (apt-get install -y chromium)`,
    );
  }
  warn(`skipped ${suite}: ${path} is missing (optional; apt-get install -y chromium to run it)`);
  return false;
}
