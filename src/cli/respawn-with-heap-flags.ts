/**
 * `agent-compaction proxy` runs in a Node process of its own with a young generation capped at
 * `PROXY_SEMI_SPACE_MB` (`--max-semi-space-size`). Why: a proxy holds a few tens of MB that
 * live long (each conversation's last body parsed, the manager's index) and makes a little
 * garbage per request while it waits on sockets. V8 lets the young generation grow to 16 MB a
 * semi-space, and once the old generation's headroom is below the young generation's size it
 * starts a full mark of the whole heap ahead of time: at a 128k-token history that was a
 * mark-compact every four or five requests (13 in 160 requests), each one a pause on some
 * request. Capped at 8 MB the headroom stays larger: 2 mark-compacts in the same run (both
 * while the first history was counted), the process's CPU per request down from ~12 ms to
 * ~7.5 ms (`PROXY_BENCH_NODE_FLAGS=--trace-gc npx tsx bench/proxy.ts`; docs/proxy.md). Smaller
 * is worse (2 MB: objects promoted early, 17 mark-compacts).
 *
 * The flag only takes effect when the process starts, so the CLI starts the proxy again as a
 * child with it (signals passed on, its exit code returned; the child stops when its parent is
 * gone). A process already given `--max-semi-space-size` (on the command line or in
 * `NODE_OPTIONS`) is left as it is, and `AGENT_COMPACTION_PROXY_RESPAWN=0` turns this off.
 */
import { spawn } from 'node:child_process';

/** The young generation's semi-space cap of the proxy's process, in MB. */
export const PROXY_SEMI_SPACE_MB = 8;
/** Set in the child's environment (and `0` turns the respawn off). */
export const RESPAWN_ENV = 'AGENT_COMPACTION_PROXY_RESPAWN';

/**
 * The Node flags to start the proxy's process with, or `undefined` when this process is to run
 * it as it is (already given a semi-space size, already the child, or told not to).
 */
export function heapFlagsToAdd(
  execArgv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): string[] | undefined {
  if (env[RESPAWN_ENV] !== undefined) return undefined;
  const given = [...execArgv, ...(env.NODE_OPTIONS ?? '').split(/\s+/)];
  if (given.some((flag) => /^--max[-_]semi[-_]space[-_]size/.test(flag))) return undefined;
  return [`--max-semi-space-size=${PROXY_SEMI_SPACE_MB}`];
}

/**
 * Runs `agent-compaction <argv>` again in a child with `flags`; resolves with its exit code
 * (128 + the signal's number when a signal ended it).
 */
export function respawnWithHeapFlags(argv: readonly string[], flags: readonly string[]): Promise<number> {
  const script = process.argv[1]!;
  const child = spawn(process.execPath, [...process.execArgv, ...flags, script, ...argv], {
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, [RESPAWN_ENV]: 'child' },
  });
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  const pass = (signal: NodeJS.Signals) => child.kill(signal);
  for (const signal of signals) process.on(signal, pass);
  return new Promise((resolve) => {
    child.once('error', () => resolve(1));
    child.once('exit', (code, signal) => {
      for (const name of signals) process.off(name, pass);
      resolve(code ?? 128 + (signal === 'SIGINT' ? 2 : signal === 'SIGHUP' ? 1 : 15));
    });
  });
}

/** In the child: stops the proxy (as on SIGTERM) once the parent that started it is gone. */
export function stopWithParent(): void {
  if (process.env[RESPAWN_ENV] !== 'child' || process.channel === undefined) return;
  process.channel.unref();
  process.once('disconnect', () => process.kill(process.pid, 'SIGTERM'));
}
