/**
 * `npm run bench`: the figures of issue 2 point 3, measured in one run.
 *
 * 1. Cold count: the first estimate of a 1,000-message ~128k-token conversation in this
 *    process (tokenizer load included).
 * 2. Full recount: counting every message again with the same tokenizer (no cache).
 * 3. Warm preflight: the history grows by one message per call; median per call.
 * 4. Pathological inputs (100 KB each) counted in slices, with the slicing error measured
 *    against an unsliced count on 20 KB samples.
 * 5. Redaction throughput.
 * 6. Background compaction (bench/background.ts; `--no-background` skips it).
 * 7. Cost under prompt caching (bench/cache-cost.ts; `--no-cost` skips it), written to
 *    bench/results.json; then the cost trigger on vs off with a paid summarizer
 *    (bench/paid-summarizer-early.ts).
 * 8. Speed on every path (bench/speed.ts; `--no-speed` skips it): warm, rebuilt, first calls,
 *    triggers, background at the trigger; the first call after a compaction by window
 *    (bench/after-compaction.ts); the first call of a fresh manager on a known session, its
 *    counts stored, against a warm call (bench/cold-start.ts).
 * 9. The event loop: the tokenizer's load (awaited through `ready()` and cold), the longest
 *    stall per path, and while the built-in summarizer prepares in the background
 *    (bench/event-loop.ts; `--no-event-loop` skips it); the scavenges of a cold 16k-message
 *    call (bench/scavenges.ts; `--no-scavenges` skips it); the longest block on every path, each
 *    in a fresh process (bench/path-blocks.ts; `--no-path-blocks` skips it).
 * 10. SDK integrations, then the LangChain.js middleware's own work per call at 1k/4k/16k
 *    messages (bench/sdk-overhead.ts, bench/langchain-middleware.ts; `--no-sdk` skips them).
 * 11. A fleet with the preparation queue (bench/queue.ts; `--no-queue` skips it), and under
 *    issue 46's faults (bench/queue-faults.ts; `--no-queue-faults` skips it).
 * 12. The compacting proxy's overhead per request and on a stream's first byte (bench/proxy.ts;
 *    `--no-proxy` skips it).
 * 13. Hostile 4 MB inputs for the redactor and the summary-tag defuser (bench/hostile-inputs.ts).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { BpeTokenCounter, tokenCounterFor } from '../src/core/counting/token-counter.js';
import { MESSAGE_CODECS } from '../src/core/messages/formats/detect-format.js';
import { createRedactor, redactDeep } from '../src/core/redaction/redactor.js';
import { CompactManager, type CompactMessage } from '../src/index.js';
import { syntheticSession } from '../src/testing/synthetic-session.js';

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};
const ms = (value: number) => `${value.toFixed(3)} ms`;

/** Real text from the SWE-agent transcripts vendored in test/fixtures/swe-agent (BPE caches make repetitive text unrealistically fast). */
function realCorpus(): string {
  const dir = new URL('../test/fixtures/swe-agent/', import.meta.url);
  if (!existsSync(dir)) return '';
  const parts: string[] = [];
  for (const file of readdirSync(dir).filter((name) => name.endsWith('.traj'))) {
    const trajectory = JSON.parse(readFileSync(new URL(file, dir), 'utf8')) as {
      history: { content: unknown }[];
    };
    for (const message of trajectory.history) {
      const content = message.content;
      parts.push(
        typeof content === 'string'
          ? content
          : (content as { text?: string }[]).map((p) => p.text ?? '').join('\n'),
      );
    }
  }
  return parts.join('\n');
}

function conversation(): Record<string, unknown>[] {
  // About 1,000 messages and 128k tokens: the synthetic session's structure (tool calls,
  // parallel calls, turns) with its text replaced by real transcript text.
  const corpus = realCorpus();
  let turns = 150;
  for (;;) {
    const messages = syntheticSession({ turns, seed: 11, toolDensity: 2.5, resultChars: 760 });
    if (messages.length >= 1001) {
      if (!corpus) return messages.slice(0, 1001);
      let offset = 0;
      return messages.slice(0, 1001).map((message) => {
        const content = message.content;
        if (typeof content !== 'string' || message.role === 'system' || message.role === 'developer')
          return message;
        const text = corpus.slice(offset % corpus.length, (offset % corpus.length) + content.length);
        offset += content.length + 97;
        return { ...message, content: text || content };
      });
    }
    turns += 10;
  }
}

