/**
 * Verifiable summaries. A summary the manager writes carries a mark: the first 128 bits of an
 * HMAC-SHA256 over its version and body, under a key bound to the session (itself an HMAC of
 * the session's state key under the installation's secret), written as 39 decimal digits. The
 * GPT tokenizers read digits three at a time whatever they are, so a mark is always the same
 * number of tokens: a summary's size does not depend on the key or the session (marks in
 * base64url, written before, took one to three tokens more or less by key, and still verify).
 * A summary message handed back in a persisted view is trusted, and resumed, only when its mark
 * verifies: a tampered body, another session's summary or another installation's is ordinary
 * content.
 *
 * The secret comes from `CompactManagerOptions.summaryKeys`, else the `COMPACT_SUMMARY_KEY`
 * environment variable (comma-separated: the first signs, every one verifies, so an old key
 * stays accepted after a rotation), else a key file generated once, atomically, mode 0600 in a
 * 0700 folder (summary-key-file.ts; a key under 32 bytes, or a file or folder another user
 * owns or others can write, is refused with an `invalid_config` error naming the source) (`COMPACT_SUMMARY_KEY_FILE`, default `~/.agent-compaction/summary-key`). When no
 * file can be written, a key for this process only is used (summaries then resume only
 * within the process) and {@link SummaryMarks.problem} says why.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { invalidConfig, isCompactError } from '../errors.js';
import {
  findSummarySpan,
  formatSummaryText,
  readSummaryText,
  summaryVersionOf,
} from '../messages/message.js';
import { keyFromFile, keyProblem, weakKeyError } from './summary-key-file.js';
import { defuseSummaryMarkup } from './summary-markup.js';

/** The environment variable that holds the summary secret(s), comma-separated. */
export const SUMMARY_KEY_ENV = 'COMPACT_SUMMARY_KEY';
/** The environment variable naming the key file used when no secret is given. */
export const SUMMARY_KEY_FILE_ENV = 'COMPACT_SUMMARY_KEY_FILE';

const SESSION_DOMAIN = 'agent-compaction/summary-session\u0000';
/** Domain of record MACs (prepared summaries): never the same input as a summary's mark. */
const RECORD_DOMAIN = 'agent-compaction/record\u0000';
/** Digits of a mark: 128 bits in decimal, zero-padded (2^128 has 39 digits). */
const MARK_DIGITS = 39;
/** Characters of a mark written before marks were digits: 132 bits in base64url. */
const LEGACY_MARK_CHARS = 22;
/** Session keys kept (derived again when dropped). */
const SESSION_KEY_CACHE = 1024;

/** The default key file. */
export function defaultSummaryKeyFile(): string {
  return process.env[SUMMARY_KEY_FILE_ENV] || join(homedir(), '.agent-compaction', 'summary-key');
}

/** The secrets given (options, then environment), checked. */
function givenSecrets(keys: string | readonly string[] | undefined): string[] | undefined {
  const list =
    keys === undefined
      ? process.env[SUMMARY_KEY_ENV]
          ?.split(',')
          .map((key) => key.trim())
          .filter((key) => key.length > 0)
      : typeof keys === 'string'
        ? [keys]
        : [...keys];
  if (list === undefined || list.length === 0) {
    if (keys !== undefined) throw invalidConfig('summaryKeys', 'must name at least one key');
    return undefined;
  }
  list.forEach((key, k) => {
    const source = keys === undefined ? SUMMARY_KEY_ENV : `summaryKeys[${k}]`;
    if (typeof key !== 'string') throw invalidConfig(source, 'must be a string');
    const problem = keyProblem(key);
    if (problem) throw weakKeyError(source, problem);
  });
  return list;
}

/** A summary whose mark verified. */
export interface VerifiedSummary {
  version: number;
  body: string;
  /**
   * Set when the message holds more than the summary: the signed summary text alone (the
   * rest of the message is content).
   */
  signed?: string;
}

/** Signs and verifies summary messages for one manager. */
export class SummaryMarks {
  readonly #given: string[] | undefined;
  #secrets: Buffer[] | undefined;
  readonly #sessionKeys = new Map<string, Buffer[]>();
  readonly #verified = new WeakMap<object, { sessionKey: string; result: VerifiedSummary | undefined }>();
  /** Why summaries cannot outlive this process, when they cannot (no key file could be written). */
  problem: string | undefined;

  /** @param keys The `summaryKeys` option: the first signs, every one verifies. */
  constructor(keys?: string | readonly string[]) {
    this.#given = givenSecrets(keys);
  }

  /** The secrets, resolved on first use (the key file is read or written then). */
  #resolve(): Buffer[] {
    if (this.#secrets) return this.#secrets;
    let secrets = this.#given;
    if (!secrets) {
      const file = defaultSummaryKeyFile();
      const source = process.env[SUMMARY_KEY_FILE_ENV] ? SUMMARY_KEY_FILE_ENV : 'the default key file';
      try {
        secrets = [keyFromFile(file, source)];
      } catch (error) {
        // A weak or exposed key file is refused, never replaced by a key of this process.
        if (isCompactError(error, 'invalid_config')) throw error;
        this.problem = `the summary key file ${file} could not be read or written (${(error as Error).message}): summaries are verifiable in this process only; set ${SUMMARY_KEY_ENV}`;
        secrets = [randomBytes(32).toString('base64url')];
      }
    }
    this.#secrets = secrets.map((secret) => Buffer.from(secret, 'utf8'));
    return this.#secrets;
  }

