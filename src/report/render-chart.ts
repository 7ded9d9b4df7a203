import { escapeHtml } from './html-escape.js';
import type { TraceCall, TraceModel } from './trace-model.js';

const WIDTH = 960;
const HEIGHT = 320;
const PAD = { left: 72, right: 110, top: 16, bottom: 40 } as const;

/** Most ticks of an axis. */
const MAX_TICKS = 12;

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

/** A "nice" step for about `count` ticks over `span`. */
function tickStep(span: number, count: number): number {
  const raw = span / Math.max(1, count);
  const power = 10 ** Math.floor(Math.log10(Math.max(raw, 1)));
  const unit = raw / power;
  return (unit <= 1 ? 1 : unit <= 2 ? 2 : unit <= 5 ? 5 : 10) * power;
}

/**
 * The call axis's ticks: the first call, then the multiples of a nice step up to the last,
 * counted from the first multiple after the first call (calls numbered from 10^9 take ten
 * steps, not 10^9) and capped.
 */
function callTicks(first: number, last: number): number[] {
  const step = tickStep(last - first + 1, 10);
  const ticks = [first];
  for (let k = Math.floor(first / step) + 1, n = 0; k * step <= last && n <= MAX_TICKS; k++, n++)
    if (k * step > first) ticks.push(k * step);
  return ticks;
}

/** The last value a field takes over the calls (the window and lines rarely change). */
function lastOf(
  calls: readonly TraceCall[],
  pick: (call: TraceCall) => number | undefined,
): number | undefined {
  for (let i = calls.length - 1; i >= 0; i--) {
    const value = pick(calls[i]!);
    if (value !== undefined && Number.isFinite(value)) return value;
  }
  return undefined;
}

/**
 * The sawtooth: context tokens per call as an inline SVG, with the window, trigger and
 * target as horizontal lines and one marker (`circle.compaction-marker`) per compaction,
 * linking to its card.
 */
export function renderChart(trace: TraceModel, label = 'Context tokens per call'): string {
  const { calls, compactions } = trace;
  if (calls.length === 0) return '<p class="empty">No calls in this trace.</p>';
  const window = lastOf(calls, (call) => call.maxTokens);
  const trigger = lastOf(calls, (call) => call.triggerTokens);
  const target = lastOf(calls, (call) => call.targetTokens);
  // Loops, not Math.max(...spread): a trace may hold more calls than a call takes arguments.
  let top = window ?? 0;
  let first = Number.POSITIVE_INFINITY;
  let last = Number.NEGATIVE_INFINITY;
  for (const call of calls) {
    top = Math.max(top, call.tokensSent);
    // Calls are placed by their number (an archive's trace holds compacting calls only: 18, 24, 36).
    first = Math.min(first, call.index);
    last = Math.max(last, call.index);
  }
  // Finite: a trace's figures may be anything up to Number.MAX_VALUE.
  top = Math.min(top * 1.05, Number.MAX_VALUE) || 1;
  const plotWidth = WIDTH - PAD.left - PAD.right;
  const plotHeight = HEIGHT - PAD.top - PAD.bottom;
  const x = (index: number) =>
    PAD.left + (last === first ? plotWidth / 2 : ((index - first) / (last - first)) * plotWidth);
  const y = (tokens: number) => PAD.top + plotHeight - (tokens / top) * plotHeight;
  const parts: string[] = [];
  const yStep = tickStep(top, 5);
  // Ticks are counted (and capped), never stepped until a value: a step lost in a huge value's
  // precision would never end the loop.
  for (let k = 0; k * yStep <= top && k <= MAX_TICKS; k++) {
    const value = k * yStep;
    parts.push(
      `<line class="grid" x1="${PAD.left}" x2="${PAD.left + plotWidth}" y1="${y(value).toFixed(1)}" y2="${y(value).toFixed(1)}"/>`,
      `<text class="tick" x="${PAD.left - 6}" y="${(y(value) + 4).toFixed(1)}" text-anchor="end">${fmt(value)}</text>`,
    );
  }
  for (const index of callTicks(first, last)) {
    parts.push(
      `<text class="tick" x="${x(index).toFixed(1)}" y="${PAD.top + plotHeight + 16}" text-anchor="middle">${escapeHtml(index)}</text>`,
    );
  }
  parts.push(
    `<text class="axis-label" x="${PAD.left + plotWidth / 2}" y="${HEIGHT - 4}" text-anchor="middle">call</text>`,
  );
  const line = (value: number | undefined, name: string, label: string) => {
    if (value === undefined) return;
    const at = y(value).toFixed(1);
    parts.push(
      `<line class="limit ${name}" data-line="${name}" x1="${PAD.left}" x2="${PAD.left + plotWidth}" y1="${at}" y2="${at}"/>`,
      `<text class="limit-label ${name}" x="${PAD.left + plotWidth + 6}" y="${(Number(at) + 4).toFixed(1)}">${escapeHtml(label)} ${fmt(value)}</text>`,
    );
  };
  line(window, 'window', 'window');
  line(trigger, 'trigger', 'trigger');
  line(target, 'target', 'target');
  // Each point is what the call sent: a compacting call's count before never reached the model
  // (it may lie over the window); its marker's tooltip and card give it.
  const points = calls.map((call) => `${x(call.index).toFixed(1)},${y(call.tokensSent).toFixed(1)}`);
  parts.push(`<polyline class="tokens" points="${points.join(' ')}"/>`);
  // Where the provider's usage is known: a dot per call with its cache hit and billed input.
  for (const call of calls) {
    if (!call.usage) continue;
    parts.push(
      `<circle class="usage-point" data-call="${escapeHtml(call.index)}" cx="${x(call.index).toFixed(1)}" cy="${y(call.tokensSent).toFixed(1)}" r="2"><title>${escapeHtml(
        `call ${call.index}: ${fmt(call.usage.inputTokens)} input tokens, ${(100 * call.usage.hitShare).toFixed(0)}% from the cache, billed as ${fmt(Math.round(call.usage.billedInputEquivalent))}`,
      )}</title></circle>`,
    );
  }
  for (const compaction of compactions) {
    const { call } = compaction;
    parts.push(
      `<a href="#compaction-${escapeHtml(compaction.number)}" aria-label="${escapeHtml(`compaction ${compaction.number} at call ${call.index}`)}"><circle class="compaction-marker${compaction.errors.length > 0 ? ' has-error' : ''}" data-compaction="${escapeHtml(compaction.number)}" data-call="${escapeHtml(call.index)}" cx="${x(call.index).toFixed(1)}" cy="${y(compaction.tokensAfter).toFixed(1)}" r="5"><title>${escapeHtml(
        `#${compaction.number} at call ${call.index}: ${fmt(compaction.tokensBefore)} -> ${fmt(compaction.tokensAfter)} tokens`,
      )}</title></circle></a>`,
    );
  }
  return `<svg class="chart" role="group" aria-label="${escapeHtml(label)}" viewBox="0 0 ${WIDTH} ${HEIGHT}" width="${WIDTH}" height="${HEIGHT}" xmlns="http://www.w3.org/2000/svg">${parts.join('')}</svg>`;
}
