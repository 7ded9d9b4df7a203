/**
 * The worker command's start-up probe of Redis, made before the rest is loaded: loading the
 * config (zod, yaml), the store and bullmq takes most of a second on a loaded machine, and a
 * worker that cannot reach Redis must say so at once.
 */

import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { probeRedis, unreachableMessage } from '../queue/redis-probe.js';
import type { CliIo } from './cli-io.js';

/** A probe of one URL whose failure was said on stderr as soon as it was known. */
export interface EarlyProbe {
  readonly url: string;
  /** What went wrong, or `undefined` once Redis accepted (as `probeRedis`). */
  readonly probe: Promise<string | undefined>;
  /** True (once) for the worker's own telling of this probe's answer: already said. */
  said(message: string): boolean;
}

/** Probes `url` now and says a failure on `io.stderr` as soon as it is known. */
export function earlyProbe(url: string, io: CliIo): EarlyProbe {
  let told: string | undefined;
  const probe = probeRedis(url);
  void probe.then((problem) => {
    if (problem === undefined) return;
    told = unreachableMessage(url, problem);
    io.stderr(`${told}\n`);
  });
  return {
    url,
    probe,
    said(message) {
      if (message !== told) return false;
      told = undefined;
      return true;
    },
  };
}

/**
 * The Redis URL the config will name, when it is known without loading the config: a YAML or
 * JSON file that never writes `redis_url_env` (nor an escape that could spell it), with
 * neither `COMPACT_REDIS_URL_ENV` nor `COMPACT_QUEUE_REDIS_URL_ENV` set, reads the default
 * `REDIS_URL`. Otherwise `undefined`: only the loaded config can say (a `.js` config computes
 * it).
 */
export async function earlyRedisUrl(
  file: string,
  env: CliIo['env'],
  cwd: string,
): Promise<string | undefined> {
  const url = env.REDIS_URL;
  if (!url || !/\.(ya?ml|json)$/i.test(file)) return undefined;
  if (env.COMPACT_REDIS_URL_ENV !== undefined || env.COMPACT_QUEUE_REDIS_URL_ENV !== undefined)
    return undefined;
  let text: string;
  try {
    text = await readFile(resolve(cwd, file), 'utf8');
  } catch {
    return undefined; // the config's own loading says what is wrong with the file
  }
  return text.includes('redis_url_env') || text.includes('\\') ? undefined : url;
}
