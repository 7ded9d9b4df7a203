import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { AnyCompactEvent, EventExporter } from '../events/events.js';
import { CompactManager } from '../manager/compact-manager.js';

let warnings: string[];
beforeEach(() => {
  warnings = [];
  vi.spyOn(console, 'warn').mockImplementation((...args: unknown[]) => {
    warnings.push(args.map(String).join(' '));
  });
});
afterEach(() => {
  vi.restoreAllMocks();
});

function collector(): EventExporter & { events: AnyCompactEvent[] } {
  const events: AnyCompactEvent[] = [];
  return {
    name: 'collector',
    events,
    async export(batch) {
      events.push(...batch);
    },
  };
}

const history = [
  { role: 'user', content: 'hello' },
  { role: 'assistant', content: 'hi' },
];

describe('unknown model warning', () => {
  it('a typo gets one console warning and one event per manager, naming the window and the closest name', async () => {
    const exporter = collector();
    const manager = new CompactManager({ model: 'gtp-4o', exporters: [exporter] });
    const heard: AnyCompactEvent[] = [];
    manager.on('compact.unknown_model', (event) => heard.push(event as AnyCompactEvent));
    await manager.preflight('s1', history);
    await manager.preflight('s2', history);
    await manager.flush();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('"gtp-4o"');
    expect(warnings[0]).toContain('128,000-token');
    expect(warnings[0]).toContain('"gpt-4o"');
    expect(warnings[0]).toContain('maxContextTokens');
    expect(heard).toHaveLength(1);
    expect(heard[0]!.properties).toMatchObject({
      model: 'gtp-4o',
      assumedContextWindow: 128_000,
      closest: 'gpt-4o',
    });
    expect(exporter.events.filter((e) => e.name === 'compact.unknown_model')).toHaveLength(1);
    expect(manager.maxContextTokens).toBe(128_000);
    await manager.shutdown();
    new CompactManager({ model: 'gtp-4o' });
    expect(warnings).toHaveLength(2);
  });

  it('maxContextTokens silences it; known names (local models included) never warn', async () => {
    const exporter = collector();
    const given = new CompactManager({
      model: 'my-finetune',
      maxContextTokens: 8_000,
      exporters: [exporter],
    });
    const local = new CompactManager({ model: 'llama3.1:8b' });
    const gemini = new CompactManager({ model: 'gemini-2.5-pro' });
    await given.preflight('s', history);
    await given.flush();
    expect(warnings).toEqual([]);
    expect(exporter.events.some((e) => e.name === 'compact.unknown_model')).toBe(false);
    expect(local.maxContextTokens).toBe(131_072);
    expect(gemini.maxContextTokens).toBe(1_048_576);
  });

  it('suggests only a close name: my-llm gets no o1-pro, the event an empty closest', async () => {
    const exporter = collector();
    const manager = new CompactManager({ model: 'my-llm', exporters: [exporter] });
    await manager.preflight('s1', history);
    await manager.flush();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('unknown model "my-llm"');
    expect(warnings[0]).not.toContain('closest known model');
    expect(warnings[0]).toContain('Pass maxContextTokens');
    const event = exporter.events.find((e) => e.name === 'compact.unknown_model');
    expect(event?.properties).toMatchObject({ model: 'my-llm', closest: '' });
  });
});
