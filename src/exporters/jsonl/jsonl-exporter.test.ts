import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CompactManager } from '../../core/manager/compact-manager.js';
import { createRedactor } from '../../core/redaction/redactor.js';
import { describeExporterConformance } from '../../testing/exporter-conformance.js';
import { sampleCompactionEvents } from '../../testing/sample-events.js';
import { syntheticSession } from '../../testing/synthetic-session.js';
import { hashSessionId } from '../event-utils.js';
import { jsonlExporter } from './jsonl-exporter.js';

let dir: string;
let counter = 0;
const fresh = () => join(dir, `case-${++counter}`, 'trace.jsonl');

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agent-compaction-jsonl-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const lines = async (path: string) =>
  (await readFile(path, 'utf8'))
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line));

describeExporterConformance({
  name: 'jsonl',
  async create() {
    const path = fresh();
    return {
      exporter: jsonlExporter({ path }),
      received: () => readFile(path, 'utf8').catch(() => ''),
      close: async () => {},
    };
  },
  async createFailing() {
    const blocker = join(dir, `blocker-${++counter}`);
    await writeFile(blocker, 'a file where a folder should be');
    return {
      exporter: jsonlExporter({ path: join(blocker, 'trace.jsonl') }),
      close: async () => {},
    };
  },
});

describe('jsonlExporter', () => {
  it('writes one event per line, the event object itself, in order across batches', async () => {
    const path = fresh();
    const exporter = jsonlExporter({ path });
    const first = sampleCompactionEvents({ sessionId: 'sess-one' });
    const second = sampleCompactionEvents({ sessionId: 'sess-two' });
    void exporter.export(first);
    await exporter.export(second);
    await exporter.shutdown?.();
    const written = await lines(path);
    expect(written).toHaveLength(first.length + second.length);
    expect(written.map((event) => event.spanId)).toEqual([...first, ...second].map((event) => event.spanId));
    expect(written[0]).toEqual(JSON.parse(JSON.stringify(first[0])));
  });

  it('applies an extra redactor and hashes session ids when asked', async () => {
    const path = fresh();
    const exporter = jsonlExporter({
      path,
      redact: createRedactor({}),
      hashSessionIds: true,
      hashKey: 'jsonl-test-key',
    });
    const events = sampleCompactionEvents({
      sessionId: 'customer-secret-session',
      summary: 'Deploy with api_key=sk-proj-abcdefghijklmnopqrstuvwxyz0123456789 tonight.',
    });
    await exporter.export(events);
    await exporter.forceFlush?.();
    const text = await readFile(path, 'utf8');
    expect(text).not.toContain('sk-proj-abcdefghijklmnopqrstuvwxyz0123456789');
    expect(text).not.toContain('customer-secret-session');
    expect(text).toContain(hashSessionId('customer-secret-session', 'jsonl-test-key'));
  });

  it('rotates by size, keeping maxFiles older files, each line whole', async () => {
    const path = fresh();
    const exporter = jsonlExporter({ path, maxBytes: 4_000, maxFiles: 2 });
    const batches = Array.from({ length: 12 }, (_, i) => sampleCompactionEvents({ sessionId: `rot-${i}` }));
    for (const batch of batches) await exporter.export(batch);
    await exporter.shutdown?.();
    const names = (await readdir(join(path, '..'))).sort();
    expect(names).toEqual(['trace.jsonl', 'trace.jsonl.1', 'trace.jsonl.2']);
    for (const name of names) {
      const text = await readFile(join(path, '..', name), 'utf8');
      const size = Buffer.byteLength(text);
      // Every file but a lone oversized line stays within the limit.
      if (text.split('\n').length > 2) expect(size).toBeLessThanOrEqual(4_000);
      for (const line of text.split('\n').filter(Boolean)) expect(() => JSON.parse(line)).not.toThrow();
    }
    // The newest events are in the current file, the oldest kept ones in .2; the first batches are gone.
    const current = await lines(path);
    expect(current.at(-1)?.sessionId).toBe('rot-11');
    const all = [...(await lines(`${path}.2`)), ...(await lines(`${path}.1`)), ...current];
    expect(all.some((event) => event.sessionId === 'rot-0')).toBe(false);
    expect(all.map((event) => event.sessionId)).toEqual(
      [...all.map((event) => event.sessionId)].sort((a, b) => Number(a.slice(4)) - Number(b.slice(4))),
    );
  });

  it('appends to an existing file and counts its size for rotation', async () => {
    const path = fresh();
    await jsonlExporter({ path }).export(sampleCompactionEvents({ sessionId: 'before' }));
    const exporter = jsonlExporter({ path, maxBytes: 1, maxFiles: 1 });
    await exporter.export(sampleCompactionEvents({ sessionId: 'after' }).slice(0, 1));
    await exporter.forceFlush?.();
    expect((await lines(`${path}.1`)).every((event) => event.sessionId === 'before')).toBe(true);
    expect((await lines(path)).map((event) => event.sessionId)).toEqual(['after']);
  });

  it('writes to a stream', async () => {
    let out = '';
    const exporter = jsonlExporter({ stream: { write: (chunk: string) => (out += chunk) } });
    await exporter.export(sampleCompactionEvents({ sessionId: 'to-stream' }));
    expect(out.endsWith('\n')).toBe(true);
    expect(
      out
        .split('\n')
        .filter(Boolean)
        .every((line) => JSON.parse(line).sessionId === 'to-stream'),
    ).toBe(true);
  });

  it('rejects bad options in the factory', () => {
    expect(() => jsonlExporter({})).toThrow(/exactly one/);
    expect(() => jsonlExporter({ path: 'a', stream: process.stdout })).toThrow(/exactly one/);
    expect(() => jsonlExporter({ path: 'a', maxBytes: -1 })).toThrow(/maxBytes/);
    expect(() => jsonlExporter({ path: 'a', maxFiles: 1.5 })).toThrow(/maxFiles/);
  });

  it('records a real manager run: an estimate and a decision per call, compaction events when it compacts', async () => {
    const path = fresh();
    const manager = new CompactManager({ maxContextTokens: 6_000, exporters: [jsonlExporter({ path })] });
    const session = syntheticSession({ turns: 30, seed: 7 });
    await manager.compact('real', session.slice(0, 20));
    await manager.compact('real', session);
    await manager.shutdown();
    const events = await lines(path);
    const names = events.map((event) => event.name);
    expect(names.filter((name) => name === 'compact.token_estimate')).toHaveLength(2);
    expect(names.filter((name) => name === 'compact.trigger_decision')).toHaveLength(2);
    expect(names).toContain('compact.reduction');
  });
});