const messages = conversation();
// About 1,000 messages, cut where the model speaks next: an unanswered tool call at the end of
// a request is refused (invalid_messages), as a provider would.
const roleOf = (m: unknown) => (m as { role?: string } | undefined)?.role;
const callsOf = (m: unknown) => ((m as { tool_calls?: unknown[] } | undefined)?.tool_calls ?? []).length;
let cut = 1000;
while (cut > 1 && (roleOf(messages[cut]) === 'tool' || callsOf(messages[cut - 1]) > 0)) cut--;
const history = messages.slice(0, cut);
const next = { role: 'user', content: 'Now run the tests again, please.' };

// 1. Cold.
const coldStart = performance.now();
const cold = new CompactManager({ model: 'gpt-4o', maxContextTokens: 1_000_000 });
const coldEstimate = cold.estimate(history);
const coldMs = performance.now() - coldStart;

// 2. Full recount with the same tokenizer, no cache.
const counter = tokenCounterFor('gpt-4o');
const codec = MESSAGE_CODECS['openai-chat'];
const recount = () => {
  let total = 0;
  history.forEach((raw, index) => {
    const parsed = codec.parse(raw, index);
    total += counter.countMessage({ ...parsed, id: '', index } as CompactMessage);
  });
  return total;
};
const recountTimes: number[] = [];
for (let i = 0; i < 7; i++) {
  const t = performance.now();
  recount();
  recountTimes.push(performance.now() - t);
}

// 3. Warm preflight: a window that does not trigger; the history grows by one message.
const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 400_000 });
await manager.preflight('bench', history);
const warmTimes: number[] = [];
const grown = [...history];
for (let i = 0; i < 200; i++) {
  grown.push({ role: 'user', content: `follow-up ${i}: please check src/auth/token.ts again` });
  const t = performance.now();
  await manager.preflight('bench', grown);
  warmTimes.push(performance.now() - t);
}
// Callers that rebuild their message objects every call (no identity to reuse): the parse
// and counts come from the content-keyed cache, at the price of hashing each message.
const rebuiltTimes: number[] = [];
for (let i = 0; i < 20; i++) {
  const copy = structuredClone(grown);
  const t = performance.now();
  await manager.preflight('bench', copy);
  rebuiltTimes.push(performance.now() - t);
}

// And the single appended real message.
const t0 = performance.now();
const result = await manager.compact('bench', [...history, next]);
const appendOne = performance.now() - t0;

const recountMedian = median(recountTimes);
const warmMedian = median(warmTimes);

// 4. Pathological inputs.
const SIZE = 100_000;
const patho: Record<string, string> = {
  'repeated character': 'a'.repeat(SIZE),
  whitespace: ' '.repeat(SIZE),
  'newlines and tabs': '\n\t'.repeat(SIZE / 2),
  'base64 blob': Buffer.from(Array.from({ length: (SIZE * 3) / 4 }, (_, i) => (i * 7919) % 256))
    .toString('base64')
    .slice(0, SIZE),
  'CJK without punctuation': '的一是不了人我在有他这为之大来以个中上们'.repeat(SIZE / 20),
  'minified JSON': JSON.stringify(
    Array.from({ length: 4000 }, (_, i) => ({ id: i, k: 'v'.repeat(i % 13) })),
  ).slice(0, SIZE),
};
const unsliced = new BpeTokenCounter({ encoding: 'o200k_base', sliceChars: 1e9 });
const pathoRows = Object.entries(patho).map(([name, text]) => {
  const times: number[] = [];
  let tokens = 0;
  for (let i = 0; i < 3; i++) {
    const t = performance.now();
    tokens = counter.countText(text);
    times.push(performance.now() - t);
  }
  const sample = text.slice(0, 20_000);
  const exact = unsliced.countText(sample);
  const error = Math.abs(counter.countText(sample) - exact) / exact;
  return {
    name,
    chars: text.length,
    tokens,
    msPer100KB: median(times) * (SIZE / text.length),
    errorPct: error * 100,
  };
});

