/**
 * The recall MCP server reports the version of the package it runs from (its own
 * package.json), not a number written into the code: run from an installed copy whose
 * package.json says 9.9.9-test, it says 9.9.9-test.
 */
import { cp, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterEach, describe, expect, it } from 'vitest';
import { ensureBuilt, ROOT } from '../../test/support/ensure-built.js';
import { RecallArchive } from '../recall/recall-archive.js';
import { fsStorage } from '../storage/fs/fs-storage.js';
import { packageVersion } from './help.js';
import { createRecallMcpServer } from './mcp-server.js';

let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('recall MCP server version', () => {
  it("reports the package's version in process", async () => {
    dir = await mkdtemp(join(tmpdir(), 'recall-mcp-version-'));
    const server = await createRecallMcpServer({
      recall: new RecallArchive(fsStorage({ path: dir }), { refresh: 'list' }),
      sessionId: 'chat-1',
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(clientSide);
    expect(client.getServerVersion()?.version).toBe(packageVersion());
    await client.close();
  });

  it('reports the version of the installed copy it runs from', async () => {
    ensureBuilt();
    dir = await mkdtemp(join(tmpdir(), 'recall-mcp-version-'));
    const installed = join(dir, 'agent-compaction');
    await cp(join(ROOT, 'dist'), join(installed, 'dist'), { recursive: true });
    await writeFile(
      join(installed, 'package.json'),
      JSON.stringify({ name: 'agent-compaction', version: '9.9.9-test', type: 'module' }),
    );
    await symlink(join(ROOT, 'node_modules'), join(installed, 'node_modules'), 'dir');
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [join(installed, 'dist/cli/main.js'), 'mcp', '--archive', dir, '--session', 'chat-1'],
      cwd: dir,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(transport);
    expect(client.getServerVersion()).toMatchObject({
      name: 'agent-compaction-recall',
      version: '9.9.9-test',
    });
    await client.close();
  });
});
