import { describe, expect, it } from 'vitest';
import { createRedactor } from '../../core/redaction/redactor.js';
import { describeExporterConformance } from '../../testing/exporter-conformance.js';
import { sampleCompactionEvents } from '../../testing/sample-events.js';
import { ariadneExporter } from '../ariadne/ariadne-exporter.js';
import { defineExporter } from '../define-exporter.js';
import { consoleExporter, formatEventLine } from './console-exporter.js';

function sink() {
  const chunks: string[] = [];
  return { stream: { write: (chunk: string) => chunks.push(chunk) }, text: () => chunks.join('') };
}

for (const format of ['pretty', 'json'] as const) {
  describeExporterConformance({
    name: `console (${format})`,
    async create() {
      const out = sink();
      return {
        exporter: consoleExporter({ format, stream: out.stream }),
        received: out.text,
        close: async () => {},
      };
    },
    async createFailing() {
      const broken = {
        write() {
          throw new Error('EPIPE');
        },
      };
      return { exporter: consoleExporter({ format, stream: broken }), close: async () => {} };
    },
  });
}

describe('consoleExporter', () => {
  it('writes one readable line per event', async () => {
    const out = sink();
    const events = sampleCompactionEvents({ sessionId: 's1', withError: true });
    await consoleExporter({ format: 'pretty', stream: out.stream }).export(events);
    const lines = out.text().trimEnd().split('\n');
    expect(lines).toHaveLength(events.length);
    expect(lines[0]).toMatch(
      /^\[compact\] \d{4}-\d\d-\d\dT[\d:.]+Z compact\.token_estimate session=s1 span=[0-9a-f]{16} ok 3ms model=gpt-4o tEst=112345/,
    );
    expect(lines.find((line) => line.includes('compact.error'))).toMatch(
      /ERROR 2000ms errorType=summarizer_timeout/,
    );
    expect(lines.find((line) => line.includes('summary_created'))).toContain(
      'summary="Goal: fix the failing test.',
    );
  });

  it('writes JSON lines with snake_case properties, ISO times and durations', async () => {
    const out = sink();
    const events = sampleCompactionEvents();
    await consoleExporter({ format: 'json', stream: out.stream }).export(events);
    const parsed = out
      .text()
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(parsed[0]).toMatchObject({
      type: 'span',
      name: 'compact.token_estimate',
      span_id: events[0]?.spanId,
      operation_id: expect.any(String),
      duration_ms: 3,
      properties: { t_est: 112_345, max_tokens: 128_000, breakdown: { tools_schema: 845 } },
    });
    expect(parsed[0].started_at).toMatch(/Z$/);
  });

  it('redacts with its own redactor when given one, and defaults to stderr', async () => {
    const out = sink();
    await consoleExporter({ format: 'pretty', stream: out.stream, redact: createRedactor() }).export(
      sampleCompactionEvents({ summary: 'token: ghp_abcdefghijklmnopqrstuvwxyz0123456789' }),
    );
    expect(out.text()).not.toContain('ghp_');
    expect(formatEventLine(sampleCompactionEvents()[0]!)).toContain('compact.token_estimate');
    const written: string[] = [];
    const original = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string) =>
      written.push(String(chunk)) > 0) as typeof process.stderr.write;
    try {
      await consoleExporter({ format: 'pretty' }).export(sampleCompactionEvents().slice(0, 1));
    } finally {
      process.stderr.write = original;
    }
    expect(written.join('')).toContain('compact.token_estimate');
  });
});

