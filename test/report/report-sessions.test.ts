/**
 * A trace of several sessions (one exporter shared by a server's sessions): each session gets
 * its own chart (their calls are not one line) and its own prompt-cache figures (one session's
 * running hit share is not the trace's).
 */
import { describe, expect, it } from 'vitest';
import { callPoints } from '../../src/cli/replay/call-points.js';
import type { AnyCompactEvent } from '../../src/core/events/events.js';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { renderReport } from '../../src/report/render-report.js';
import { buildTraceModel } from '../../src/report/trace-model.js';
import { syntheticSession } from '../../src/testing/synthetic-session.js';

async function twoSessionTrace(): Promise<AnyCompactEvent[]> {
  const events: AnyCompactEvent[] = [];
  const manager = new CompactManager({
    model: 'gpt-4o',
    maxContextTokens: 6_000,
    exporters: [
      {
        name: 'collect',
        export: async (batch) => {
          events.push(...batch);
        },
      },
    ],
  });
  const a = syntheticSession({ turns: 16, seed: 3 });
  const b = syntheticSession({ turns: 16, seed: 4 });
  const pointsA = callPoints(a);
  const pointsB = callPoints(b);
  for (let i = 0; i < Math.max(pointsA.length, pointsB.length); i++) {
    if (i < pointsA.length) {
      await manager.compact('alpha', a.slice(0, pointsA[i]));
      // alpha reads nearly everything from the cache, beta nothing.
      manager.recordUsage('alpha', { inputTokens: 1_000, cachedInputTokens: 900 });
    }
    if (i < pointsB.length) {
      await manager.compact('beta', b.slice(0, pointsB[i]));
      manager.recordUsage('beta', { inputTokens: 1_000, cachedInputTokens: 0 });
    }
  }
  await manager.shutdown();
  return events;
}

describe('a report of a trace with two sessions', () => {
  it('draws a chart per session and gives each its own cache figures', async () => {
    const events = await twoSessionTrace();
    const trace = buildTraceModel(events);
    expect(trace.sessionIds).toEqual(['alpha', 'beta']);
    expect(trace.cost).toBeUndefined();
    const costs = Object.fromEntries(trace.sessionCosts.map((cost) => [cost.sessionId, cost]));
    expect(costs.alpha!.hitShare).toBeCloseTo(0.9, 5);
    expect(costs.beta!.hitShare).toBe(0);
    expect(costs.alpha!.requests + costs.beta!.requests).toBe(trace.calls.length);

    const html = renderReport(trace, { source: 'two.jsonl' });
    const charts = [...html.matchAll(/<svg class="chart"[^>]*aria-label="([^"]*)"[\s\S]*?<\/svg>/g)];
    expect(charts.map((match) => match[1])).toEqual([
      'Context tokens per call, session alpha',
      'Context tokens per call, session beta',
    ]);
    // Each chart's markers are its own session's compactions, every compaction drawn once.
    const markersOf = (svg: string) => [...svg.matchAll(/data-compaction="(\d+)"/g)].map((m) => Number(m[1]));
    for (const [i, sessionId] of ['alpha', 'beta'].entries()) {
      const own = trace.compactions.filter((c) => c.call.sessionId === sessionId).map((c) => c.number);
      expect(own.length).toBeGreaterThan(0);
      expect(markersOf(charts[i]![0])).toEqual(own);
    }
    expect(html).toContain('prompt cache (session alpha): 90.0% hit over');
    expect(html).toContain('prompt cache (session beta): 0.0% hit over');
    expect(html).not.toMatch(/<li>prompt cache: /);
  });
});
