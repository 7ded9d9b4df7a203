/**
 * Runs several examples one after the other in one process (`tsx test/support/run-examples.ts
 * NAME...`), each between `=== example NAME` and `=== end NAME (ok|failed)` lines: the examples
 * test starts one process for all of them instead of one each (a process start, the SDKs and
 * the tokenizer cost more than an example on a slow machine). An example that throws is
 * reported in its section and the next one still runs.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = join(import.meta.dirname, '..', '..');
let failed = 0;
for (const name of process.argv.slice(2)) {
  console.log(`=== example ${name}`);
  try {
    await import(pathToFileURL(join(root, 'examples', `${name}.ts`)).href);
    console.log(`=== end ${name} (ok)`);
  } catch (error) {
    failed++;
    console.log(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    console.log(`=== end ${name} (failed)`);
  }
}
process.exitCode = failed > 0 ? 1 : 0;
