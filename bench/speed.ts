/**
 * Speed on every path users take (issue 28), printed by `npm run bench` (`--no-speed` skips
 * it; `npx tsx bench/speed.ts` runs it alone, `--quick` with smaller sizes):
 *
 * 1. Warm preflight, no trigger, median per call at 250 / 1k / 4k / 16k / 50k messages (~340 tokens each):
 *    - appended: the same objects, one message appended per call;
 *    - same objects: the same array again, nothing new (a retry);
 *    - SDK rebuilt: every object and array rebuilt around the same strings, as the AI SDK's
 *      and the Agents SDK's conversions hand messages over (the rebuild is not timed);
 *    - JSON trip: every object rebuilt by structuredClone, strings copied too, as a JSON round
 *      trip or a worker message does (the clone is not timed), one message appended.
 *    - appended, cold: the same objects, one message appended, after the same clone as the
 *      rebuilt path (not used): what the clone's cache flush alone costs the call, the
 *      baseline that isolates the rebuilt path's own work (rebuilt / cold).
 *    Targets: appended <= 0.1 ms plus tokenizing the new message; rebuilt <= 2x appended.
 * 2. First calls of a session (1k messages): the first call, calls 2-50 against steady state.
 * 3. A trigger at 32k / 128k / 1M windows, the history twice the window, the built-in
 *    summarizer, the session warm (indexed and counted by earlier calls): the triggering call,
 *    beside what recounting the summarized messages costs (what each trigger paid before
 *    counts were reused).
 * 4. Background against synchronous at the trigger: a tool-heavy session whose trigger the
 *    cheap levels can settle, with an LLM stand-in summarizer of 400 ms.
 * 5. Warm appended by history size (1k / 16k / 50k / 100k) beside the tokenize-only floor
 *    (`--speed-only=scale`); target: within 1.5x of 1k at every size (issue 38).
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { tokenCounterFor } from '../src/core/counting/token-counter.js';
import { CompactManager, type Summarizer } from '../src/index.js';
import { seededRandom } from '../src/testing/synthetic-session.js';
import { copyFloor, median, newMessage, sessionOf, tokenizeFloor } from './support/warm-floors.js';

const quick = process.argv.includes('--quick');
/** `--speed-only=warm,first,trigger,background`: the sections to run (all by default). */
const only = process.argv
  .find((arg) => arg.startsWith('--speed-only='))
  ?.split('=')[1]
  ?.split(',');
const runs = (section: string) => only === undefined || only.includes(section);
// The garbage of the caller's clones is collected before each timed rebuilt call: the clone is
// the caller's cost, not the preflight's.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as (options?: { type: 'minor' | 'major' }) => void;
const collect = () => gc({ type: 'minor' });
const ms = (value: number) => `${value < 10 ? value.toFixed(3) : value.toFixed(1)} ms`;
const pad = (text: string, width: number) => text.padStart(width);

/**
 * A conversation of plain text turns, ~400 tokens each, of varied words (what the built-in
 * summarizer must fold: clearing tool results cannot free it).
 */
function textSession(count: number, seed: number): unknown[] {
  const rand = seededRandom(seed);
  const syllables = ['ka', 'lo', 'mi', 'ren', 'tas', 'vo', 'qui', 'zel', 'dra', 'pon', 'sul', 'eth'];
  const word = () =>
    Array.from(
      { length: 1 + Math.floor(rand() * 3) },
      () => syllables[Math.floor(rand() * syllables.length)],
    ).join('');
  const text = (words: number) => Array.from({ length: words }, word).join(' ');
  const messages: unknown[] = [{ role: 'system', content: 'You are a careful assistant.' }];
  for (let i = 0; i < count; i++)
    messages.push({ role: i % 2 === 0 ? 'user' : 'assistant', content: `Turn ${i}: ${text(230)}` });
  return messages;
}

interface WarmRow {
  size: number;
  tokens: number;
  first: number;
  appended: number;
  same: number;
  rebuilt: number;
  /** Every object and array rebuilt around the same strings, as SDK conversions do. */
  rebuiltSdk: number;
  /** Same objects appended, timed right after a clone of the history as large as the rebuilt path's. */
  cold: number;
  tokenize: number;
  /** A fresh output array of this size (slice): the floor of a call that returns a new array. */
  copy: number;
}

/** A deep rebuild that keeps the strings: what an SDK's message conversion hands over. */
function rebuildObjects(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rebuildObjects);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) out[key] = rebuildObjects(field);
  return out;
}

