/**
 * Transcripts archived as parts: a compaction whose history extends the one archived before it
 * (the usual case: the conversation grew by appending) writes only the new messages, under a
 * new name, with a first line naming the transcript it continues. A replay of a long session
 * then archives each message about once instead of once per compaction, and no file is ever
 * rewritten or moved aside.
 */
import { createHash, type Hash } from 'node:crypto';
import { CompactError } from '../core/errors.js';
import { ARCHIVE_NAMES, archiveWriteId, parseArchiveName } from './session-path.js';

/** Sessions whose last transcript an adapter remembers (the oldest is forgotten first). */
const MAX_SESSIONS = 1_000;

/** The first line of a transcript part. */
export interface TranscriptPartHeader {
  /** The file name (inside the same session folder) of the transcript this one continues. */
  continues: string;
  /** How many messages of that transcript come before this part's. */
  from: number;
}

/** One transcript write an adapter is about to make. */
export interface PlannedTranscript {
  /** The new file (or key) name inside the session's folder. */
  name: string;
  /** The text to write. */
  body: string;
  /** Records the write as done (call once it landed), so the next one can continue it. */
  commit(): void;
}

interface LastTranscript {
  name: string;
  count: number;
  digest: string;
}

function lineHash(hash: Hash, line: string): void {
  hash.update(line, 'utf8');
  hash.update('\n');
}

/**
 * Plans transcript writes for one adapter: per session it remembers the last transcript written
 * (its name, message count and a hash of its lines), and a history that starts with exactly
 * those messages becomes a part holding only the rest. Anything else (an edited or rewound
 * history, a session this process has not written yet) is written whole.
 */
export function transcriptParts() {
  const last = new Map<string, LastTranscript>();
  return {
    plan(sessionKey: string, transcript: readonly unknown[], step: number): PlannedTranscript {
      const lines = transcript.map((message) => JSON.stringify(message ?? null));
      const previous = last.get(sessionKey);
      const hash = createHash('sha256');
      let from = -1;
      let hashed = 0;
      if (previous && previous.count <= lines.length) {
        for (; hashed < previous.count; hashed++) lineHash(hash, lines[hashed]!);
        if (hash.copy().digest('hex') === previous.digest) from = previous.count;
      }
      // The prefix hashed so far is the start of the whole transcript's hash either way.
      for (; hashed < lines.length; hashed++) lineHash(hash, lines[hashed]!);
      const id = archiveWriteId();
      const rest = lines.slice(Math.max(from, 0));
      const text = rest.length > 0 ? `${rest.join('\n')}\n` : '';
      const name = from < 0 ? ARCHIVE_NAMES.transcript(step, id) : ARCHIVE_NAMES.transcriptPart(step, id);
      const header: TranscriptPartHeader | undefined =
        from < 0 ? undefined : { continues: previous!.name, from };
      const digest = hash.digest('hex');
      return {
        name,
        body: header ? `${JSON.stringify(header)}\n${text}` : text,
        commit: () => {
          last.delete(sessionKey);
          last.set(sessionKey, { name, count: lines.length, digest });
          if (last.size > MAX_SESSIONS) last.delete(last.keys().next().value!);
        },
      };
    },
  };
}

function splitLines(text: string): string[] {
  return text.split('\n').filter((line) => line.trim() !== '');
}

/**
 * Reads an archived transcript back whole, following its parts to the full transcript they
 * continue. `read` gives the text of a file of the same session folder (`undefined` when it is
 * missing). Each line is one message (JSON); a missing or broken link is an `invalid_messages`
 * error naming the file.
 */
export async function readTranscriptLines(
  name: string,
  read: (name: string) => Promise<string | undefined>,
): Promise<string[]> {
  const parts: { from: number; lines: string[] }[] = [];
  const seen = new Set<string>();
  let current = name;
  for (;;) {
    seen.add(current);
    const text = await read(current);
    if (text === undefined) throw new CompactError('invalid_messages', `archive file ${current} is missing`);
    if (!parseArchiveName(current)?.part) {
      const lines = splitLines(text);
      for (const part of parts.reverse()) {
        if (part.from > lines.length)
          throw new CompactError(
            'invalid_messages',
            `a transcript part continues past the end of ${current}`,
          );
        lines.length = part.from;
        for (const line of part.lines) lines.push(line);
      }
      return lines;
    }
    const [first = '', ...rest] = splitLines(text);
    const header = parseHeader(first);
    if (!header || seen.has(header.continues))
      throw new CompactError(
        'invalid_messages',
        `${current}: the first line names no transcript it continues`,
      );
    parts.push({ from: header.from, lines: rest });
    current = header.continues;
  }
}

function parseHeader(line: string): TranscriptPartHeader | undefined {
  try {
    const value = JSON.parse(line) as Partial<TranscriptPartHeader>;
    if (typeof value?.continues !== 'string' || parseArchiveName(value.continues)?.kind !== 'transcript')
      return undefined;
    if (!Number.isInteger(value.from) || (value.from as number) < 0) return undefined;
    return { continues: value.continues, from: value.from as number };
  } catch {
    return undefined;
  }
}
