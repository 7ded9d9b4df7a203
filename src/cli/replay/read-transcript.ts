import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { CompactError } from '../../core/errors.js';
import { newestArchiveName } from '../../storage/session-path.js';
import { readTranscriptLines } from '../../storage/transcript-parts.js';
import { type CliInput, readInput } from '../read-input.js';

/**
 * The newest archived transcript of a session folder, if any: the highest step, its latest
 * write (`transcript-pre-compact-NNN-{id}.jsonl` or a `.part.jsonl`; in the layout before write
 * ids, `transcript-pre-compact-NNN.jsonl`).
 */
export async function latestTranscript(dir: string): Promise<string | undefined> {
  const name = newestArchiveName(await readdir(dir), 'transcript');
  return name && join(dir, name);
}

/**
 * The messages of the newest archived transcript of a session folder, whole (a part is read
 * with the transcripts it continues); `undefined` when the folder holds none.
 */
export async function readLatestTranscript(dir: string): Promise<unknown[] | undefined> {
  const name = newestArchiveName(await readdir(dir), 'transcript');
  if (name === undefined) return undefined;
  const lines = await readTranscriptLines(name, (file) =>
    readFile(join(dir, file), 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error?.code === 'ENOENT') return undefined;
      throw error;
    }),
  );
  return lines.map((line, index) => {
    try {
      return JSON.parse(line) as unknown;
    } catch (error) {
      throw new CompactError(
        'invalid_messages',
        `${join(dir, name)}: message ${index} is not valid JSON (${(error as Error).message})`,
      );
    }
  });
}

/** True when `path` names a folder. */
export async function isDirectory(path: string): Promise<boolean> {
  return stat(path).then(
    (info) => info.isDirectory(),
    () => false,
  );
}

/**
 * Reads a recorded transcript: a JSON array of messages, JSONL (one a line), an object
 * `{messages, tools?, system?}`, or an archived session folder (its newest
 * `transcript-pre-compact-NNN-{id}.jsonl`, parts read whole). Empty input and messages that are not objects are
 * `invalid_messages` errors with one line of explanation.
 */
export async function readTranscript(
  path: string,
  stdin: NodeJS.ReadableStream,
  warn?: (line: string) => void,
): Promise<CliInput> {
  let file = path;
  let input: CliInput;
  if (path !== '-' && (await isDirectory(path))) {
    const messages = await readLatestTranscript(path);
    if (messages === undefined)
      throw new CompactError(
        'invalid_messages',
        `${path} is a folder without transcript-pre-compact-NNN.jsonl (not an archived session)`,
      );
    file = (await latestTranscript(path))!;
    input = { messages };
  } else input = await readInput(file, stdin, warn);
  if (input.messages.length === 0) throw new CompactError('invalid_messages', `${file} holds no messages`);
  const bad = input.messages.findIndex(
    (message) => message === null || typeof message !== 'object' || Array.isArray(message),
  );
  if (bad >= 0)
    throw new CompactError('invalid_messages', `${file}: messages[${bad}] is not a message object`);
  return input;
}
