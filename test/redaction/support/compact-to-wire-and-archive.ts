import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { CompactManager } from '../../../src/core/manager/compact-manager.js';
import { fsStorage } from '../../../src/storage/fs/fs-storage.js';
import { openaiSummarizer } from '../../../src/summarizers/openai/openai-summarizer.js';
import type {
  ProviderTestServer,
  ProviderTestServerOptions,
} from '../../../src/testing/provider-test-server.js';

/** Every file under `dir`, read as text and joined. */
async function readTree(dir: string): Promise<string> {
  const parts: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) parts.push(await readFile(join(entry.parentPath, entry.name), 'utf8'));
  }
  return parts.join('\n');
}

/** What left the process in {@link compactToWireAndArchive}. */
export interface WireAndArchive {
  /** Requests the summarizer's server received. */
  requests: number;
  /** The first request's body as it went over the wire. */
  wire: string;
  /** Every file the fs archive wrote, as text. */
  archived: string;
}

/**
 * One forced compaction of `history` (OpenAI Chat messages) by the real OpenAI SDK's
 * summarizer against a loopback server, with an fs archive in a temporary folder (removed
 * after): the summarizer's wire and the archive, for a test to search for secrets.
 */
export async function compactToWireAndArchive(
  startServer: (options: ProviderTestServerOptions) => Promise<ProviderTestServer>,
  session: string,
  history: unknown[],
): Promise<WireAndArchive> {
  const server = await startServer({
    handler: () => ({ text: '## Goals\n- deploy', usage: { inputTokens: 10, outputTokens: 5 } }),
  });
  const dir = await mkdtemp(join(tmpdir(), `${session}-`));
  try {
    const client = new OpenAI({ baseURL: server.openaiBaseURL, apiKey: 'test', maxRetries: 0 });
    const archive = join(dir, 'archive');
    const manager = new CompactManager({
      model: 'gpt-4o',
      maxContextTokens: 6000,
      storage: fsStorage({ path: archive }),
      summarizer: openaiSummarizer({ model: 'gpt-4o-mini', client, maxRetries: 0 }),
    });
    await manager.manualCompact(session, history);
    await manager.shutdown();
    return {
      requests: server.requests.length,
      wire: server.requests[0]?.rawBody ?? '',
      archived: await readTree(archive),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
