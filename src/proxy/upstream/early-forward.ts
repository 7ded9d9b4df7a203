/**
 * A request body forwarded to the upstream while it arrives. Most requests leave the proxy as
 * the client sent them (below the trigger the manager changes nothing): holding a 600 KB body
 * until its last byte and only then sending it makes the upstream wait for the whole transfer
 * twice. So the call to the upstream is opened with the client's declared length as soon as
 * the body's first bytes are in, and each chunk is written to it as it arrives, all but the
 * body's last bytes: those are held until the proxy has read, parsed and compacted the whole
 * request. When the body to forward is the client's own, the held bytes go and the upstream
 * has the rest already; when it is not (the manager compacted, the body is not JSON, the
 * client went away), the upstream's connection is closed with the body incomplete, which no
 * HTTP server takes as a request, and the compacted body is sent on another connection.
 *
 * A wrong guess costs a connection, so a conversation whose last request was rewritten (it
 * has been compacted: every later request is rewritten too) is not forwarded early: found by
 * its session header, or by the first bytes of the body, which a stateless client repeats
 * from one call to the next. Bodies below {@link EARLY_MIN_BYTES} are not forwarded early (the
 * whole body comes in one or two chunks: nothing to overlap).
 */
import { clock } from '../../core/clock.js';
import type { OpenedCall, UpstreamAnswer, UpstreamCall, UpstreamClient } from './upstream-client.js';

/** The smallest declared length forwarded early. */
export const EARLY_MIN_BYTES = 64 * 1024;
/**
 * The least written at once: each write wakes the upstream, which on a busy machine can take
 * the core from the proxy while it still reads; a few large writes overlap as well.
 */
const LEAST_WRITTEN = 192 * 1024;
/** The body's last bytes, held until the proxy has decided. */
const HELD_BYTES = 256;
/** The bytes a body's start is compared over to find its conversation. */
export const PREFIX_BYTES = 32 * 1024;
/** Sessions remembered as rewritten (oldest forgotten first). */
const REMEMBERED_SESSIONS = 1024;

/** One body forwarded as it arrives (see the file's comment). */
export class EarlyForward {
  readonly #call: OpenedCall;
  readonly #length: number;
  #written = 0;
  #failed = false;
  #settled = false;

  constructor(client: UpstreamClient, call: Omit<UpstreamCall, 'body'>, length: number) {
    this.#length = length;
    this.#call = client.open(call, length);
    this.#call.answer.catch(() => {
      this.#failed = true;
    });
  }

  /** Writes what is new of the first `size` bytes of `bytes` (the body so far), all but its held end. */
  advance(bytes: Buffer, size: number): void {
    if (this.#failed || this.#settled) return;
    const to = Math.min(size, this.#length - HELD_BYTES);
    if (to - this.#written < Math.min(LEAST_WRITTEN, this.#length - HELD_BYTES - this.#written)) return;
    this.#call.request.write(bytes.subarray(this.#written, to));
    this.#written = to;
  }

  /**
   * Sends the rest of `bytes` (the whole body, the client's own) and resolves with the
   * answer; `undefined` when this call failed before its answer on a connection the upstream
   * had closed before the body's last byte went, or before the body was complete (the caller
   * sends the body anew).
   */
  async release(bytes: Buffer): Promise<UpstreamAnswer | undefined> {
    if (this.#failed || this.#settled || bytes.length !== this.#length) {
      this.cancel();
      return undefined;
    }
    this.#settled = true;
    const at = clock.now();
    const cpu = process.cpuUsage();
    this.#call.request.end(bytes.subarray(this.#written));
    try {
      const answer = await this.#call.answer;
      return { ...answer, startedAt: at, writtenAt: at, writtenCpu: cpu };
    } catch (error) {
      // Sent again only when the upstream never had the whole body (see upstream-client.ts).
      if ((error as { unsent?: boolean }).unsent === true) return undefined;
      throw error;
    }
  }

  /** Closes the call with its body incomplete (a no-op once released). */
  cancel(): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#call.request.destroy();
  }
}

/** Sessions whose last request was rewritten by the proxy (see the file's comment). */
export class RewrittenSessions {
  readonly #sessions = new Set<string>();

  /** Notes whether `session`'s request was forwarded rewritten. */
  note(session: string, rewritten: boolean): void {
    this.#sessions.delete(session);
    if (!rewritten) return;
    this.#sessions.add(session);
    if (this.#sessions.size > REMEMBERED_SESSIONS)
      this.#sessions.delete(this.#sessions.values().next().value as string);
  }

  has(session: string): boolean {
    return this.#sessions.has(session);
  }

  /** The sessions noted, oldest first. */
  values(): IterableIterator<string> {
    return this.#sessions.values();
  }
}
