import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { findRedisServer, redisAvailable } from '../support/redis-server.js';

describe('the Redis suites on a machine without redis-server', () => {
  it('finds redis-server on PATH, not in hard-coded folders', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fake-redis-'));
    const other = mkdtempSync(join(tmpdir(), 'empty-'));
    expect(findRedisServer('')).toBeUndefined();
    expect(findRedisServer(other)).toBeUndefined();
    writeFileSync(join(dir, 'redis-server'), '#!/bin/sh\n');
    chmodSync(join(dir, 'redis-server'), 0o644);
    expect(findRedisServer(`${other}:${dir}`)).toBeUndefined(); // not executable
    chmodSync(join(dir, 'redis-server'), 0o755);
    expect(findRedisServer(`${other}:${dir}`)).toBe(join(dir, 'redis-server'));
  });

  it('skips with one notice line, or fails under COMPACT_REQUIRE_REDIS=1', () => {
    const lines: string[] = [];
    expect(redisAvailable('Redis tests', { PATH: '' }, (line) => lines.push(line))).toBe(false);
    expect(lines).toEqual([expect.stringMatching(/^skipped Redis tests: redis-server is not on PATH/)]);
    expect(() => redisAvailable('Redis tests', { PATH: '', COMPACT_REQUIRE_REDIS: '1' })).toThrow(
      /COMPACT_REQUIRE_REDIS=1 but redis-server is not on PATH/,
    );
  });

  it("runs the suite's helper in a fresh process with an empty PATH", async () => {
    const script =
      "const m = await import('./test/support/redis-server.ts'); console.log(String(m.redisAvailable('Redis tests')));";
    const { stdout, stderr } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', script],
      { cwd: process.cwd(), env: { PATH: '' } },
    );
    expect(stdout.trim()).toBe('false');
    expect(
      stderr
        .trim()
        .split('\n')
        .filter((line) => line.startsWith('skipped')),
    ).toHaveLength(1);
  });
});
