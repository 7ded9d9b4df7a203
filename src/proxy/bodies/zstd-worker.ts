/**
 * zstd on a Node whose zlib has none (20, 22 before 22.15): fzstd (pure JS, MIT, an optional
 * dependency) decodes, guarded by zstd-frames.ts, in a worker thread, since it decodes
 * synchronously (a 32 MiB body takes it a few hundred milliseconds, which the event loop must
 * not wait). One worker, started at the first zstd body and kept (not holding the process
 * open while idle); bodies are decoded one after another. Without fzstd installed there is none.
 */
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { decodeZstdFrames, zstdFrames } from './zstd-frames.js';

/**
 * The worker's program: the two functions of zstd-frames.ts as text, and the job loop. Run from
 * source by esbuild with names kept (tsx), their text calls esbuild's `__name` helper: a no-op here.
 */
const WORKER_SOURCE = `'use strict';
const __name = (target) => target;
const { parentPort, workerData } = require('node:worker_threads');
const { Decompress } = require(workerData.fzstd);
${zstdFrames.toString()}
${decodeZstdFrames.toString()}
parentPort.on('message', ({ id, input, maxBytes }) => {
  let outcome;
  try {
    outcome = decodeZstdFrames(new Uint8Array(input), maxBytes, Decompress);
  } catch (error) {
    outcome = { invalid: String(error && error.message) };
  }
  if (outcome.bytes === undefined) parentPort.postMessage({ id, ...outcome });
  else parentPort.postMessage({ id, output: outcome.bytes.buffer }, [outcome.bytes.buffer]);
});
`;

/** A worker's answer to one body. */
type Answer = { id: number } & ({ output: ArrayBuffer } | { tooLarge: true } | { invalid: string });

/** The path of fzstd's module (loaded with `require`); `null` once looked for and not installed. */
let fzstdPath: string | null | undefined;
let worker: Worker | undefined;
let nextId = 0;
const pending = new Map<number, { resolve: (bytes: Buffer) => void; reject: (error: Error) => void }>();

/** Whether fzstd is installed (looked for once). */
export function hasFzstd(): boolean {
  if (fzstdPath === undefined) {
    try {
      fzstdPath = fileURLToPath(import.meta.resolve('fzstd'));
    } catch {
      fzstdPath = null;
    }
  }
  return fzstdPath !== null;
}

/** An error as zlib's decoders throw it: `ERR_BUFFER_TOO_LARGE` past the output cap. */
function decodeError(message: string, code?: string): Error {
  return Object.assign(new Error(message), code === undefined ? {} : { code });
}

/** Every body waiting on a worker that stopped fails; the next one starts another worker. */
function lost(stopped: Worker, error: Error): void {
  if (worker === stopped) worker = undefined;
  for (const job of pending.values()) job.reject(error);
  pending.clear();
}

function startWorker(): Worker {
  // Not the process's flags: `--input-type=module` would make the program an ES module.
  const started = new Worker(WORKER_SOURCE, { eval: true, execArgv: [], workerData: { fzstd: fzstdPath } });
  started.on('message', (answer: Answer) => {
    const job = pending.get(answer.id);
    pending.delete(answer.id);
    if (pending.size === 0) started.unref();
    if ('output' in answer) job?.resolve(Buffer.from(answer.output));
    else if ('tooLarge' in answer) job?.reject(decodeError('over the limit', 'ERR_BUFFER_TOO_LARGE'));
    else job?.reject(decodeError(`invalid zstd data: ${answer.invalid}`));
  });
  started.on('error', (error) => lost(started, error));
  started.on('exit', (code) => lost(started, new Error(`the zstd worker stopped (exit code ${code})`)));
  return started;
}

/**
 * `bytes` decoded from zstd in the worker, at most `maxOutputLength` bytes (else an error with
 * code `ERR_BUFFER_TOO_LARGE`, as zlib's); the same shape as zlib's promisified decoders.
 */
export async function fzstdDecompress(
  bytes: Buffer,
  options: { maxOutputLength?: number | undefined },
): Promise<Buffer> {
  if (!hasFzstd()) throw decodeError('fzstd is not installed');
  worker ??= startWorker();
  worker.ref();
  const id = nextId++;
  // A copy of exactly the body, handed over (a Buffer may share its memory with others).
  const input = new Uint8Array(bytes).buffer;
  const maxBytes = options.maxOutputLength ?? Number.MAX_SAFE_INTEGER;
  return await new Promise<Buffer>((resolve, reject) => {
    pending.set(id, { resolve, reject });
    worker!.postMessage({ id, input, maxBytes }, [input]);
  });
}