describe('consoleExporter, summary format (the default)', () => {
  it('writes one line per compaction and per error, nothing per event of a call', async () => {
    const out = sink();
    const events = sampleCompactionEvents({ sessionId: 's1', withError: true });
    await consoleExporter({ stream: out.stream }).export(events);
    const lines = out.text().trimEnd().split('\n');
    const compactions = events.filter((e) => e.name === 'compact.pruned_messages').length;
    const errors = events.filter((e) => e.name === 'compact.error').length;
    expect(lines).toHaveLength(compactions + errors);
    const line = lines.find((l) => l.includes('compacted'))!;
    expect(line).toMatch(
      /^\[compact\] \d\d:\d\d:\d\d session=s1 compacted [\d,]+ -> [\d,]+ tokens \(.+\): .+; summary v\d+ \(\w+\)$/,
    );
    expect(lines.some((l) => / ERROR \w+: /.test(l))).toBe(true);
    expect(out.text()).not.toContain('compact.token_estimate');
  });

  it('never writes the terminal controls a session id, error or summary carries, in any format', async () => {
    // A window title set, the screen cleared, red on, and a right-to-left override.
    const controls = '\u001b]0;pwned\u0007\u001b[2J\u001b[31m\u202e';
    const events = sampleCompactionEvents({
      sessionId: `s${controls}`,
      summary: `Goal ${controls}`,
      withError: true,
    }).map((event) =>
      event.name === 'compact.error'
        ? ({
            ...event,
            properties: { ...event.properties, message: `provider said ${controls}` },
          } as typeof event)
        : event,
    );
    for (const format of ['summary', 'pretty', 'json'] as const) {
      const out = sink();
      await consoleExporter({ format, stream: out.stream }).export(events);
      expect(out.text()).toContain('session');
      expect(out.text()).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202e]/);
      if (format === 'json') {
        // The JSON lines still parse to the same values.
        const first = JSON.parse(out.text().split('\n')[0]!) as { session_id: string };
        expect(first.session_id).toBe(`s${controls}`);
      } else expect(out.text()).toContain('\\u{1b}]0;pwned');
    }
  });

  it('writes a newline inside a session id or error message escaped: no forged line (review 82u)', async () => {
    const forged = 'x\n[compact] 00:00:00 session=admin compacted 1 -> 1 tokens (forced): nothing to reduce';
    const withNewlines = (sessionId: string) =>
      sampleCompactionEvents({ sessionId, withError: true }).map((event) =>
        event.name === 'compact.error'
          ? ({ ...event, properties: { ...event.properties, message: 'first\nsecond' } } as typeof event)
          : event,
      );
    for (const format of ['summary', 'pretty', 'json'] as const) {
      const written = async (sessionId: string) => {
        const out = sink();
        await consoleExporter({ format, stream: out.stream }).export(withNewlines(sessionId));
        return out.text().trimEnd().split('\n');
      };
      const lines = await written(forged);
      // As many lines as with a plain session id, each one event's.
      expect(lines).toHaveLength((await written('x')).length);
      if (format === 'json') for (const line of lines) expect(JSON.parse(line).session_id).toBe(forged);
      else {
        for (const line of lines)
          expect(line).toMatch(/^\[compact\] \S+ (\S+ )?session=x\\u\{0a\}\[compact\]/);
        // pretty flattens a property's whitespace; summary writes the message as it came.
        if (format === 'summary') expect(lines.join('\n')).toContain('first\\u{0a}second');
      }
    }
  });
});

describe('defineExporter', () => {
  describeExporterConformance({
    name: 'defineExporter (in-memory)',
    async create() {
      const lines: string[] = [];
      return {
        exporter: defineExporter({
          name: 'memory',
          export: (events) => void lines.push(JSON.stringify(events)),
        }),
        received: () => lines.join('\n'),
        close: async () => {},
      };
    },
    async createFailing() {
      return {
        exporter: defineExporter({
          name: 'failing',
          export() {
            throw new Error('down');
          },
          onError: () => {},
        }),
        close: async () => {},
      };
    },
  });

  it('reports errors with the [name] prefix and validates the name', async () => {
    const written: string[] = [];
    const original = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string) =>
      written.push(String(chunk)) > 0) as typeof process.stderr.write;
    try {
      const exporter = defineExporter({
        name: 'webhook',
        async export() {
          throw new Error('502 from upstream');
        },
        shutdown() {
          throw new Error('already closed');
        },
      });
      await exporter.export(sampleCompactionEvents());
      await exporter.shutdown?.();
    } finally {
      process.stderr.write = original;
    }
    expect(written).toEqual(['[webhook] 502 from upstream\n', '[webhook] already closed\n']);
    expect(() => defineExporter({ name: '', export: () => {} })).toThrow(
      expect.objectContaining({
        code: 'invalid_argument',
        issues: [expect.objectContaining({ path: ['name'] })],
      }),
    );
  });

  it('an async onError (or Ariadne log sink) that rejects leaves no unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const record = (reason: unknown) => void unhandled.push(reason);
    process.on('unhandledRejection', record);
    try {
      const exporter = defineExporter({
        name: 'webhook',
        export() {
          throw new Error('502');
        },
        onError: async () => {
          throw new Error('reporter down');
        },
      });
      await exporter.export(sampleCompactionEvents());
      const url = 'http://127.0.0.1:9/ingest'; // the discard port: refused
      const log = async () => {
        throw new Error('log sink down');
      };
      await ariadneExporter({ url, log, traceEvents: false }).export(sampleCompactionEvents());
      // Unhandled rejections are reported before the next turn of the event loop.
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', record);
    }
  });
});