// 5. Redaction throughput (default patterns) over the conversation's JSON, with secrets planted.
const redact = createRedactor();
const planted = history.map((message, i) =>
  i % 50 === 0
    ? {
        ...message,
        content: `${String((message as { content?: unknown }).content ?? '')} api_key=sk-proj-${'x'.repeat(24)}${i}`,
      }
    : message,
);
const redactBytes = Buffer.byteLength(JSON.stringify(planted));
const redactTimes: number[] = [];
for (let i = 0; i < 5; i++) {
  const t = performance.now();
  redactDeep(planted, redact);
  redactTimes.push(performance.now() - t);
}
const redactMBps = redactBytes / 1e6 / (median(redactTimes) / 1000);

const figures = {
  conversation: { messages: history.length, tokens: coldEstimate.total },
  coldCountMs: coldMs,
  fullRecountMedianMs: recountMedian,
  warmPreflightMedianMs: warmMedian,
  warmPreflightP95Ms: [...warmTimes].sort((a, b) => a - b)[Math.floor(warmTimes.length * 0.95)]!,
  speedup: recountMedian / warmMedian,
  rebuiltObjectsMedianMs: median(rebuiltTimes),
  appendOneMessageMs: appendOne,
  triggered: result.applied,
  pathological: pathoRows,
  redaction: { bytes: redactBytes, medianMs: median(redactTimes), mbPerSecond: redactMBps },
};

console.log(
  `Conversation: ${figures.conversation.messages} messages, ${figures.conversation.tokens} tokens (o200k_base)`,
);
console.log(`Cold count (tokenizer load + first count): ${ms(coldMs)}`);
console.log(`Full recount, same tokenizer, median of 7:  ${ms(recountMedian)}`);
console.log(
  `Warm preflight (+1 message), median of 200: ${ms(warmMedian)}  (p95 ${ms(figures.warmPreflightP95Ms)})  target <= 1 ms`,
);
console.log(`Speed-up warm preflight vs full recount:    ${figures.speedup.toFixed(0)}x  target >= 50x`);
console.log(
  `Preflight with every message object rebuilt (content cache), median of 20: ${ms(median(rebuiltTimes))}`,
);
console.log('Pathological inputs (counted in ~2k-character slices):');
for (const row of pathoRows) {
  console.log(
    `  ${row.name.padEnd(26)} ${ms(row.msPer100KB).padStart(11)} per 100 KB  slicing error ${row.errorPct.toFixed(3)}%  target <= 50 ms`,
  );
}
console.log(
  `Redaction (default patterns), ${(redactBytes / 1e6).toFixed(2)} MB of messages: ${ms(median(redactTimes))}, ${redactMBps.toFixed(1)} MB/s`,
);
// Issue 24: what a long-lived manager holds per session and per cached message (its own
// counters, `cacheStatus()`), and that ending the sessions gives it back.
{
  const memoryManager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 128_000 });
  const sessions = 200;
  for (let i = 0; i < sessions; i++)
    await memoryManager.compact(`mem-${i}`, syntheticSession({ turns: 20, seed: i + 1 }));
  const held = memoryManager.cacheStatus();
  for (let i = 0; i < sessions; i++) memoryManager.endSession(`mem-${i}`);
  const ended = memoryManager.cacheStatus();
  console.log(
    `Memory (cacheStatus), ${sessions} sessions of 20 turns: ${Math.round(held.bytes / sessions).toLocaleString('en')} bytes per session held, ${Math.round(held.cachedMessageBytes / Math.max(1, held.cachedMessages)).toLocaleString('en')} bytes per cached message (${held.cachedMessages.toLocaleString('en')} cached); after endSession: ${ended.sessions} sessions, ${ended.bytes} bytes held`,
  );
  await memoryManager.shutdown();
  // Issue 47 point 4: the heap after endSession on half of 1,000 sessions, on all, and after shutdown.
  const { freshProcessRows, memoryBench, printFreshProcessRows, printMemory } = await import('./memory.js');
  printMemory(await memoryBench(process.argv.includes('--quick') ? 200 : 1_000));
  printFreshProcessRows(await freshProcessRows());
}
// Issue 44: the redactor and the summary-tag defuser on 4 MB hostile inputs (target 20 MB/s).
{
  const { formatHostileRow, formatScaling, hostileScaling, ordinaryRedactorMBps, runHostileInputsBench } =
    await import('./hostile-inputs.js');
  const ordinary = ordinaryRedactorMBps();
  console.log(
    `Hostile inputs, 4 MB each (median of 5 runs; target >= 20 MB/s by CPU time; ordinary transcript text, same run: redactor CPU ${ordinary.toFixed(1)} MB/s):`,
  );
  for (const row of runHostileInputsBench()) console.log(`  ${formatHostileRow(row, ordinary)}`);
  for (const row of hostileScaling()) console.log(`  ${formatScaling(row)}`);
}
// Issue 9: the cascade and the 16,000-message warm path.
await import('./cascade.js');
// Issue 21: what a long coding session bills under prompt caching, this engine beside its
// peers' strategies (`--no-cost` skips it); the rows go to bench/results.json.
if (!process.argv.includes('--no-cost')) {
  console.log('\nCost under prompt caching (bench/cache-cost.ts), billed-equivalent input tokens:');
  const { runCacheCostBench } = await import('./cache-cost.js');
  const rows = await runCacheCostBench();
  const { writeFileSync } = await import('node:fs');
  writeFileSync(
    new URL('./results.json', import.meta.url),
    `${JSON.stringify({ measuredAt: new Date().toISOString(), node: process.version, cacheCost: rows }, null, 2)}\n`,
  );
  console.log('(rows written to bench/results.json)');
  // Issue 47 point 3: the cost trigger with a summarizer of the caller's adds no summarizer calls.
  console.log('\nCost trigger on vs off with a paid summarizer (bench/paid-summarizer-early.ts):');
  const { runPaidEarlyBench } = await import('./paid-summarizer-early.js');
  await runPaidEarlyBench();
}
const { cascadeFigures } = await import('./cascade.js');
const ok =
  warmMedian <= 1 &&
  figures.speedup >= 50 &&
  pathoRows.every((r) => r.msPer100KB <= 50) &&
  cascadeFigures.warm16k.warm <= 0.5 &&
  cascadeFigures.summarizerCallsPer100Steps <= 10;
