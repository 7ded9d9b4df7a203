/**
 * The proxy's optional peers, `hono` and `@hono/node-server`, loaded when an app is made or a
 * server started, not when `agent-compaction/proxy` is imported: without them the import
 * works and the first use throws `missing_dependency` naming both packages. `createProxyApp`
 * is synchronous, so hono's ES module is loaded with `require` (Node 20.19+ loads an ES module
 * synchronously): the same instance an `import 'hono'` gets, not its CommonJS twin.
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { CompactError } from '../core/errors.js';

/** The line a missing peer of the proxy is reported with. */
export const PROXY_PEERS_MISSING = 'the proxy needs hono and @hono/node-server: npm i hono @hono/node-server';

/** What the proxy takes from hono. */
export interface HonoModules {
  Hono: typeof import('hono').Hono;
  bodyLimit: typeof import('hono/body-limit').bodyLimit;
}

const requireHere = createRequire(import.meta.url);
let hono: HonoModules | undefined;

/** The ES module `specifier` resolves to, loaded synchronously. */
function requireModule<T>(specifier: string): T {
  return requireHere(fileURLToPath(import.meta.resolve(specifier))) as T;
}

/** `missing_dependency` when `error` says a peer of the proxy is not installed; `error` otherwise. */
function peerError(error: unknown): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  const missing = code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND';
  if (!missing || !/'(hono|@hono\/node-server)[/']/.test((error as Error).message)) return error;
  return new CompactError('missing_dependency', PROXY_PEERS_MISSING, { cause: error });
}

/** hono's `Hono` and `bodyLimit`, loaded once. */
export function loadHono(): HonoModules {
  if (hono) return hono;
  try {
    const { Hono } = requireModule<typeof import('hono')>('hono');
    const { bodyLimit } = requireModule<typeof import('hono/body-limit')>('hono/body-limit');
    hono = { Hono, bodyLimit };
    return hono;
  } catch (error) {
    throw peerError(error);
  }
}

/** `@hono/node-server`. */
export async function loadNodeServer(): Promise<typeof import('@hono/node-server')> {
  try {
    return await import('@hono/node-server');
  } catch (error) {
    throw peerError(error);
  }
}
