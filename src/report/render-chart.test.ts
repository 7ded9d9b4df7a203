import { describe, expect, it } from 'vitest';
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
});
