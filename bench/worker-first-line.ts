/**
 * `npx tsx bench/worker-first-line.ts [--runs=7] [--against=DIR] [--burners=0]`: how long the
 * `agent-compaction worker` command takes, from its process's start, to say it cannot reach
 * Redis (a closed loopback port), median and range over `runs` starts. Runs the built CLI
 * (`npm run build` first); `--against=DIR`: a second built checkout, alternated with this one
 * in the same sitting. `--burners=N` adds N busy-looping processes for the run (a loaded
 * machine). Issue 46 point 5 asks for "within a second".
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

const arg = (name: string) =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? undefined;
const runs = Number(arg('runs') ?? 7);
const burners = Number(arg('burners') ?? 0);
const here = path.resolve(import.meta.dirname, '..');
const against = arg('against');
const trees = against === undefined ? [here] : [path.resolve(against), here];

/** A loopback port nobody listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Milliseconds from the spawn to the first line the worker writes (it must be the outage). */
async function firstLine(tree: string, config: string, port: number): Promise<number> {
  const start = performance.now();
  const child = spawn(process.execPath, [path.join(tree, 'dist/cli/main.js'), 'worker', '--config', config], {
    env: { ...process.env, REDIS_URL: `redis://127.0.0.1:${port}` },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  try {
    return await new Promise<number>((resolve, reject) => {
      let text = '';
      const onData = (chunk: Buffer) => {
        text += chunk.toString();
        if (!text.includes('\n')) return;
        if (/cannot reach Redis/.test(text.split('\n')[0]!)) resolve(performance.now() - start);
        else reject(new Error(`the first line is not the outage: ${text}`));
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      child.once('exit', (code) => reject(new Error(`worker exited (${code}) before a line: ${text}`)));
    });
  } finally {
    child.kill('SIGKILL');
  }
}

/** Milliseconds for `node -e ""`: the floor of any command's start on this machine now. */
async function nodeBoot(): Promise<number> {
  const start = performance.now();
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await new Promise((resolve) => child.once('exit', resolve));
  return performance.now() - start;
}

const dir = await mkdtemp(path.join(tmpdir(), 'worker-first-line-'));
const config = path.join(dir, 'compact.yaml');
await writeFile(config, 'sessions:\n  store: redis\nqueue:\n  name: first-line\n');
const loops: ChildProcess[] = [];
for (let i = 0; i < burners; i++)
  loops.push(spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' }));
const times = new Map<string, number[]>([
  ...trees.map((tree): [string, number[]] => [tree, []]),
  ['node -e ""', []],
]);
try {
  const port = await closedPort();
  for (let run = 0; run < runs; run++) {
    for (const tree of trees) times.get(tree)!.push(await firstLine(tree, config, port));
    times.get('node -e ""')!.push(await nodeBoot());
  }
} finally {
  for (const loop of loops) loop.kill('SIGKILL');
  await rm(dir, { recursive: true, force: true });
}
const load = (await readFile('/proc/loadavg', 'utf8').catch(() => '?')).split(' ').slice(0, 3).join(' ');
console.log(
  `Worker CLI, first line against a closed Redis port (${runs} starts, ${burners} burners, load ${load}):`,
);
for (const [tree, list] of times) {
  const sorted = [...list].sort((a, b) => a - b);
  const median = sorted[sorted.length >> 1]!;
  console.log(
    `  ${tree}: median ${Math.round(median)} ms (${Math.round(sorted[0]!)}-${Math.round(sorted.at(-1)!)}), ${tree.startsWith('node') ? 'a process that does nothing' : `within a second: ${median <= 1000 ? 'met' : 'MISSED'}`}`,
  );
}