async function warmPaths(size: number, calls: number): Promise<WarmRow> {
  const history = sessionOf(size);
  const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 2_000_000_000 });
  let t = performance.now();
  const first = await manager.compact('warm', history);
  const firstMs = performance.now() - t;
  const grown = [...history];
  const appended: number[] = [];
  for (let i = 0; i < calls; i++) {
    grown.push(newMessage());
    t = performance.now();
    await manager.preflight('warm', grown);
    appended.push(performance.now() - t);
  }
  const same: number[] = [];
  for (let i = 0; i < calls; i++) {
    t = performance.now();
    await manager.preflight('warm', grown);
    same.push(performance.now() - t);
  }
  const rebuiltCalls = Math.max(8, Math.min(calls, Math.floor(400_000 / size)));
  /** Appends a message, rebuilds the history as `rebuild` does (not timed), then times the call on `sent`. */
  const afterRebuild = async (
    rebuild: (history: unknown[]) => unknown[],
    sent: (copy: unknown[]) => unknown[],
  ): Promise<number> => {
    const times: number[] = [];
    for (let i = 0; i < rebuiltCalls; i++) {
      grown.push(newMessage());
      const copy = rebuild(grown);
      collect();
      t = performance.now();
      await manager.preflight('warm', sent(copy));
      times.push(performance.now() - t);
    }
    return median(times);
  };
  const rebuilt = await afterRebuild(structuredClone, (copy) => copy);
  // Rebuilt as the SDKs' conversions do: new objects and arrays around the same strings.
  const rebuiltSdk = await afterRebuild(
    (history) => history.map(rebuildObjects),
    (copy) => copy,
  );
  // The same clone and collection as above, then the caller's own objects: the cache flush alone.
  const cold = await afterRebuild(structuredClone, () => grown);
  await manager.shutdown();
  return {
    size: history.length,
    tokens: first.tokensBefore,
    first: firstMs,
    appended: median(appended),
    same: median(same),
    rebuilt,
    rebuiltSdk,
    cold,
    tokenize: 0,
    copy: copyFloor(new Array<unknown>(grown.length).fill({})),
  };
}

/** The first call of a session, calls 2-50 and steady state (calls 151-250), one message appended per call. */
async function firstCalls(size: number) {
  const history = sessionOf(size, 41);
  const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 2_000_000_000 });
  const grown = [...history];
  const times: number[] = [];
  for (let call = 1; call <= 250; call++) {
    if (call > 1) grown.push(newMessage());
    const t = performance.now();
    await manager.preflight('first', grown);
    times.push(performance.now() - t);
  }
  await manager.shutdown();
  return { first: times[0]!, early: median(times.slice(1, 50)), steady: median(times.slice(150)) };
}

/** A warm session twice the window, then the triggering call. */
async function triggerAt(window: number) {
  const history = textSession(Math.ceil((2 * window) / 400), 17);
  const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: window });
  // Warm: indexed and counted without triggering (a wider window for this call only).
  const warm = await manager.compact('trigger', history, { maxContextTokens: 2_000_000_000 });
  let summarized = 0;
  manager.on('compact.summary_created', (event) => {
    summarized = event.properties.inputMessages;
  });
  const t = performance.now();
  const result = await manager.compact('trigger', history);
  const triggerMs = performance.now() - t;
  await manager.shutdown();
  // What recounting the summarized messages costs (a fresh counter of the same encoding:
  // the BPE's own caches are warm, as they were for the old recount).
  const counter = tokenCounterFor('gpt-4o', { margin: 1.000001 });
  const r = performance.now();
  for (const message of history.slice(0, summarized)) counter.countText(JSON.stringify(message));
  const recountMs = performance.now() - r;
  return {
    window,
    messages: history.length,
    tokens: warm.tokensBefore,
    triggerMs,
    recountMs,
    summarized,
    applied: result.applied,
    after: result.tokensAfter,
  };
}

/** An LLM stand-in: `delay` ms of waiting, then a short summary. */
function slowSummarizer(delay: number): Summarizer {
  return {
    name: 'slow-llm',
    summarize: (request) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(
          () =>
            resolve({ text: `Goal: fix the auth refresh flow. Folded ${request.messages.length} messages.` }),
          delay,
        );
        request.signal?.addEventListener(
          'abort',
          () => {
            clearTimeout(timer);
            reject(request.signal?.reason);
          },
          { once: true },
        );
      }),
  };
}

/**
 * Grows a tool-heavy session one round per call through a 32k window; the time of each call
 * that compacted. The model's time between calls is 20 ms (a preparation is still running
 * when the trigger comes).
 */
