import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { CompactError } from '../../core/errors.js';
import { type CliInput, readInput } from '../read-input.js';

const TRANSCRIPT = /^transcript-pre-compact-(\d+)\.jsonl$/;

/** The newest archived transcript of a session folder (`transcript-pre-compact-NNN.jsonl`), if any. */
export async function latestTranscript(dir: string): Promise<string | undefined> {
  const names = await readdir(dir);
  let best: { step: number; name: string } | undefined;
  for (const name of names) {
    const match = TRANSCRIPT.exec(name);
    if (match && (!best || Number(match[1]) > best.step)) best = { step: Number(match[1]), name };
  }
  return best && join(dir, best.name);
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
 * `transcript-pre-compact-NNN.jsonl`). Empty input and messages that are not objects are
 * `invalid_messages` errors with one line of explanation.
 */
export async function readTranscript(
  path: string,
  stdin: NodeJS.ReadableStream,
  warn?: (line: string) => void,
): Promise<CliInput> {
  let file = path;
  if (path !== '-' && (await isDirectory(path))) {
    const transcript = await latestTranscript(path);
    if (transcript === undefined)
      throw new CompactError(
        'invalid_messages',
        `${path} is a folder without transcript-pre-compact-NNN.jsonl (not an archived session)`,
      );
    file = transcript;
  }
  const input = await readInput(file, stdin, warn);
  if (input.messages.length === 0) throw new CompactError('invalid_messages', `${file} holds no messages`);
  const bad = input.messages.findIndex(
    (message) => message === null || typeof message !== 'object' || Array.isArray(message),
  );
  if (bad >= 0)
    throw new CompactError('invalid_messages', `${file}: messages[${bad}] is not a message object`);
  return input;
}
