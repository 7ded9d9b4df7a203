import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterEach, describe, expect, it } from 'vitest';
import { RecallArchive } from '../recall/recall-archive.js';
import { RECALL_INPUT_SCHEMA } from '../recall/recall-tool.js';
import { fsStorage } from '../storage/fs/fs-storage.js';
import { sampleArtifact } from '../testing/sample-artifact.js';
import { createRecallMcpServer, runMcpCommand } from './mcp-server.js';

const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '../..');
let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

type TextResult = { content: { type: string; text: string }[]; isError?: boolean };

async function archive() {
  dir = await mkdtemp(join(tmpdir(), 'recall-mcp-'));
  const writer = fsStorage({ path: dir });
  await writer.saveArtifact!(
    'chat-1',
    sampleArtifact('chat-1', 'tool-abc', 'retry budget: 17 attempts per hour'),
  );
  await writer.saveArtifact!('chat-2', sampleArtifact('chat-2', 'tool-other', 'chat-2 launch code 0451'));
  return { dir, writer };
}

describe('recall MCP server', () => {
  it('lists the recall tool and answers by ref and query for its one session (in process)', async () => {
    const { dir: path, writer } = await archive();
    const recall = new RecallArchive(fsStorage({ path }), { refresh: 'list' });
    const server = await createRecallMcpServer({ recall, sessionId: 'chat-1' });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(clientSide);
    const { tools } = await client.listTools();
    expect(tools).toEqual([expect.objectContaining({ name: 'recall', inputSchema: RECALL_INPUT_SCHEMA })]);
    const byRef = (await client.callTool({ name: 'recall', arguments: { ref: 'tool-abc' } })) as TextResult;
    expect(byRef.isError).toBeFalsy();
    expect(byRef.content[0]?.text).toContain('retry budget: 17 attempts per hour');
    const other = (await client.callTool({ name: 'recall', arguments: { ref: 'tool-other' } })) as TextResult;
    expect(other).toMatchObject({ isError: true });
    expect(other.content[0]?.text).toMatch(/unknown_ref/);
    const forged = (await client.callTool({
      name: 'recall',
      arguments: { ref: '../chat-2/artifacts/tool-other' },
    })) as TextResult;
    expect(forged.content[0]?.text).toMatch(/invalid_ref/);
    // Written by the agent's process after the index was built: found (refresh 'list').
    expect(
      ((await client.callTool({ name: 'recall', arguments: { query: 'retry budget' } })) as TextResult)
        .content[0]?.text,
    ).toContain('tool-abc');
    await writer.saveArtifact!(
      'chat-1',
      sampleArtifact('chat-1', 'tool-late', 'deploy window opens at 14:00 UTC'),
    );
    const late = (await client.callTool({
      name: 'recall',
      arguments: { query: 'deploy window' },
    })) as TextResult;
    expect(late.content[0]?.text).toContain('ref "tool-late"');
    expect(
      ((await client.callTool({ name: 'recall', arguments: { query: 'launch code' } })) as TextResult)
        .content[0]?.text,
    ).toMatch(/no archived passage/);
    await client.close();
  });

  it('runs as `agent-compaction mcp` over stdio', async () => {
    const { dir: path } = await archive();
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [
        '--import',
        'tsx',
        join(ROOT, 'src/cli/main.ts'),
        'mcp',
        '--archive',
        path,
        '--session',
        'chat-2',
      ],
      cwd: ROOT,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(transport);
    const result = (await client.callTool({
      name: 'recall',
      arguments: { ref: 'tool-other' },
    })) as TextResult;
    expect(result.content[0]?.text).toContain('chat-2 launch code 0451');
    const refused = (await client.callTool({ name: 'recall', arguments: { ref: 'tool-abc' } })) as TextResult;
    expect(refused.isError).toBe(true);
    await client.close();
  });

  it('without @modelcontextprotocol/sdk installed: one line naming the package, exit 2', async () => {
    const { execFile } = await import('node:child_process');
    const run = await new Promise<{ code: number; stderr: string }>((done) => {
      execFile(
        process.execPath,
        [
          '--import',
          join(ROOT, 'test/support/hide-mcp-sdk.mjs'),
          '--import',
          'tsx',
          join(ROOT, 'src/cli/main.ts'),
          'mcp',
          '--archive',
          tmpdir(),
          '--session',
          's',
        ],
        { cwd: ROOT },
        (error, _stdout, stderr) => done({ code: (error as { code?: number } | null)?.code ?? 0, stderr }),
      );
    });
    expect(run.code).toBe(2);
    expect(run.stderr.trim()).toBe(
      'error: install @modelcontextprotocol/sdk: npm i @modelcontextprotocol/sdk',
    );
  });

  it('refuses to start without an archive or a session', async () => {
    const errors: string[] = [];
    expect(await runMcpCommand(['--archive', '/tmp/x'], (text) => errors.push(text))).toBe(2);
    expect(await runMcpCommand(['--session', 's'], (text) => errors.push(text))).toBe(2);
    expect(
      await runMcpCommand(['--archive', '/tmp/x', '--session', 's', '--page-chars', '5'], (text) =>
        errors.push(text),
      ),
    ).toBe(2);
    expect(await runMcpCommand(['--bogus'], (text) => errors.push(text))).toBe(2);
    expect(errors.join('')).toMatch(
      /--session ID is required[\s\S]*--archive DIR is required[\s\S]*--page-chars/,
    );
  });

  it('exits with code 0 when the host closes stdin', async () => {
    const { dir: path } = await archive();
    const { spawn } = await import('node:child_process');
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(ROOT, 'src/cli/main.ts'), 'mcp', '--archive', path, '--session', 'chat-2'],
      { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.stdin.end();
    const code = await new Promise<number | null>((done) => child.on('close', done));
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });

  it('refuses an --archive folder that does not exist: one line, exit 2', async () => {
    const errors: string[] = [];
    const missing = join(tmpdir(), 'agent-compaction-no-such-archive');
    expect(await runMcpCommand(['--archive', missing, '--session', 's'], (text) => errors.push(text))).toBe(
      2,
    );
    expect(errors.join('').trim().split('\n')).toEqual([
      `error: --archive ${missing}: no such folder (the storage path the manager archives to, e.g. .compact/archive)`,
    ]);
    errors.length = 0;
    expect(await runMcpCommand(['--archive', missing, '--sesion', 's'], (text) => errors.push(text))).toBe(2);
    expect(errors.join('')).toBe('error: unknown flag --sesion for mcp (did you mean --session?)\n');
  });
});

