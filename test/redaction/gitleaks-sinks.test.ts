import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/run-cli.js';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { getDefaultRedactor } from '../../src/core/redaction/redactor.js';
import { consoleExporter } from '../../src/exporters/console/console-exporter.js';
import { otlpExporter } from '../../src/exporters/otel/otlp-exporter.js';
import { fsStorage } from '../../src/storage/fs/fs-storage.js';
import { type OtlpTestServer, startOtlpTestServer } from '../../src/testing/otlp-test-server.js';
import { type CorpusSample, gitleaksCorpus, outcome } from './support/gitleaks-corpus.js';
import { leakFinder } from './support/secret-shapes.js';

/**
 * Issue 44 point 4, every sink: one secret of each gitleaks rule the redactor catches (in its
 * .env and log contexts) goes through a full compaction, with the summarizer's input
 * redacted, and a CLI report: no run of 12 of its characters (raw, JSON-escaped, URL-encoded,
 * base64) reaches the events, the console and OTLP exporters, the archive, the summaries or
 * the report. The redactor alone catching a secret is the table test's; this one checks that
 * no sink cuts one first (a clipped secret no longer matches its rule).
 */

const redact = getDefaultRedactor();
const { samples } = gitleaksCorpus(1);
const planted: CorpusSample[] = samples.filter(
  (sample) =>
    (sample.context === 'env' || sample.context === 'log') &&
    sample.secret.length >= 16 &&
    !/\s/.test(sample.secret) &&
    (sample.kind === 'standalone' || sample.secretNamedKey) &&
    outcome(sample, redact(sample.text)) === 'caught',
);

function history(list: readonly CorpusSample[]): Record<string, unknown>[] {
  return list.flatMap((sample, index) => [
    { role: 'user', content: `Step ${index}: deploy with\n${sample.text}\nthen check the health endpoint.` },
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        {
          id: 'call_0',
          type: 'function',
          function: { name: 'shell', arguments: JSON.stringify({ cmd: `deploy --env "${sample.text}"` }) },
        },
      ],
    },
    { role: 'tool', tool_call_id: 'call_0', content: `rejected: ${sample.text}\nError: credential invalid` },
    { role: 'assistant', content: `Step ${index} failed; retrying.` },
  ]);
}

async function readTree(dir: string): Promise<string> {
  const parts: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) parts.push(await readFile(join(entry.parentPath, entry.name), 'utf8'));
  }
  return parts.join('\n');
}

describe('gitleaks corpus through every sink', () => {
  let otlp: OtlpTestServer;
  let dir: string;
  beforeAll(async () => {
    otlp = await startOtlpTestServer();
    dir = await mkdtemp(join(tmpdir(), 'gitleaks-sinks-'));
  });
  afterAll(async () => {
    await otlp?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('no secret reaches events, exporters, archive, summaries or the CLI report', async () => {
    expect(planted.length).toBeGreaterThan(250);
    const find = leakFinder(
      planted.map((sample) => ({ kind: sample.rule, secret: sample.secret, text: sample.text })),
    );
    const messages = history(planted);
    expect(find(JSON.stringify(messages)).length).toBeGreaterThan(0);

    const sinks: Record<string, string[]> = { events: [], console: [], summaries: [] };
    const archive = join(dir, 'archive');
    const manager = new CompactManager({
      model: 'gpt-4o',
      maxContextTokens: 16_000,
      storage: fsStorage({ path: archive }),
      exporters: [
        consoleExporter({ format: 'json', stream: { write: (chunk) => sinks.console!.push(chunk) } }),
        otlpExporter({ url: otlp.tracesUrl, lingerMs: 10 }),
      ],
    });
    manager.on('*', (event) => void sinks.events!.push(JSON.stringify(event)));
    const forced = await manager.manualCompact('gitleaks-sinks', messages);
    sinks.summaries!.push(
      JSON.stringify(
        forced.messages.filter((message) => JSON.stringify(message).includes('COMPACT-SUMMARY')),
      ),
    );
    await manager.shutdown();

    const input = join(dir, 'history.json');
    const report = join(dir, 'report.json');
    await writeFile(input, JSON.stringify(messages));
    const code = await runCli(['compact', input, '--max-context', '16000', '--force', '--report', report], {
      stdin: Readable.from([]),
      stdout: () => {},
      stderr: () => {},
      env: {},
    });
    expect(code).toBe(0);

    const texts: Record<string, string> = {
      events: sinks.events!.join('\n'),
      console: sinks.console!.join(''),
      otlp: otlp.requests.map((request) => request.body).join('\n'),
      archive: await readTree(archive),
      summaries: sinks.summaries!.join('\n'),
      'cli report': await readFile(report, 'utf8'),
    };
    for (const [name, text] of Object.entries(texts)) expect(text, name).toContain('Step 1');
    for (const [name, text] of Object.entries(texts)) expect(find(text), `leak in ${name}`).toEqual([]);
  });
});
