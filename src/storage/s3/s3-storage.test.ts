import { mkdtemp, rm } from 'node:fs/promises';
import type { IncomingHttpHeaders, IncomingMessage, Server } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setAwsTestKeys } from '../../../test/support/aws-test-keys.js';
import { charCounter, chatTurns } from '../../../test/support/background-fixtures.js';
import { isCompactError } from '../../core/errors.js';
import { CompactManager } from '../../core/manager/compact-manager.js';
import { MemorySessionStore } from '../../core/session/session-store.js';
import { RecallArchive } from '../../recall/recall-archive.js';
import { describeArtifactConformance } from '../../testing/artifact-conformance.js';
import { sampleArtifact } from '../../testing/sample-artifact.js';
import { sampleCompactionEvents } from '../../testing/sample-events.js';
import { describeStorageConformance } from '../../testing/storage-conformance.js';
import { safeSessionSegment } from '../session-path.js';
import { readTranscriptLines } from '../transcript-parts.js';
import { s3Storage } from './s3-storage.js';

/** The parts of s3rver (which ships no types) this test uses. */
interface S3rverInstance {
  run(): Promise<{ address: string; port: number }>;
  close(): Promise<void>;
  httpServer: Server;
}
type S3rverConstructor = new (options: Record<string, unknown>) => S3rverInstance;
const S3rver = createRequire(import.meta.url)('s3rver') as S3rverConstructor;

const BUCKET = 'agent-archive';
let server: S3rverInstance;
let directory: string;
let endpoint: string;
const seen: { method: string; url: string; headers: IncomingHttpHeaders }[] = [];
let restoreKeys: (() => void) | undefined;

beforeAll(async () => {
  restoreKeys = setAwsTestKeys('S3RVER');
  directory = await mkdtemp(join(tmpdir(), 'compact-s3rver-'));
  server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    configureBuckets: [{ name: BUCKET }],
  });
  const { port } = await server.run();
  endpoint = `http://127.0.0.1:${port}`;
  // Record the headers every request carries on the wire (s3rver ignores SSE headers).
  server.httpServer.prependListener('request', (request: IncomingMessage) => {
    seen.push({ method: request.method ?? '', url: request.url ?? '', headers: { ...request.headers } });
  });
});

afterAll(async () => {
  await server?.close();
  await rm(directory, { recursive: true, force: true });
  restoreKeys?.();
});

function reader() {
  return new S3Client({ region: 'us-east-1', endpoint, forcePathStyle: true });
}

async function getText(client: S3Client, key: string): Promise<string> {
  const object = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
  return (await object.Body?.transformToString('utf8')) ?? '';
}

async function listKeys(client: S3Client, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await client.send(
      new ListObjectsV2Command({
        Bucket: BUCKET,
        Prefix: prefix,
        ...(token ? { ContinuationToken: token } : {}),
      }),
    );
    keys.push(...(page.Contents ?? []).map((object) => object.Key ?? ''));
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return keys.sort();
}

let run = 0;
describeStorageConformance({
  name: 's3 (s3rver on 127.0.0.1, real AWS SDK)',
  async create() {
    run += 1;
    const prefix = `conformance/run-${run}`;
    const client = reader();
    const adapter = s3Storage({
      bucket: BUCKET,
      prefix,
      region: 'us-east-1',
      endpoint,
      forcePathStyle: true,
    });
    return {
      adapter,
      read: (location) => getText(client, location.replace(`s3://${BUCKET}/`, '')),
      async readEvents(sessionId) {
        const keys = await listKeys(client, `${prefix}/${safeSessionSegment(sessionId)}/events/`);
        const texts = await Promise.all(keys.map((key) => getText(client, key)));
        return texts.map((text) => JSON.parse(text));
      },
      isInsideRoot(location) {
        const key = location.replace(`s3://${BUCKET}/`, '');
        if (!location.startsWith(`s3://${BUCKET}/${prefix}/`)) return false;
        const rest = key.slice(prefix.length + 1).split('/');
        return rest.length === 2 && rest.every((part) => part !== '' && part !== '.' && part !== '..');
      },
      close: async () => client.destroy(),
    };
  },
});

describeArtifactConformance({
  name: 's3 (s3rver on 127.0.0.1, real AWS SDK)',
  async create() {
    run += 1;
    const prefix = `artifacts/run-${run}`;
    const adapter = s3Storage({
      bucket: BUCKET,
      prefix,
      region: 'us-east-1',
      endpoint,
      forcePathStyle: true,
    });
    return {
      adapter,
      isInsideRoot(location) {
        if (!location.startsWith(`s3://${BUCKET}/${prefix}/`)) return false;
        const rest = location.slice(`s3://${BUCKET}/${prefix}/`.length).split('/');
        return (
          rest.length === 3 &&
          rest[1] === 'artifacts' &&
          rest.every((part) => part !== '' && part !== '.' && part !== '..')
        );
      },
      close: async () => {},
    };
  },
});

