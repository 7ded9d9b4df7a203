import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ensureBuilt, ROOT } from '../../test/support/ensure-built.js';
import type { AnyCompactEvent } from '../core/events/events.js';
import { sampleCompactionEvents } from '../testing/sample-events.js';
import { renderChart } from './render-chart.js';
import { buildTraceModel } from './trace-model.js';

/** The sample compaction with the figures of a failed LLM summary: 33,301 counted, 27,193 sent, window 32,000. */
function overWindowCompaction(): AnyCompactEvent[] {
  const figures: Record<string, Record<string, unknown>> = {
    'compact.token_estimate': { tEst: 33_301, maxTokens: 32_000 },
    'compact.trigger_decision': { tEst: 33_301, triggerTokens: 27_200, budget: 30_000, targetTokens: 19_200 },
    'compact.pruned_messages': { tokensBefore: 33_301, tokensAfter: 27_193 },
  };
  return sampleCompactionEvents({ sessionId: 's', withError: true }).map(
    (event) => ({ ...event, properties: { ...event.properties, ...figures[event.name] } }) as AnyCompactEvent,
  );
}

describe('renderChart', () => {
  it('plots what each call sent: no point over the window line when what was sent fits', () => {
    const untriggered = sampleCompactionEvents({ sessionId: 's' })
      .filter((event) => event.name === 'compact.token_estimate' || event.name === 'compact.trigger_decision')
      .map((event) => {
        const properties: Record<string, unknown> = { ...event.properties, tEst: 26_000 };
        properties[event.name === 'compact.token_estimate' ? 'maxTokens' : 'triggered'] =
          event.name === 'compact.token_estimate' ? 32_000 : false;
        return { ...event, operationId: 'op-before', properties } as AnyCompactEvent;
      });
    const svg = renderChart(buildTraceModel([...untriggered, ...overWindowCompaction()]));
    const windowY = Number(svg.match(/data-line="window"[^>]*y1="([\d.]+)"/)?.[1]);
    expect(windowY).toBeGreaterThan(0);
    const points = svg.match(/class="tokens" points="([^"]+)"/)?.[1]?.split(' ') ?? [];
    expect(points).toHaveLength(2);
    // SVG y grows downwards: a point over the line has a smaller y.
    for (const point of points) expect(Number(point.split(',')[1])).toBeGreaterThan(windowY);
    const markerY = Number(svg.match(/class="compaction-marker[^"]*"[^>]*cy="([\d.]+)"/)?.[1]);
    expect(markerY).toBeGreaterThan(windowY);
    // The count before is still told, in the marker's tooltip.
    expect(svg).toContain('33,301 -&gt; 27,193 tokens');
  });

  it('ends for any finite figures: calls numbered from 2^53, tokens near Number.MAX_VALUE', () => {
    // The axes stepped from 0 (or the step) to the last value: with calls numbered from 2^53
    // (or tokens whose 5% headroom overflows to Infinity) the step was lost in the value's
    // precision and the loop never ended. Run in a child, so the old code fails (killed)
    // instead of hanging the test worker; the kill is a guard, not a measure.
    ensureBuilt();
    const module = pathToFileURL(join(ROOT, 'dist/report/render-chart.js')).href;
    const script = `
      const { renderChart } = await import(${JSON.stringify(module)});
      const call = (index, tokens) => ({ index, operationId: 'op', sessionId: 's', tokens, tokensSent: tokens, triggered: false });
      const trace = (calls) => ({ sessionIds: ['s'], calls, compactions: [], otherErrors: [], eventCount: 1, notes: [], sessionCosts: [] });
      const svgs = [
        renderChart(trace([call(2 ** 53, 1000)])),
        renderChart(trace([call(1e300, 1000), call(1e300 + 1e285, 2000)])),
        renderChart(trace([call(1, 1.7e308), call(2, 1000)])),
      ];
      process.stdout.write(JSON.stringify(svgs.map((svg) => ({ nan: svg.includes('NaN'), ticks: (svg.match(/class="tick"/g) ?? []).length }))));
    `;
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(child.signal).toBeNull();
    const charts = JSON.parse(child.stdout) as { nan: boolean; ticks: number }[];
    expect(charts).toHaveLength(3);
    for (const chart of charts) {
      expect(chart.nan).toBe(false);
      expect(chart.ticks).toBeGreaterThan(1);
      expect(chart.ticks).toBeLessThanOrEqual(30);
    }
  });
});
