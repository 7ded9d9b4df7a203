import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A redis-server started for a test, on 127.0.0.1. */
export interface RedisTestServer {
  url: string;
  port: number;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject()));
    });
  });
}

function binary(): string {
  for (const path of ['/usr/bin/redis-server', '/usr/local/bin/redis-server'])
    if (existsSync(path)) return path;
  throw new Error('redis-server is not installed: apt-get install -y redis-server');
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
 * where its clients reconnect), without persistence, in a temp directory.
 */
export async function startRedisServer(options: { port?: number } = {}): Promise<RedisTestServer> {
  const dir = await mkdtemp(join(tmpdir(), 'compact-redis-'));
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
      await rm(dir, { recursive: true, force: true });
      throw error;
    }
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    return {
      url: `redis://127.0.0.1:${port}`,
      port,
      async stop() {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
        await exited;
        await rm(dir, { recursive: true, force: true });
      },
    };
  }
}
