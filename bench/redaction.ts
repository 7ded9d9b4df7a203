/**
 * `npx tsx bench/redaction.ts`: redactor throughput on 10 MB of real transcript text (the
 * SWE-agent trajectories vendored in test/fixtures/swe-agent, repeated), with a few secrets
 * planted every ~64 KB. Prints the median MB/s of a fresh redactor (first call, patterns
 * compiled in the timed region) and of a warm one (median of 7 runs), for the default rules,
 * and, for comparison, the same rules applied the way the redactor used to work: one global
 * replace pass per pattern over the whole text. Beside wall-clock MB/s, the warm run's CPU
 * time (user + system) gives a figure that other processes on a shared machine disturb less.
 */
import { readdirSync, readFileSync } from 'node:fs';
import {
  compileRedactionPattern,
  createRedactor,
  DEFAULT_REDACTION_PATTERNS,
} from '../src/core/redaction/redactor.js';

const TARGET_BYTES = 10 * 1024 * 1024;

function corpus(): string {
  const dir = new URL('../test/fixtures/swe-agent/', import.meta.url);
  const parts: string[] = [];
  for (const file of readdirSync(dir).filter((name) => name.endsWith('.traj'))) {
    const trajectory = JSON.parse(readFileSync(new URL(file, dir), 'utf8')) as {
      history: { content: unknown }[];
    };
    for (const message of trajectory.history) {
      const content = message.content;
      parts.push(typeof content === 'string' ? content : JSON.stringify(content));
    }
  }
  return parts.join('\n');
}

const SECRETS = [
  'OPENAI_API_KEY=sk-proj-Ab3dEfGh1jKlMnOpQrStUvWx',
  'curl -H "Authorization: Bearer 9f8e7d6c5b4a39281706f5e4d3c2b1a0"',
  'key AIzaSyA-abcdefghijklmnopqrstuvwxyz01234 here',
  'git clone https://deploy:hunter2hunter2@git.example.com/r.git',
];

function transcript(): string {
  const base = corpus();
  const chunks: string[] = [];
  let size = 0;
  let i = 0;
  while (size < TARGET_BYTES) {
    const start = (i * 65_536) % Math.max(1, base.length - 65_536);
    const chunk = `${base.slice(start, start + 65_536)}\n${SECRETS[i % SECRETS.length]}\n`;
    chunks.push(chunk);
    size += chunk.length;
    i++;
  }
  return chunks.join('').slice(0, TARGET_BYTES);
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const text = transcript();
const megabytes = Buffer.byteLength(text) / 1e6;

const freshTimes: number[] = [];
for (let run = 0; run < 5; run++) {
  const t = performance.now();
  createRedactor()(text);
  freshTimes.push(performance.now() - t);
}
const redact = createRedactor();
redact(text);
const warmTimes: number[] = [];
const warmCpu: number[] = [];
let output = '';
for (let run = 0; run < 7; run++) {
  const t = performance.now();
  const cpu = process.cpuUsage();
  output = redact(text);
  const used = process.cpuUsage(cpu);
  warmTimes.push(performance.now() - t);
  warmCpu.push((used.user + used.system) / 1000);
}
const redactions = output.split('<REDACTED>').length - 1;

const passes = DEFAULT_REDACTION_PATTERNS.map(compileRedactionPattern);
const onePassPerPattern = (input: string) =>
  passes.reduce((out, regex) => out.replace(regex, '<REDACTED>'), input);
onePassPerPattern(text);
const baselineTimes: number[] = [];
for (let run = 0; run < 3; run++) {
  const t = performance.now();
  onePassPerPattern(text);
  baselineTimes.push(performance.now() - t);
}
const fresh = megabytes / (median(freshTimes) / 1000);
const warm = megabytes / (median(warmTimes) / 1000);
const warmByCpu = megabytes / (median(warmCpu) / 1000);
const baseline = megabytes / (median(baselineTimes) / 1000);
console.log(
  `redaction: ${megabytes.toFixed(2)} MB of transcript text, ${redactions} redactions; ` +
    `fresh ${fresh.toFixed(1)} MB/s (median ${median(freshTimes).toFixed(1)} ms), ` +
    `warm ${warm.toFixed(1)} MB/s (median ${median(warmTimes).toFixed(1)} ms; by CPU time ${warmByCpu.toFixed(1)} MB/s); ` +
    `one pass per pattern (the old way, same rules) ${baseline.toFixed(1)} MB/s`,
);
