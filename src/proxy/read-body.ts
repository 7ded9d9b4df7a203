/**
 * A request body read as one Buffer, chunk by chunk off the Node request when there is one
 * (no string built, no web stream in between), stopping at the size limit rather than after
 * the whole body.
 */
import type { IncomingMessage } from 'node:http';
import type { Context } from 'hono';

/** The body, or `undefined` when it is over `maxBytes`. */
export async function readBody(c: Context, maxBytes: number): Promise<Buffer | undefined> {
  const declared = Number(c.req.header('content-length'));
  if (declared > maxBytes) return undefined;
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  if (incoming === undefined || typeof incoming.on !== 'function' || incoming.readableDidRead) {
    const whole = Buffer.from(await c.req.arrayBuffer());
    return whole.length > maxBytes ? undefined : whole;
  }
  return await new Promise<Buffer | undefined>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = () => {
      incoming.off('data', onData);
      incoming.off('end', onEnd);
      incoming.off('error', onError);
      incoming.off('close', onClose);
    };
    const done = (value: Buffer | undefined) => {
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
      size += chunk.length;
      if (size > maxBytes) done(undefined);
      else chunks.push(chunk);
    };
    const onEnd = () => done(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
    incoming.on('data', onData);
    incoming.on('end', onEnd);
    incoming.on('error', onError);
    incoming.on('close', onClose);
  });
}
