/**
 * A JSONL file written by a process that crashed or ran out of disk ends in a partial line.
 * That one line is skipped with a warning; a bad line anywhere else is still an error naming
 * its line (the caller's parser reports it).
 */

/**
 * `text` without its last line when that line is torn: not ended by a newline and not valid
 * JSON. `warn` receives one line naming the file and the line. Any other text comes back as is.
 */
export function dropTornLastLine(text: string, source: string, warn: (line: string) => void): string {
  if (text === '' || text.endsWith('\n')) return text;
  const start = text.lastIndexOf('\n') + 1;
  const last = text.slice(start);
  if (last.trim() === '') return text;
  try {
    JSON.parse(last);
    return text;
  } catch {
    // Only a torn record after whole ones: not a single-document file (a JSON array or object
    // spans lines) nor a file whose previous line is broken too (the parser names that line).
    if (start === 0 || !previousLineParses(text, start)) return text;
    const line = text.slice(0, start).split('\n').length;
    warn(
      `warning: ${source} line ${line}: incomplete last line skipped (${last.length} bytes, a torn write)\n`,
    );
    return text.slice(0, start);
  }
}

function previousLineParses(text: string, start: number): boolean {
  const before = text.slice(0, start).trimEnd();
  const line = before.slice(before.lastIndexOf('\n') + 1);
  try {
    JSON.parse(line);
    return true;
  } catch {
    return false;
  }
}
