/**
 * What `ready()`'s rehearsal of a fresh process's first call costs (rehearse-first-call.ts):
 * `node bench/rehearsal-cost.mjs [dist]`. A manager on the in-process store is readied first
 * (everything `ready()` loads but the rehearsal, which it skips there), then one on a store
 * outside the process (a plain object over a `MemorySessionStore`), whose `ready()` is the
 * rehearsal alone: its wall time, main-thread CPU (Linux schedstat) and longest turn (the most
 * main-thread CPU between two `setImmediate` ticks). Prints one JSON line.
 */
import { openSync, readSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const dist = resolve(process.argv[2] ?? 'dist');
const { CompactManager, MemorySessionStore } = await import(pathToFileURL(`${dist}/index.js`).href);
const fd = openSync(`/proc/self/task/${process.pid}/schedstat`, 'r');
const buffer = Buffer.alloc(128);
const threadMs = () => {
  const text = buffer.toString('latin1', 0, readSync(fd, buffer, 0, buffer.length, 0));
  return Number(text.slice(0, text.indexOf(' '))) / 1e6;
};

const inProcess = new CompactManager({ model: 'gpt-4o', store: new MemorySessionStore() });
await inProcess.ready();
const memory = new MemorySessionStore();
const store = {
  name: 'shared',
  get: (key) => memory.get(key),
  set: (key, state, options) => memory.set(key, state, options),
  delete: (key) => memory.delete(key),
  acquireLock: (key, ttlMs) => memory.acquireLock(key, ttlMs),
};
const shared = new CompactManager({ model: 'gpt-4o', store });
let longest = 0;
let last = threadMs();
let ticking = true;
let turns = 0;
const tick = () => {
  const now = threadMs();
  longest = Math.max(longest, now - last);
  last = now;
  turns++;
  if (ticking) setImmediate(tick);
};
const wallFrom = performance.now();
const cpuFrom = threadMs();
setImmediate(tick);
await shared.ready();
ticking = false;
const wall = performance.now() - wallFrom;
const cpu = threadMs() - cpuFrom;
await Promise.all([inProcess.shutdown(), shared.shutdown()]);
const round = (ms) => Math.round(ms * 10) / 10;
console.log(
  JSON.stringify({ wallMs: round(wall), threadMs: round(cpu), longestTurnMs: round(longest), turns }),
);