async function triggersOf(background: boolean) {
  const manager = new CompactManager({
    model: 'gpt-4o',
    maxContextTokens: 32_000,
    background,
    summarizer: slowSummarizer(400),
  });
  const session = sessionOf(900, 23, 2_400);
  const ends: number[] = [];
  session.forEach((message, k) => {
    if (k > 0 && (message as { role?: string }).role === 'user') ends.push(k);
  });
  const blocking: number[] = [];
  let over = 0;
  for (const end of ends) {
    const t = performance.now();
    const result = await manager.compact('bg', session.slice(0, end));
    const took = performance.now() - t;
    if (result.applied) blocking.push(took);
    if (result.tokensAfter > 32_000) over++;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await manager.shutdown();
  return { blocking, over };
}

/** Median time to write `n` references into an array already in memory (no allocation). */
function mappedCopy(source: readonly unknown[]): number {
  const target = new Array<unknown>(source.length).fill(0);
  const times: number[] = [];
  for (let i = 0; i < 60; i++) {
    const t = performance.now();
    for (let k = 0; k < source.length; k++) target[k] = source[k];
    times.push(performance.now() - t);
  }
  return median(times);
}

/** A scale row's timings: the calls, and the copy floors measured beside the session's heap. */
interface AppendedTimes {
  call: number;
  /** A fresh array of the history's length (slice), with the session's heap alive. */
  copy: number;
  /** The same references written into an array already in memory. */
  mapped: number;
}

/**
 * Warm appended calls at `size` messages: the same objects, one message appended per call,
 * median per call. Smaller messages than the warm section (~60 tokens): the history's length
 * is what scales here, and 100k messages of 340 tokens would take minutes to count cold. The
 * copy floors are measured while the manager still holds the session (the same heap as the
 * calls: a fresh large array costs more in a large heap than in an empty one).
 */
async function appendedAt(size: number, calls: number, modelTurn = true): Promise<AppendedTimes> {
  const history = sessionOf(size, 3, 200);
  const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 2_000_000_000 });
  await manager.compact('scale', history);
  const grown = [...history];
  const times: number[] = [];
  for (let i = 0; i < calls; i++) {
    grown.push(newMessage());
    const t = performance.now();
    await manager.preflight('scale', grown);
    times.push(performance.now() - t);
    // The model call between two preflights: at least one turn of the event loop.
    if (modelTurn) await new Promise((resolve) => setImmediate(resolve));
  }
  const copies = modelTurn
    ? { copy: 0, mapped: 0 }
    : { copy: copyFloor(new Array<unknown>(grown.length).fill({})), mapped: mappedCopy(grown) };
  await manager.shutdown();
  return { call: median(times), ...copies };
}

/** Issue 38 point 2: warm appended at 1k / 16k / 50k / 100k messages beside the tokenize-only floor. */
async function scaleSection(): Promise<void> {
  const sizes = quick ? [1_000, 16_000] : [1_000, 16_000, 50_000, 100_000];
  const tokenize = tokenizeFloor(200);
  await appendedAt(1_000, 60); // compiles the hot paths first
  console.log('Warm appended by history size (same objects, one message appended per call, median):');
  let base: number | undefined;
  for (const size of sizes) {
    const appended = (await appendedAt(size, 120)).call;
    // Back to back, each call still returns a fresh array the caller owns: its copy is a floor.
    // Issue 47 point 5: that floor is n element writes (no loop turn lets result-copy.ts make it
    // ahead); the contract (test/core/long-history-warm.test.ts: not the caller's array, the
    // caller may push, replace, truncate) leaves no O(1) result. Past 16,384 elements V8 puts
    // the array in its large-object space, fresh pages per array: at 100k messages the copy
    // alone is over a thousand times the tokenize floor here, and even into memory already
    // mapped (no allocation) about 20x; the rest of the call is about what it is at 1k.
    const { call: backToBack, copy, mapped } = await appendedAt(size, 120, false);
    base ??= appended;
    const ratio = appended / base;
    const beyond = Math.max(0, backToBack - copy);
    console.log(
      `  ${pad(size.toLocaleString('en'), 8)} messages: appended ${pad(ms(appended), 9)}  tokenize-only floor ${ms(tokenize)} (${(appended / tokenize).toFixed(1)}x)  vs 1k ${ratio.toFixed(2)}x  target <= 1.5x (${ratio <= 1.5 ? 'met' : 'MISSED'})  back to back, no turn between calls: ${ms(backToBack)} (${(backToBack / tokenize).toFixed(1)}x the tokenize floor, target <= 2x: ${backToBack <= 2 * tokenize ? 'met' : 'MISSED'}; a fresh array of the result's length, same heap: ${ms(copy)} = ${(copy / tokenize).toFixed(0)}x the tokenize floor by itself, ${(backToBack / copy).toFixed(2)}x; into memory already mapped ${ms(mapped)} = ${(mapped / tokenize).toFixed(0)}x; beyond the fresh array ${ms(beyond)} = ${(beyond / tokenize).toFixed(1)}x the floor)`,
    );
  }
}

