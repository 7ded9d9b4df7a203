import { createHash } from 'node:crypto';

/** Names the summary a new one extends (`prev=none` for the first): a stale base shows. */
export function previousMark(previous: string | undefined): string {
  return `prev=${previous ? createHash('sha256').update(previous.trim()).digest('hex').slice(0, 8) : 'none'}`;
}