  /**
   * Resolves the secrets ahead of a first call (`CompactManager.ready()`), when that creates no
   * file: keys given, or a key file that exists already (a known session's summary is signed
   * with it on the first call). Node's HMAC is loaded with them. A key file that is missing or
   * refused is left for the first use (which creates it, or raises the error there, as before).
   */
  prepare(): void {
    if (this.#secrets) return;
    const file = defaultSummaryKeyFile();
    if (!this.#given && !existsSync(file)) return;
    try {
      const [secret] = this.#resolve();
      createHmac('sha256', secret!).update(SESSION_DOMAIN).digest();
    } catch {
      // Raised again on first use.
    }
  }

  /** Forgets the derived keys of a session that ended (they are derived again when needed). */
  forget(sessionKey: string): void {
    this.#sessionKeys.delete(sessionKey);
  }

  /** The session's keys, one per secret. */
  #keysOf(sessionKey: string): Buffer[] {
    let keys = this.#sessionKeys.get(sessionKey);
    if (!keys) {
      keys = this.#resolve().map((secret) =>
        createHmac('sha256', secret).update(SESSION_DOMAIN).update(sessionKey, 'utf8').digest(),
      );
      if (this.#sessionKeys.size >= SESSION_KEY_CACHE) this.#sessionKeys.clear();
      this.#sessionKeys.set(sessionKey, keys);
    }
    return keys;
  }

  /** The mark of a (defused, trimmed) body at `version` under one session key. */
  static #mac(key: Buffer, version: number, body: string): string {
    const digest = SummaryMarks.#digest(key, version, body);
    return BigInt(`0x${digest.subarray(0, 16).toString('hex')}`)
      .toString()
      .padStart(MARK_DIGITS, '0');
  }

  /** The mark written before marks were digits (still verified: summaries in stored views). */
  static #legacyMac(key: Buffer, version: number, body: string): string {
    return SummaryMarks.#digest(key, version, body).toString('base64url').slice(0, LEGACY_MARK_CHARS);
  }

  static #digest(key: Buffer, version: number, body: string): Buffer {
    return createHmac('sha256', key).update(`v${version}\u0000`).update(body, 'utf8').digest();
  }

  /** The summary message text of `body` at `version` for the session, marked. */
  format(sessionKey: string, version: number, body: string): string {
    const defused = defuseSummaryMarkup(body.trim()).trim();
    return formatSummaryText(
      version,
      body,
      SummaryMarks.#mac(this.#keysOf(sessionKey)[0]!, version, defused),
    );
  }

  /**
   * The version and body of a summary message text when its mark verifies for the session
   * (under any of the secrets) and the text is exactly the signed summary (nothing before or
   * after it, see {@link isExactSummaryText}), else `undefined`.
   */
  verify(sessionKey: string, text: string): { version: number; body: string } | undefined {
    const version = summaryVersionOf(text);
    if (version === undefined) return undefined;
    const { body, mark } = readSummaryText(text);
    if (mark === undefined || text !== formatSummaryText(version, body, mark)) return undefined;
    const given = Buffer.from(mark);
    const mac = mark.length === LEGACY_MARK_CHARS ? SummaryMarks.#legacyMac : SummaryMarks.#mac;
    for (const key of this.#keysOf(sessionKey)) {
      const expected = Buffer.from(mac(key, version, body));
      if (expected.length === given.length && timingSafeEqual(expected, given)) return { version, body };
    }
    return undefined;
  }

  /**
   * The signed summary a message's text carries, when its mark verifies for the session: the
   * whole text, or (a framework merged it with other text) the first summary span inside it,
   * then given as `signed`; the text around it is the caller's content, never trusted.
   */
  verifyWithin(sessionKey: string, text: string): VerifiedSummary | undefined {
    const span = findSummarySpan(text);
    if (span === undefined) return undefined;
    const whole = span.start === 0 && span.end === text.length;
    const signed = whole ? text : text.slice(span.start, span.end);
    const verified = this.verify(sessionKey, signed);
    return verified && !whole ? { ...verified, signed } : verified;
  }

  /** {@link verifyWithin}, remembered per `holder` object (a parsed message) and session. */
  verifyOnce(sessionKey: string, holder: object, text: string): VerifiedSummary | undefined {
    const known = this.#verified.get(holder);
    if (known?.sessionKey === sessionKey) return known.result;
    const result = this.verifyWithin(sessionKey, text);
    this.#verified.set(holder, { sessionKey, result });
    return result;
  }

  /**
   * A MAC over `parts` (each length-prefixed) under the session's signing key, for a record
   * written to the store that must be trusted later (a prepared summary, see
   * background/shared-preparation.ts). Never equal to a summary's mark for the same input.
   */
  recordMac(sessionKey: string, parts: readonly string[]): string {
    return SummaryMarks.#recordMac(this.#keysOf(sessionKey)[0]!, parts);
  }

  /** True when `mac` is {@link recordMac} of `parts` for the session under any of the secrets. */
  verifyRecordMac(sessionKey: string, parts: readonly string[], mac: string): boolean {
    const given = Buffer.from(mac);
    return this.#keysOf(sessionKey).some((key) => {
      const expected = Buffer.from(SummaryMarks.#recordMac(key, parts));
      return expected.length === given.length && timingSafeEqual(expected, given);
    });
  }

  static #recordMac(key: Buffer, parts: readonly string[]): string {
    const hmac = createHmac('sha256', key).update(RECORD_DOMAIN);
    for (const part of parts) hmac.update(`${Buffer.byteLength(part, 'utf8')}:`).update(part, 'utf8');
    return hmac.digest('base64url');
  }
}
