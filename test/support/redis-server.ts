import { type ChildProcess, spawn } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';

/** A redis-server started for a test, on 127.0.0.1. */
export interface RedisTestServer {
  url: string;
  port: number;
  /** The server's process id (to SIGSTOP it: a stalled server that accepts and never answers). */
  pid: number;
  stop(): Promise<void>;
}

/** A port nothing listens on (taken, then released). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject()));
    });
  });
}

/** The `redis-server` executable on `PATH` (as a shell finds it), or `undefined`. */
export function findRedisServer(pathEnv: string = process.env.PATH ?? ''): string | undefined {
  for (const dir of pathEnv.split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, 'redis-server');
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not in this folder
    }
  }
  return undefined;
}

/**
 * Whether the Redis suites can run: `true` with `redis-server` on PATH. Without it they are
 * skipped with one notice line, unless `COMPACT_REQUIRE_REDIS=1` (set by CI) makes that an error.
 */
export function redisAvailable(
  suite: string,
  env: { PATH?: string; COMPACT_REQUIRE_REDIS?: string } = process.env,
  warn: (line: string) => void = console.warn,
): boolean {
  if (findRedisServer(env.PATH ?? '') !== undefined) return true;
  if (env.COMPACT_REQUIRE_REDIS === '1') {
    throw new Error(
      `${suite}: COMPACT_REQUIRE_REDIS=1 but redis-server is not on PATH (apt-get install -y redis-server)`,
    );
  }
  warn(`skipped ${suite}: redis-server is not on PATH (optional; apt-get install -y redis-server to run it)`);
  return false;
}

function binary(): string {
  const path = findRedisServer();
  if (path === undefined) throw new Error('redis-server is not on PATH: apt-get install -y redis-server');
  return path;
}

/** Resolves once the server logs that it accepts connections; rejects when it exits first. */
function ready(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    let log = '';
    const onData = (chunk: Buffer) => {
      log += chunk.toString();
      if (log.includes('Ready to accept connections')) {
        child.stdout?.off('data', onData);
        child.off('exit', onExit);
        child.stdout?.resume();
        resolve();
      }
    };
    const onExit = () => reject(new Error(`redis-server exited:\n${log.slice(-2000)}`));
    child.stdout?.on('data', onData);
    child.once('exit', onExit);
  });
}

/**
 * Starts Debian's redis-server on a free port (or on `port`, to restart a stopped server
 * where its clients reconnect), without persistence, in a temp directory (or in `dir`, kept:
 * the server loads the `dump.rdb` a `SAVE` left there, a restart with its data).
 */
export async function startRedisServer(
  options: { port?: number; dir?: string } = {},
): Promise<RedisTestServer> {
  const dir = options.dir ?? (await mkdtemp(join(tmpdir(), 'compact-redis-')));
  for (let attempt = 0; ; attempt++) {
    const port = options.port ?? (await freePort());
    const child = spawn(
      binary(),
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      await ready(child);
    } catch (error) {
      // Another process may have taken the port between the probe and the bind.
      if (attempt < 4) continue;
      if (options.dir === undefined) await rm(dir, { recursive: true, force: true });
      throw error;
    }
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    return {
      url: `redis://127.0.0.1:${port}`,
      port,
      pid: child.pid as number,
      async stop() {
        if (child.exitCode === null && child.signalCode === null) {
          // A stopped (SIGSTOP) server takes no SIGTERM until it runs again.
          child.kill('SIGCONT');
          child.kill('SIGTERM');
        }
        await exited;
        if (options.dir === undefined) await rm(dir, { recursive: true, force: true });
      },
    };
  }
}