console.log(ok ? 'All targets met.' : 'Some targets missed (see the lines marked above).');
if (process.argv.includes('--json')) console.log(JSON.stringify(figures, null, 2));

// Issue 28: speed on every path (bench/speed.ts; `--no-speed` skips it).
if (!process.argv.includes('--no-speed')) {
  console.log('\nSpeed (bench/speed.ts):');
  const { runSpeedBench } = await import('./speed.js');
  await runSpeedBench();
  const { runAfterCompactionBench } = await import('./after-compaction.js');
  await runAfterCompactionBench();
  // Issue 47 point 1: the first call of a fresh manager on a known session.
  const { coldCompactedAt, coldStartBench, printColdStart, printCompactedColdStart } = await import(
    './cold-start.js'
  );
  printColdStart(await coldStartBench(process.argv.includes('--quick')));
  printCompactedColdStart([await coldCompactedAt(process.argv.includes('--quick') ? 1_000 : 16_000)]);
}

// Issue 34: the compaction rhythm with tool outputs of 1% to 25% of the window (bench/rhythm.ts;
// `--no-rhythm` skips it).
if (!process.argv.includes('--no-rhythm')) {
  console.log('\nCompaction rhythm (bench/rhythm.ts):');
  const { rhythmBench, printRhythm } = await import('./rhythm.js');
  printRhythm(await rhythmBench());
}

// 6. Background compaction (issue 13): how long a trigger blocks the agent, synchronous
// against background, and the compaction CPU share (about two minutes; skip with --no-background).
if (!process.argv.includes('--no-background')) {
  console.log('\nBackground compaction (bench/background.ts):');
  await import('./background.js');
}