/** `agent-compaction mcp` for `session` of `path`, as a host starts it, with its stderr kept. */
async function stdioClient(path: string, session: string, env?: Record<string, string>) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['--import', 'tsx', join(ROOT, 'src/cli/main.ts'), 'mcp', '--archive', path, '--session', session],
    cwd: ROOT,
    stderr: 'pipe',
    ...(env ? { env } : {}),
  });
  const stderr: string[] = [];
  transport.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk.toString('utf8')));
  const client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport, stderr };
}

describe('recall MCP server, hostile calls over stdio', () => {
  it('refuses a key inherited by every object (constructor, toString, hasOwnProperty) and cuts a huge unknown key', async () => {
    const { dir: path } = await archive();
    const { client } = await stdioClient(path, 'chat-1');
    for (const key of ['constructor', 'toString', 'hasOwnProperty']) {
      const result = (await client.callTool({
        name: 'recall',
        arguments: JSON.parse(`{"ref": "tool-abc", ${JSON.stringify(key)}: "x"}`),
      })) as TextResult;
      expect(result.isError).toBe(true);
      expect(result.content[0]?.text).toBe(
        `recall error (invalid_input): unknown field ${key}: pass ref or query`,
      );
    }
    const huge = (await client.callTool({
      name: 'recall',
      arguments: { ['k'.repeat(100_000)]: 1 },
    })) as TextResult;
    expect(huge.isError).toBe(true);
    expect(huge.content[0]?.text).toBe(
      `recall error (invalid_input): unknown field ${'k'.repeat(60)}…: pass ref or query`,
    );
    await client.close();
  });

  it('exits with code 0 and no stack trace when the host stops reading its answers (EPIPE)', async () => {
    const { dir: path } = await archive();
    const { client, transport, stderr } = await stdioClient(path, 'chat-1');
    expect((await client.listTools()).tools).toHaveLength(1);
    // The host closes its end of the server's stdout but keeps stdin open: the next answer breaks the pipe.
    const child = (transport as unknown as { _process?: import('node:child_process').ChildProcess })._process;
    expect(child?.stdout).toBeTruthy();
    const exited = new Promise<number | null>((done) => child!.once('exit', (code) => done(code)));
    child!.stdout!.destroy();
    const call = client.callTool({ name: 'recall', arguments: { ref: 'tool-abc' } }).catch(() => 'closed');
    expect(await exited).toBe(0);
    expect(stderr.join('')).toBe('');
    expect(await call).toBe('closed');
    await client.close();
  });
});