describe('s3Storage', () => {
  it('stores artifacts under {prefix}/{session}/artifacts/{ref}.{id}.json, SSE-KMS included, and ignores foreign keys there', async () => {
    const adapter = s3Storage({
      bucket: BUCKET,
      prefix: 'art-kms',
      kmsKeyId: 'alias/agent-archive',
      region: 'us-east-1',
      endpoint,
      forcePathStyle: true,
    });
    const before = seen.length;
    const location = await adapter.saveArtifact!('s-1', sampleArtifact('s-1', 'tool-abc123', 'grep output'));
    expect(location).toMatch(
      /^s3:\/\/agent-archive\/art-kms\/s-1\/artifacts\/tool-abc123\.[0-9a-z]{9}-[0-9a-f]{8}\.json$/,
    );
    const put = seen.slice(before).find((request) => request.method === 'PUT');
    expect(put?.headers['x-amz-server-side-encryption']).toBe('aws:kms');
    // A key planted by someone else: another session's artifact copied in, a nested key, a non-JSON name.
    const client = reader();
    const forged = JSON.stringify(sampleArtifact('s-2', 'tool-other', 'from session s-2'));
    for (const key of [
      'art-kms/s-1/artifacts/tool-other.json',
      'art-kms/s-1/artifacts/x/tool-n.json',
      'art-kms/s-1/artifacts/notes.txt',
    ])
      await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: forged }));
    expect(await adapter.loadArtifact!('s-1', 'tool-other')).toBeUndefined();
    expect((await adapter.listArtifacts!('s-1')).map((a) => a.ref)).toEqual(['tool-abc123']);
    client.destroy();
  });

  it('serves recall (by ref and by query) from an S3 archive, one session at a time', async () => {
    const recall = new RecallArchive(
      s3Storage({ bucket: BUCKET, prefix: 'recall', region: 'us-east-1', endpoint, forcePathStyle: true }),
    );
    await recall.storage.saveArtifact!(
      's-1',
      sampleArtifact('s-1', 'tool-s3a', 'quota for tenant 7 is 900 req/min'),
    );
    await recall.storage.saveArtifact!(
      's-2',
      sampleArtifact('s-2', 'tool-s3b', 'quota for tenant 9 is 50 req/min'),
    );
    expect((await recall.read('s-1', 'tool-s3a')).text).toContain('900 req/min');
    expect((await recall.search('s-1', 'tenant quota')).map((hit) => hit.ref)).toEqual(['tool-s3a']);
    await expect(recall.read('s-1', 'tool-s3b')).rejects.toMatchObject({ code: 'unknown_ref' });
  });

  it('raises storage_failed when reading artifacts from a missing bucket', async () => {
    const adapter = s3Storage({
      bucket: 'no-such-bucket',
      region: 'us-east-1',
      endpoint,
      forcePathStyle: true,
    });
    const error = await adapter.listArtifacts!('s').catch((caught: unknown) => caught);
    expect(isCompactError(error, 'storage_failed')).toBe(true);
  });

  it('writes under s3://bucket/prefix/session_id/ with SSE-KMS headers when kmsKeyId is set', async () => {
    const adapter = s3Storage({
      bucket: BUCKET,
      prefix: '/kms-test/',
      kmsKeyId: 'arn:aws:kms:us-east-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab',
      region: 'us-east-1',
      endpoint,
      forcePathStyle: true,
    });
    const before = seen.length;
    const location = await adapter.saveTranscript('session-abc-123', [{ role: 'user', content: 'hi' }], 1);
    await adapter.saveEvent('session-abc-123', sampleCompactionEvents()[0]!);
    expect(location).toMatch(
      /^s3:\/\/agent-archive\/kms-test\/session-abc-123\/transcript-pre-compact-001-[0-9a-z]{9}-[0-9a-f]{8}\.jsonl$/,
    );
    const puts = seen.slice(before).filter((request) => request.method === 'PUT');
    expect(puts).toHaveLength(2);
    for (const put of puts) {
      expect(put.url).toMatch(/^\/agent-archive\/kms-test\/session-abc-123\//);
      expect(put.headers['x-amz-server-side-encryption']).toBe('aws:kms');
      expect(put.headers['x-amz-server-side-encryption-aws-kms-key-id']).toContain('1234abcd-12ab');
      // Credentials came from the default chain (the environment), signed as SigV4.
      expect(String(put.headers.authorization)).toMatch(/^AWS4-HMAC-SHA256 Credential=S3RVER\//);
    }
    const keys = await listKeys(reader(), 'kms-test/session-abc-123/events/');
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatch(/events\/\d{13}-[a-z0-9]{6}-000001\.json$/);
  });

  it('never replaces or copies an earlier transcript: each write has its own key, growth is written as parts (issues 24, 34)', async () => {
    const adapter = s3Storage({ bucket: BUCKET, client: reader() });
    const first = [{ role: 'user', content: 'first run' }];
    await adapter.saveTranscript('lost-state', first, 1);
    await adapter.saveTranscript('lost-state', [...first, { role: 'assistant', content: 'grown' }], 1);
    // The session's state was lost: the next run writes step 1 again.
    await adapter.saveTranscript('lost-state', [{ role: 'user', content: 'second run' }], 1);
    const keys = (await listKeys(reader(), 'lost-state/')).sort();
    expect(keys.some((key) => key.endsWith('.prev'))).toBe(false);
    expect(keys).toHaveLength(3);
    const text = async (key: string) =>
      (await reader().send(new GetObjectCommand({ Bucket: BUCKET, Key: key }))).Body!.transformToString(
        'utf8',
      );
    expect(keys[1]).toMatch(/\.part\.jsonl$/);
    const whole = await readTranscriptLines(keys[1]!.slice('lost-state/'.length), async (name) =>
      text(`lost-state/${name}`),
    );
    expect(whole.map((line) => JSON.parse(line).content)).toEqual(['first run', 'grown']);
    expect(await text(keys[0]!)).toContain('first run');
    expect(await text(keys[2]!)).toContain('second run');
  });

  it('sends no SSE headers without kmsKeyId and accepts an injected client', async () => {
    const client = reader();
    const adapter = s3Storage({ bucket: BUCKET, client });
    const before = seen.length;
    const location = await adapter.saveSummary(
      's2',
      {
        sessionId: 's2',
        step: 3,
        text: 'x',
        tokens: 1,
        strategy: 'brief',
        summarizer: 'embedded',
        coveredIds: [],
        createdAt: 0,
      },
      3,
    );
    expect(location).toMatch(/^s3:\/\/agent-archive\/s2\/summary-003-[0-9a-z]{9}-[0-9a-f]{8}\.json$/);
    const put = seen.slice(before).find((request) => request.method === 'PUT');
    expect(put?.headers['x-amz-server-side-encryption']).toBeUndefined();
    await adapter.close?.();
  });

  it('gives the version floor: a session store that lost its data resumes above the archived summaries (issue 46)', async () => {
    // Not the in-process store (which cannot lose data, so has no floor): one that did.
    class LostStore extends MemorySessionStore {}
    const storage = () =>
      s3Storage({ bucket: BUCKET, prefix: 'floor', region: 'us-east-1', endpoint, forcePathStyle: true });
    const options = { maxContextTokens: 3_000, tokenCounter: charCounter, policy: { hardCapBuffer: 100 } };
    const before = new CompactManager({ ...options, store: new LostStore(), storage: storage() });
    let messages = chatTurns(16, 100);
    let highest = 0;
    for (let step = 0; step < 3; step++) {
      highest = (await before.manualCompact('s', messages)).version;
      messages = [...messages, ...chatTurns(4, 100, `a${step}`)];
    }
    await before.shutdown();
    expect(highest).toBe(3);
    const archive = storage();
    expect(await archive.latestSummaryStep?.('s')).toBe(3);
    // A new process on an empty store: the next version is above the archive's, never v1 again.
    const after = new CompactManager({ ...options, store: new LostStore(), storage: archive });
    const result = await after.manualCompact('s', messages);
    expect(result.version).toBe(4);
    expect(JSON.stringify(result.messages)).toContain('<COMPACT-SUMMARY v4>');
    await after.shutdown();
  });

  it('raises storage_failed for a missing bucket and invalid_config without one', async () => {
    const adapter = s3Storage({
      bucket: 'no-such-bucket',
      region: 'us-east-1',
      endpoint,
      forcePathStyle: true,
    });
    const error = await adapter.saveTranscript('s', [], 1).catch((caught: unknown) => caught);
    expect(isCompactError(error, 'storage_failed')).toBe(true);
    expect(String((error as Error).message)).toMatch(
      /s3:\/\/no-such-bucket\/s\/transcript-pre-compact-001-[0-9a-z]{9}-[0-9a-f]{8}\.jsonl/,
    );
    expect(() => s3Storage({ bucket: '' })).toThrow(/bucket/);
  });
});
