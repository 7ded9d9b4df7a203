import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/run-cli.js';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { ariadneExporter } from '../../src/exporters/ariadne/ariadne-exporter.js';
import { consoleExporter } from '../../src/exporters/console/console-exporter.js';
import { otlpExporter } from '../../src/exporters/otel/otlp-exporter.js';
import { fsStorage } from '../../src/storage/fs/fs-storage.js';
import { type AriadneTestServer, startAriadneTestServer } from '../../src/testing/ariadne-test-server.js';
import { type OtlpTestServer, startOtlpTestServer } from '../../src/testing/otlp-test-server.js';
import { leakFinder, oneOfEachKind, type PlantedSecret } from './support/secret-shapes.js';

/**
 * Secrets of 14 shapes in user messages, tool-call arguments and tool results, through a
 * manager with default settings and every sink on: no run of 12 characters of any secret
 * (raw, JSON-escaped, URL-encoded, base64) may reach a sink. Kept messages sent to the agent's
 * own model are not a sink (they are never changed); the summary in them is.
 */

/** Look-alikes that must survive redaction in the archived transcript. */
const BENIGN = {
  uuid: '3f2b8c1e-9d4a-4f6b-8e2a-1c5d7e9f0a3b',
  sha: '9fceb02d0ae598e95dc970b74767f19372d61af8',
};

const FILLER =
  'The deploy script reads the environment, checks the health endpoint, and rolls back on failure. ';

function plantedHistory(secrets: readonly PlantedSecret[], from = 0): Record<string, unknown>[] {
  const messages: Record<string, unknown>[] = [];
  secrets.forEach((planted, index) => {
    const step = from + index;
    // Shift the secret so the summarizer's clips (100, 140, 160 characters) cut into it.
    const pad = `/srv/${'a'.repeat((step * 11) % 64)}`;
    messages.push({
      role: 'user',
      content: `Step ${step}: deploy build ${BENIGN.sha} with this credential:\n${planted.text}\n${FILLER}`,
    });
    messages.push({
      role: 'assistant',
      content: null,
      tool_calls: [
        {
          id: 'call_0',
          type: 'function',
          function: {
            name: 'shell',
            arguments: JSON.stringify({
              cwd: pad,
              cmd: `deploy --cred ${planted.text} --run ${BENIGN.uuid}`,
            }),
          },
        },
      ],
    });
    messages.push({
      role: 'tool',
      tool_call_id: 'call_0',
      content: `deploy failed: rejected ${planted.text}\nError: credential invalid\n${FILLER.repeat(2)}`,
    });
    messages.push({
      role: 'assistant',
      content: `Step ${step} failed; I will retry with the next credential.`,
    });
  });
  return messages;
}

async function readTree(dir: string): Promise<string> {
  const parts: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    const path = join(entry.parentPath, entry.name);
    parts.push(path);
    if (entry.isFile()) parts.push(await readFile(path, 'utf8'));
  }
  return parts.join('\n');
}

const summaryOf = (messages: readonly unknown[]) =>
  JSON.stringify(messages.filter((message) => JSON.stringify(message).includes('COMPACT-SUMMARY')));

describe('no secret reaches any sink, whole or clipped', () => {
  let ariadne: AriadneTestServer;
  let otlp: OtlpTestServer;
  let dir: string;
  beforeAll(async () => {
    ariadne = await startAriadneTestServer();
    otlp = await startOtlpTestServer();
    dir = await mkdtemp(join(tmpdir(), 'redaction-sinks-'));
  });
  afterAll(async () => {
    await ariadne?.close();
    await otlp?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it.each([
    [1, true],
    [2, true],
    [3, true],
    [1, false],
    [2, false],
  ])(
    'seed %i, redactSummarizerInput %s: events, console, Ariadne, OTLP, archive, summaries, CLI report',
    async (seed, redactSummarizerInput) => {
      const secrets = oneOfEachKind(seed * 100);
      const later = oneOfEachKind(seed * 100 + 50);
      const find = leakFinder([...secrets, ...later]);
      const history = plantedHistory(secrets);
      // The test can fail: every kind is in the input.
      expect(new Set(find(JSON.stringify(history)).map((leak) => leak.split(':')[0])).size).toBe(14);

      const sessionId = `sink-test-${seed}-${redactSummarizerInput}`;
      const archive = join(dir, `archive-${seed}-${redactSummarizerInput}`);
      const sinks: Record<string, string[]> = { events: [], console: [], summaries: [] };
      const makeManager = () => {
        const manager = new CompactManager({
          model: 'gpt-4o',
          maxContextTokens: 6000,
          redactSummarizerInput,
          storage: fsStorage({ path: archive }),
          exporters: [
            consoleExporter({ format: 'json', stream: { write: (chunk) => sinks.console!.push(chunk) } }),
            ariadneExporter({ url: ariadne.ingestUrl, timeoutMs: 30_000, log: () => {} }),
            otlpExporter({ url: otlp.tracesUrl, lingerMs: 10 }),
          ],
        });
        manager.on('*', (event) => void sinks.events!.push(JSON.stringify(event)));
        return manager;
      };

      const manager = makeManager();
      const first = await manager.preflight(sessionId, history);
      sinks.summaries!.push(summaryOf(first));
      const forced = await manager.manualCompact(sessionId, history, { note: 'checkpoint before retry' });
      sinks.summaries!.push(summaryOf(forced.messages));
      await manager.shutdown();

      // A saved compacted history, resumed by a new process with more secrets.
      const resumed = makeManager();
      const next = await resumed.manualCompact(sessionId, [...forced.messages, ...plantedHistory(later, 14)]);
      sinks.summaries!.push(summaryOf(next.messages));
      await resumed.shutdown();

      const input = join(dir, `history-${seed}-${redactSummarizerInput}.json`);
      const report = join(dir, `report-${seed}-${redactSummarizerInput}.json`);
      await writeFile(input, JSON.stringify(history));
      const code = await runCli(['compact', input, '--max-context', '6000', '--force', '--report', report], {
        stdin: Readable.from([]),
        stdout: () => {},
        stderr: (text) => void sinks.cliErrors?.push(text),
        env: {},
      });
      expect(code).toBe(0);

      const archived = await readTree(archive);
      const ariadneBodies = ariadne.requests.map((request) => request.body).join('\n');
      const otlpBodies = otlp.requests.map((request) => request.body).join('\n');
      const texts: Record<string, string> = {
        events: sinks.events!.join('\n'),
        console: sinks.console!.join(''),
        ariadne: ariadneBodies,
        otlp: otlpBodies,
        archive: archived,
        'cli report': await readFile(report, 'utf8'),
      };
      // Every sink saw the compaction (an empty sink would pass trivially).
      // Opting out keeps secrets in the summary the model sees (documented); exports stay clean.
      if (redactSummarizerInput) texts.summaries = sinks.summaries!.join('\n');
      for (const [name, text] of Object.entries(texts)) expect(text, name).toContain('Step 1');
      expect(archived).toContain(BENIGN.uuid);
      // Session ids are identifiers: the archived summary names its session, unredacted.
      expect(archived).toMatch(new RegExp(`"sessionId":\\s*"${sessionId}"`));
      expect(archived).not.toMatch(/"sessionId":\s*"<REDACTED>"/);
      expect(archived).toContain(BENIGN.sha);
      for (const [name, text] of Object.entries(texts)) expect(find(text), `leak in ${name}`).toEqual([]);
    },
  );
});
