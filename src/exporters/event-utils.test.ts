import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { safeSessionSegment } from '../storage/session-path.js';
import { type AriadneTestServer, startAriadneTestServer } from '../testing/ariadne-test-server.js';
import { type OtlpTestServer, startOtlpTestServer } from '../testing/otlp-test-server.js';
import { sampleCompactionEvents } from '../testing/sample-events.js';
import { ariadneExporter } from './ariadne/ariadne-exporter.js';
import { consoleExporter } from './console/console-exporter.js';
import { hashSessionId, prepareEvent, SESSION_HASH_KEY_ENV } from './event-utils.js';
import { otlpExporter } from './otel/otlp-exporter.js';

/** A token-shaped session id: exactly what must not appear verbatim when hashing is on. */
const SESSION = 'tok_9Fq2LmX7vB3nR8sW';

function events() {
  // The default trace id is the session id; the archive path names it too.
  const sample = sampleCompactionEvents({ sessionId: SESSION, traceId: SESSION });
  return sample.map((event) =>
    event.name === 'compact.archival'
      ? {
          ...event,
          properties: { ...event.properties, path: `.compact/archive/${SESSION}/summary-001.json` },
        }
      : event,
  ) as typeof sample;
}

describe('hashSessionId', () => {
  it('is stable, 128 bits and not the id', () => {
    const hashed = hashSessionId(SESSION, 'k1');
    expect(hashed).toMatch(/^sid-[0-9a-f]{32}$/);
    expect(hashSessionId(SESSION, 'k1')).toBe(hashed);
    expect(hashSessionId(`${SESSION}x`, 'k1')).not.toBe(hashed);
  });

  it('is keyed: another key gives another value, and the env key is the default', () => {
    const previous = process.env[SESSION_HASH_KEY_ENV];
    try {
      process.env[SESSION_HASH_KEY_ENV] = 'from-env';
      expect(hashSessionId(SESSION)).toBe(hashSessionId(SESSION, 'from-env'));
      expect(hashSessionId(SESSION, 'k1')).not.toBe(hashSessionId(SESSION, 'k2'));
      // A guessable id does not come back from a plain SHA-256 of candidates.
      const plain = createHash('sha256').update(SESSION).digest('hex');
      expect(hashSessionId(SESSION, 'k1').slice(4)).not.toContain(plain.slice(0, 16));
    } finally {
      if (previous === undefined) delete process.env[SESSION_HASH_KEY_ENV];
      else process.env[SESSION_HASH_KEY_ENV] = previous;
    }
  });

  it('without a key: stable, warns once, and differs from the archive folder suffix', async () => {
    const previous = process.env[SESSION_HASH_KEY_ENV];
    // Captured, not printed: the warning is the subject here, not test-run noise.
    const warnings: string[] = [];
    const emit = vi.spyOn(process, 'emitWarning').mockImplementation(((
      _message: string,
      options?: { code?: string },
    ) => {
      warnings.push(String(options?.code));
    }) as typeof process.emitWarning);
    try {
      delete process.env[SESSION_HASH_KEY_ENV];
      const hashed = hashSessionId('User-42');
      expect(hashSessionId('User-42')).toBe(hashed);
      // The folder of a mixed-case id ends with a plain hash of the id; the unkeyed hash is another.
      const suffix = safeSessionSegment('User-42').split('~')[1]!;
      expect(hashed).not.toContain(suffix);
    } finally {
      if (previous !== undefined) process.env[SESSION_HASH_KEY_ENV] = previous;
      emit.mockRestore();
    }
    expect(warnings.filter((code) => code === 'COMPACT_UNKEYED_SESSION_HASH').length).toBeLessThanOrEqual(1);
  });
});