// Issue 39: a fleet of 3 agent processes with background preparation, without and with the
// BullMQ queue and 2 workers (one killed halfway), on a real redis-server (bench/queue.ts;
// `--no-queue` skips it; QUEUE_BENCH_SESSIONS / QUEUE_BENCH_STEPS size it).
if (!process.argv.includes('--no-queue')) {
  const { queueBench, printQueueBench } = await import('./queue.js');
  const { redisAvailable } = await import('../test/support/redis-server.js');
  if (redisAvailable('bench/queue.ts')) {
    console.log('\nPreparation queue (bench/queue.ts):');
    printQueueBench(await queueBench());
  }
}

// Issue 46: the fleet under each fault (a worker killed, Redis stopped 5 s, Redis restarted
// without persistence, a hanging then poisoned summarizer): share from the queue, doubled
// versions and versions down (both must be 0), preflight p50/p99 (bench/queue-faults.ts;
// `--no-queue-faults` skips it).
if (!process.argv.includes('--no-queue-faults')) {
  const { queueFaultsBench } = await import('./queue-faults.js');
  const { redisAvailable } = await import('../test/support/redis-server.js');
  if (redisAvailable('bench/queue-faults.ts')) {
    console.log('\nA fleet under faults (bench/queue-faults.ts):');
    await queueFaultsBench();
  }
}

// Issue 24: the event loop while the built-in summarizer prepares in the background
// (bench/event-loop.ts; `--no-event-loop` skips it).
if (!process.argv.includes('--no-event-loop')) {
  const {
    backgroundBench,
    idleGap,
    pathStallsBench,
    printPathStalls,
    printTokenizerWarmup,
    tokenizerWarmupBench,
  } = await import('./event-loop.js');
  printTokenizerWarmup(await tokenizerWarmupBench());
  printPathStalls([await idleGap(), ...(await pathStallsBench())], await backgroundBench());
}

// Issue 47 point 2: the longest block on every path (core, background, each SDK integration's
// first call, the proxy, the CLI, a 10 MB input), each in a fresh child process, min and median
// of 3 runs, with a CPU profile of a block over 20 ms (bench/path-blocks.ts; `--no-path-blocks`
// skips it).
if (!process.argv.includes('--no-path-blocks')) {
  console.log('');
  const { pathBlocksBench } = await import('./path-blocks.js');
  await pathBlocksBench();
}

// Issue 47 point 2: the scavenges of a cold 16k-message call, their longest pause and the most
// bytes one of them moved (bench/scavenges.ts; `--no-scavenges` skips it).
if (!process.argv.includes('--no-scavenges')) {
  console.log('\nScavenges of a cold 16k-message call (bench/scavenges.ts):');
  await import('./scavenges.js');
}

// Issue 28 point 6: each SDK integration against the SDK alone, warm, against a loopback
// server (bench/sdk-overhead.ts; `--no-sdk` skips it).
if (!process.argv.includes('--no-sdk')) {
  console.log('\nSDK integrations (bench/sdk-overhead.ts):');
  const { sdkOverheadBench, printSdkOverhead } = await import('./sdk-overhead.js');
  printSdkOverhead(await sdkOverheadBench());
  const { langChainMiddlewareBench, printLangChainMiddleware } = await import('./langchain-middleware.js');
  printLangChainMiddleware(await langChainMiddlewareBench());
  const { langChainFirstCall, printLangChainFirstCall } = await import('./langchain-middleware.js');
  printLangChainFirstCall(await langChainFirstCall(process.argv.includes('--quick') ? 4_000 : 16_000));
}

// Issue 49 point 5: what the compacting proxy adds per request at a 128k history, and to a
// stream's first byte (bench/proxy.ts; `--no-proxy` skips it).
if (!process.argv.includes('--no-proxy')) {
  console.log('\nCompacting proxy (bench/proxy.ts):');
  const { proxyBench, printProxyBench } = await import('./proxy.js');
  printProxyBench(await proxyBench());
}

// Issue 45: the built-in summarizer's instruction model, sentences per second on one core
// (bench/instruction-model.ts).
{
  const { instructionModelSpeed } = await import('./instruction-model.js');
  const { sentences, perSecond } = instructionModelSpeed();
  console.log(
    `\ninstruction model: ${Math.round(perSecond).toLocaleString('en')} sentences/s (best of 5 passes over ${sentences} real sentences; goal >= 20,000)`,
  );
}
