/** The rows bench/proxy.ts prints (`npm run bench`, `npx tsx bench/proxy.ts`). */

import { REST_DELAY_MS } from './proxy-child.js';
import type { ProxyBenchFigures, SlowCall, Spread } from './proxy-figures.js';

/** Issue 49 point 5: what the proxy may add per request at a 128k history (p99). */
export const TARGET_P99_MS = 5;

const verdict = (met: boolean) => (met ? 'met' : 'MISSED');

/** Prints the bench's rows. */
export function printProxyBench(f: ProxyBenchFigures): void {
  const ms = (value: number) => `${value.toFixed(2)} ms`;
  const both = (s: Spread) => `p50 ${ms(s.p50)}  p99 ${ms(s.p99)}`;
  const all3 = (s: Spread) => `p50 ${ms(s.p50)}  p95 ${ms(s.p95)}  p99 ${ms(s.p99)}`;
  const load = (values: number[]) => values.map((value) => value.toFixed(2)).join(', ');
  console.log(`  load average ${load(f.load)} before, ${load(f.loadAfter)} after (2 cores)`);
  if (process.env.PROXY_BENCH_THREAD_CPU === '1')
    console.log("  (CPU in the spans: the proxy's main thread only, GC helper threads not counted)");
  for (const s of f.sizes) {
    console.log(
      `  history ${s.historyTokens} tokens, ${s.messages} messages, ${(s.bodyBytes / 1024).toFixed(0)} KB; ${s.calls} pairs (+1 message each), warm, below the trigger`,
    );
    console.log(`    straight to the upstream                ${both(s.direct)}`);
    const target =
      s === f.sizes.at(-1)
        ? `   (target p99 <= ${TARGET_P99_MS} ms: ${verdict(s.added.p99 <= TARGET_P99_MS)})`
        : '';
    console.log(`    scheduling during the pairs: ${s.scheduling}`);
    console.log(`    added by the proxy (pairs)              ${all3(s.added)}${target}`);
    console.log(`    added by a bare relay (read whole, resend) ${all3(s.relayAdded)}`);
    console.log(`    the proxy over the relay                ${all3(s.overRelay)}`);
    const less = (a: Spread, b: Spread) =>
      `p50 ${ms(a.p50 - b.p50)}  p95 ${ms(a.p95 - b.p95)}  p99 ${ms(a.p99 - b.p99)}`;
    console.log(
      `    quantile less straight's quantile: through the proxy ${less(s.through, s.direct)}; through the relay ${less(s.relayed, s.direct)}`,
    );
    const parts = s.addedParts;
    console.log(
      `      by leg: to the upstream's first byte ${both(parts.toUpstream)}; the upstream's read ${both(parts.upstreamRead)}; its last byte to the client's end ${both(parts.back)}; client's write ${both(parts.written)}`,
    );
    console.log(
      `      through: client -> proxy handler ${both(parts.toHandler)}; proxy write -> upstream's first byte ${both(parts.proxyToUpstream)}; direct: client -> upstream's first byte ${both(parts.directToUpstream)}`,
    );
    console.log(`    the proxy process's CPU per request     ${ms(s.cpu)} (mean)`);
    console.log(
      `    the proxy's own: last byte in -> first byte upstream ${both(s.forward)} (CPU ${both(s.forwardCpu)}); upstream head -> first byte to the client ${both(s.back)}`,
    );
    const last = s === f.sizes.at(-1);
    const against = (p: Spread) =>
      last ? ` (p99 <= ${TARGET_P99_MS} ms: ${verdict(p.p99 <= TARGET_P99_MS)})` : '';
    console.log(
      `      its CPU: all calls p99 ${ms(s.forwardCpu.p99)}${against(s.forwardCpu)}; the ${s.calls + s.streamCalls - s.compactions} not compacted p99 ${ms(s.forwardCpuNoCompaction.p99)}${against(s.forwardCpuNoCompaction)} (${s.compactions} compacted)`,
    );
    console.log(
      `      ${s.gcCalls} calls with a main-thread GC pause in the span (${both(s.gcMs)} of pause); the rest, not compacted: CPU ${both(s.forwardCpuQuiet)}${against(s.forwardCpuQuiet)}`,
    );
    const call = (c: SlowCall) =>
      `CPU ${c.cpu.toFixed(1)} (wall ${c.wall.toFixed(1)}: parse ${c.parse.toFixed(1)}${c.reused === 0 ? ' whole body' : ''}, compact ${c.compact.toFixed(1)}${c.compacted ? ' compacted' : ''}, GC pause ${c.gcPause.toFixed(1)})`;
    console.log(`      the top 1% by CPU: ${s.slowest.map(call).join('; ')}`);
    console.log(
      `      of which parse ${both(s.parse)} (${s.reused} messages reused, median); compact ${both(s.compact)}`,
    );
    console.log(`      reading the body (handler -> last byte) ${both(s.read)}`);
    if (s.floor) console.log(`    floor: JSON.parse of the body (proxy's process)  ${both(s.floor)}`);
    if (s.fresh)
      console.log(
        `    fresh (${s.fresh.calls} conversations new to the proxy, parsed whole): added ${both(s.fresh.added)}; forward CPU ${both(s.fresh.forwardCpu)}; parse ${both(s.fresh.parse)}; compact (the manager's first count) ${both(s.fresh.compact)}`,
      );
    if (s.firstByteDirect && s.firstByteAdded) {
      const met = s.firstByteAdded.p99 <= TARGET_P99_MS;
      console.log(
        `    stream (${s.streamCalls} pairs, the rest ${REST_DELAY_MS} ms after the first event): first byte straight ${both(s.firstByteDirect)}`,
      );
      console.log(
        `      added by the proxy ${all3(s.firstByteAdded)} (p99 <= ${TARGET_P99_MS} ms: ${verdict(met)}); first byte through the proxy ahead of the rest in ${s.firstBeforeRest} of ${s.streamCalls} pairs`,
      );
      if (s.firstByteRelayAdded) console.log(`      added by the bare relay ${all3(s.firstByteRelayAdded)}`);
    }
  }
}