describe('recall MCP server over an archive with hashed session folders', () => {
  it('reads the folders as the manager wrote them (COMPACT_HASH_SESSION_FOLDERS and its key)', async () => {
    dir = await mkdtemp(join(tmpdir(), 'recall-mcp-hashed-'));
    const hashKey = 'mcp-test-key';
    const writer = fsStorage({ path: dir, hashSessionIds: true, hashKey });
    await writer.saveArtifact!(
      'chat-1',
      sampleArtifact('chat-1', 'tool-abc', 'retry budget: 17 attempts per hour'),
    );
    const { client, stderr } = await stdioClient(dir, 'chat-1', {
      ...(process.env as Record<string, string>),
      COMPACT_HASH_SESSION_FOLDERS: 'true',
      COMPACT_SESSION_HASH_KEY: hashKey,
    });
    const byRef = (await client.callTool({ name: 'recall', arguments: { ref: 'tool-abc' } })) as TextResult;
    expect(byRef.isError).toBeFalsy();
    expect(byRef.content[0]?.text).toContain('retry budget: 17 attempts per hour');
    const byQuery = (await client.callTool({
      name: 'recall',
      arguments: { query: 'retry budget' },
    })) as TextResult;
    expect(byQuery.content[0]?.text).toContain('ref "tool-abc"');
    await client.close();
    expect(stderr.join('')).toBe('');
  });

  it('takes the setting from --config FILE', async () => {
    dir = await mkdtemp(join(tmpdir(), 'recall-mcp-hashed-'));
    const hashKey = 'mcp-test-key-2';
    const archiveDir = join(dir, 'archive');
    const writer = fsStorage({ path: archiveDir, hashSessionIds: true, hashKey });
    await writer.saveArtifact!(
      'chat-1',
      sampleArtifact('chat-1', 'tool-abc', 'deploy window opens at 14:00 UTC'),
    );
    const config = join(dir, 'compact.json');
    await writeFile(config, JSON.stringify({ storage: { path: archiveDir, hash_session_ids: true } }));
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [
        '--import',
        'tsx',
        join(ROOT, 'src/cli/main.ts'),
        'mcp',
        '--archive',
        archiveDir,
        '--session',
        'chat-1',
        '--config',
        config,
      ],
      cwd: ROOT,
      stderr: 'pipe',
      env: { ...(process.env as Record<string, string>), COMPACT_SESSION_HASH_KEY: hashKey },
    });
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(transport);
    const byRef = (await client.callTool({ name: 'recall', arguments: { ref: 'tool-abc' } })) as TextResult;
    expect(byRef.content[0]?.text).toContain('deploy window opens at 14:00 UTC');
    await client.close();
  });
});
