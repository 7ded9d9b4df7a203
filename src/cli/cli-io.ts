import type { CompactManagerOptions } from '../core/manager/manager-options.js';
import { createRedactorAsync, type Redactor } from '../core/redaction/redactor.js';

/** Where the CLI reads and writes (injectable for tests). */
export interface CliIo {
  stdin: NodeJS.ReadableStream;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Record<string, string | undefined>;
  /**
   * The working directory, where a config file is looked for.
   * @default process.cwd()
   */
  cwd?: string;
  /** True when stderr is a terminal: `replay` draws a progress bar instead of plain lines. */
  isTTY?: boolean;
}

/**
 * The redactor of `--report` and `report`: the manager's redaction setting (on by default),
 * its rules compiled in slices (the built-in ones take 10-30 ms of CPU in one piece).
 */
export async function reportRedactor(
  redaction: CompactManagerOptions['redaction'],
): Promise<Redactor | undefined> {
  if (redaction === false) return undefined;
  if (typeof redaction === 'function') return redaction;
  return createRedactorAsync(redaction === true || redaction === undefined ? {} : redaction);
}