describe('prepareEvent', () => {
  it('replaces the session id in ids, equal strings and (8+ characters) inside strings, on a copy', () => {
    const [event] = events();
    const input = {
      ...event!,
      properties: { ...event!.properties, note: `resumed ${SESSION}`, other: SESSION },
    };
    const snapshot = JSON.stringify(input);
    const out = prepareEvent(input as typeof event & {}, { hashSessionIds: true });
    const hashed = hashSessionId(SESSION);
    expect(out.sessionId).toBe(hashed);
    expect(out.traceId).toBe(hashed);
    expect(JSON.stringify(out)).not.toContain(SESSION);
    expect((out.properties as Record<string, unknown>).note).toBe(`resumed ${hashed}`);
    expect(JSON.stringify(input)).toBe(snapshot);
  });

  it('replaces a short id only where a value equals it', () => {
    const [event] = sampleCompactionEvents({ sessionId: 'cli' });
    const out = prepareEvent(
      { ...event!, properties: { ...event!.properties, note: 'click the client' } } as typeof event & {},
      { hashSessionIds: true },
    );
    expect(out.sessionId).toBe(hashSessionId('cli'));
    expect((out.properties as Record<string, unknown>).note).toBe('click the client');
  });

  it('replaces the archive folder of an id in any encoding, whatever its length', () => {
    for (const id of ['a/b', 'Ab', 'user@example.com', 'x y']) {
      const [event] = sampleCompactionEvents({ sessionId: id });
      const paths = [
        `.compact/archive/${safeSessionSegment(id)}/summary-001.json`,
        `s3://bucket/p/${encodeURIComponent(id)}/events.jsonl`,
      ];
      const out = prepareEvent(
        { ...event!, properties: { ...event!.properties, paths } } as unknown as typeof event & {},
        { hashSessionIds: true, hashKey: 'k' },
      );
      const hashed = hashSessionId(id, 'k');
      expect((out.properties as unknown as { paths: string[] }).paths).toEqual([
        `.compact/archive/${hashed}/summary-001.json`,
        `s3://bucket/p/${hashed}/events.jsonl`,
      ]);
      expect(JSON.stringify(out)).not.toContain(safeSessionSegment(id));
    }
  });

  it('leaves the event alone without options', () => {
    const [event] = events();
    expect(prepareEvent(event!, {})).toBe(event);
  });
});

describe('hashSessionIds on every exporter', () => {
  let ariadne: AriadneTestServer | undefined;
  let otlp: OtlpTestServer | undefined;
  afterEach(async () => {
    await ariadne?.close();
    await otlp?.close();
    ariadne = undefined;
    otlp = undefined;
  });

  it('console (pretty and JSON): the hash, never the id', async () => {
    for (const format of ['pretty', 'json'] as const) {
      const lines: string[] = [];
      const exporter = consoleExporter({
        format,
        hashSessionIds: true,
        stream: { write: (chunk) => lines.push(chunk) },
      });
      await exporter.export(events());
      const text = lines.join('');
      expect(text).toContain(hashSessionId(SESSION));
      expect(text).not.toContain(SESSION);
    }
  });

  it('Ariadne: trace id, trace name and metadata, spans and archive paths carry the hash', async () => {
    ariadne = await startAriadneTestServer();
    await ariadneExporter({
      url: ariadne.ingestUrl,
      timeoutMs: 30_000,
      hashSessionIds: true,
      log: () => {},
    }).export(events());
    const hashed = hashSessionId(SESSION);
    expect(ariadne.events[0]).toMatchObject({
      type: 'trace',
      trace_id: hashed,
      metadata: { session_id: hashed },
    });
    expect(ariadne.events.length).toBe(events().length + 1);
    expect(ariadne.requests.map((request) => request.body).join('\n')).not.toContain(SESSION);
  });

  it('OTLP: no attribute names the session verbatim', async () => {
    otlp = await startOtlpTestServer();
    const exporter = otlpExporter({ url: otlp.tracesUrl, hashSessionIds: true, lingerMs: 10 });
    await exporter.export(events());
    await exporter.shutdown?.();
    expect(otlp.spans.length).toBeGreaterThan(0);
    expect(otlp.spans[0]!.attributes['gen_ai.conversation.id']).toBe(hashSessionId(SESSION));
    expect(otlp.requests.map((request) => request.body).join('\n')).not.toContain(SESSION);
  });
});