export async function runSpeedBench(): Promise<void> {
  if (runs('scale')) await scaleSection();
  if (runs('warm')) await warmSection();
  if (runs('first')) await firstSection();
  if (runs('trigger')) await triggerSection();
  if (runs('background')) await backgroundSection();
  if (!quick)
    console.log(
      '(Sizes are as stated: 50k messages at ~340 tokens and the 1M window run in full on this machine.)',
    );
}

async function warmSection(): Promise<void> {
  const sizes = quick ? [250, 1_000, 4_000] : [250, 1_000, 4_000, 16_000, 50_000];
  console.log('Warm preflight, no trigger, median per call (~340-token messages, gpt-4o tokenizer):');
  const tokenize = tokenizeFloor(200);
  console.log(
    `  ${'messages'.padStart(8)} ${'tokens'.padStart(11)} ${'appended'.padStart(10)} ${'same objs'.padStart(10)} ${'SDK rebuilt'.padStart(11)} ${'/app'.padStart(6)} ${'JSON trip'.padStart(10)} ${'/app'.padStart(6)} ${'app. cold'.padStart(10)} ${'trip/cold'.padStart(9)}  targets: appended <= ${ms(0.1 + tokenize)} (0.1 ms + ${ms(tokenize)} tokenizing), rebuilt <= 2x appended (SDK / JSON trip)`,
  );
  await warmPaths(250, 60); // compiles the hot paths first
  for (const size of sizes) {
    const row = await warmPaths(size, size >= 16_000 ? 60 : 120);
    const sdkRatio = row.rebuiltSdk / row.appended;
    const ratio = row.rebuilt / row.appended;
    const appendedOk = row.appended <= 0.1 + tokenize;
    const verdict = (ok: boolean) => (ok ? 'met' : 'MISSED');
    console.log(
      `  ${pad(row.size.toLocaleString('en'), 8)} ${pad(row.tokens.toLocaleString('en'), 11)} ${pad(ms(row.appended), 10)} ${pad(ms(row.same), 10)} ${pad(ms(row.rebuiltSdk), 11)} ${pad(`${sdkRatio.toFixed(2)}x`, 6)} ${pad(ms(row.rebuilt), 10)} ${pad(`${ratio.toFixed(2)}x`, 6)} ${pad(ms(row.cold), 10)} ${pad(`${(row.rebuilt / row.cold).toFixed(2)}x`, 9)}  ${verdict(appendedOk)} / ${verdict(sdkRatio <= 2)} / ${verdict(ratio <= 2)}  (output array copy ${ms(row.copy)}; first call ${ms(row.first)})`,
    );
  }
}

async function firstSection(): Promise<void> {
  const early = await firstCalls(1_000);
  const earlyRatio = early.early / early.steady;
  console.log(
    `First calls of a session at 1k messages (tokenizer already loaded in this process): first ${ms(early.first)}, calls 2-50 median ${ms(early.early)}, steady state ${ms(early.steady)}: ${earlyRatio.toFixed(2)}x  target <= 1.5x (${earlyRatio <= 1.5 ? 'met' : 'MISSED'})`,
  );
}

async function triggerSection(): Promise<void> {
  const windows = process.env.SPEED_WINDOWS
    ? process.env.SPEED_WINDOWS.split(',').map(Number)
    : quick
      ? [32_000, 128_000]
      : [32_000, 128_000, 1_000_000];
  console.log('Trigger, warm session twice the window, built-in summarizer (one triggering call):');
  for (const window of windows) {
    const row = await triggerAt(window);
    console.log(
      `  window ${pad(window.toLocaleString('en'), 9)}: ${row.messages.toLocaleString('en')} messages, ${row.tokens.toLocaleString('en')} tokens -> ${row.after.toLocaleString('en')}: ${ms(row.triggerMs)}; recounting the ${row.summarized.toLocaleString('en')} summarized messages (paid on top before issue 28) ${ms(row.recountMs)}`,
    );
  }
}

async function backgroundSection(): Promise<void> {
  const sync = await triggersOf(false);
  const bg = await triggersOf(true);
  const q = (values: number[], p: number) =>
    values.length === 0
      ? Number.NaN
      : [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(p * values.length))]!;
  console.log(
    `Background vs synchronous at the trigger (32k window, 400 ms LLM summarizer, ${sync.blocking.length} / ${bg.blocking.length} compactions): synchronous median ${ms(median(sync.blocking))} max ${ms(Math.max(...sync.blocking))}; background median ${ms(median(bg.blocking))} max ${ms(Math.max(...bg.blocking))}  target: background <= synchronous (${median(bg.blocking) <= median(sync.blocking) && q(bg.blocking, 0.9) <= q(sync.blocking, 0.9) * 1.1 ? 'met' : 'MISSED'}); requests over the window: ${sync.over + bg.over}`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await runSpeedBench();
