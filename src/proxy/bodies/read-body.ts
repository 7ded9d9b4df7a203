/**
 * A request body read as one Buffer, chunk by chunk off the Node request when there is one
 * (no string built, no web stream in between), stopping at the size limit rather than after
 * the whole body. A body of a declared length is copied into its Buffer as each chunk
 * arrives, so that once its last byte is in only that chunk is left to copy (a 128k-token
 * body is ~600 KB: copied whole after its end, that was about 1 ms on the request's path).
 */

import type { IncomingMessage } from 'node:http';
import type { Context } from 'hono';
import { clock } from '../../core/clock.js';
import { nextTurn } from '../../core/time-slice.js';

/** The largest declared length read straight into a Buffer of that size. */
const PREALLOCATED_BYTES = 8 * 1024 * 1024;

/** Bytes of a larger body's chunks joined between two turns of the loop. */
const JOIN_STEP_BYTES = 1024 * 1024;

/**
 * `Buffer.concat(chunks, size)`, a turn of the loop after each {@link JOIN_STEP_BYTES}: an
 * 11 MB body (300k tiny messages) joined at once held the loop ~10 ms (the copy and the new
 * memory's first touch).
 */
async function joinInTurns(chunks: readonly Buffer[], size: number): Promise<Buffer> {
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  let since = 0;
  for (const chunk of chunks) {
    chunk.copy(out, at);
    at += chunk.length;
    since += chunk.length;
    if (since >= JOIN_STEP_BYTES) {
      since = 0;
      await nextTurn();
    }
  }
  return out;
}

/** A body read, and when its last byte had been received (`clock.now()`, `process.cpuUsage()`). */
export interface ReadBody {
  bytes: Buffer;
  endedAt: number;
  endedCpu: NodeJS.CpuUsage;
}

/**
 * Called after each chunk of a body of a declared length with the body's Buffer (that length)
 * and how many of its bytes are in.
 */
export type BodyProgress = (bytes: Buffer, size: number) => void;

/** The body, or `undefined` when it is over `maxBytes`. */
export async function readBody(
  c: Context,
  maxBytes: number,
  progress?: BodyProgress,
): Promise<ReadBody | undefined> {
  const header = c.req.header('content-length');
  const declared = header === undefined || !/^\d+$/.test(header) ? undefined : Number(header);
  if (declared !== undefined && declared > maxBytes) return undefined;
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  if (incoming === undefined || typeof incoming.on !== 'function' || incoming.readableDidRead) {
    const whole = Buffer.from(await c.req.arrayBuffer());
    if (whole.length > maxBytes) return undefined;
    return { bytes: whole, endedAt: clock.now(), endedCpu: process.cpuUsage() };
  }
  return await new Promise<ReadBody | undefined>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    // Node frames the body by its declared length. Memory is set aside up front only for a
    // length a request that sends nothing yet may cost (a larger one is gathered as it comes).
    const into =
      declared === undefined || declared === 0 || declared > PREALLOCATED_BYTES
        ? undefined
        : Buffer.allocUnsafeSlow(declared);
    const stop = () => {
      incoming.off('data', onData);
      incoming.off('end', onEnd);
      incoming.off('error', onError);
      incoming.off('close', onClose);
    };
    const done = (value: ReadBody | undefined) => {
      stop();
      resolve(value);
    };
    const onError = (error: Error) => {
      stop();
      reject(error);
    };
    // Closed before its end: the client went away.
    const onClose = () => onError(new Error('the client closed the request before its end'));
    const onData = (chunk: Buffer) => {
      if (size + chunk.length > maxBytes || (into !== undefined && size + chunk.length > into.length)) {
        done(undefined);
        return;
      }
      if (into === undefined) chunks.push(chunk);
      else chunk.copy(into, size);
      size += chunk.length;
      if (into !== undefined) progress?.(into, size);
    };
    const onEnd = () => {
      const endedAt = clock.now();
      const endedCpu = process.cpuUsage();
      if (into === undefined && chunks.length > 1 && size > JOIN_STEP_BYTES) {
        stop();
        joinInTurns(chunks, size).then((bytes) => resolve({ bytes, endedAt, endedCpu }), reject);
        return;
      }
      const bytes =
        into !== undefined
          ? into.subarray(0, size)
          : chunks.length === 1
            ? chunks[0]!
            : Buffer.concat(chunks, size);
      done({ bytes, endedAt, endedCpu });
    };
    incoming.on('data', onData);
    incoming.on('end', onEnd);
    incoming.on('error', onError);
    incoming.on('close', onClose);
  });
}
