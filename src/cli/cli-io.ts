import type { CompactManagerOptions } from '../core/manager/manager-options.js';
import { createRedactor, type Redactor } from '../core/redaction/redactor.js';

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

/** The redactor of `--report`: the manager's redaction setting (on by default). */
export function reportRedactor(redaction: CompactManagerOptions['redaction']): Redactor | undefined {
  if (redaction === false) return undefined;
  if (typeof redaction === 'function') return redaction;
  return createRedactor(redaction === true || redaction === undefined ? {} : redaction);
}
