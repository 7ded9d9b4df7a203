import { cp, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { cli, useTempFiles } from '../../../test/support/cli-fixtures.js';
import { syntheticSession } from '../../testing/synthetic-session.js';
import { EXIT_CODES } from '../run-cli.js';

const temp = useTempFiles();
const SECRET = 'sk-proj-Qw3eR5tY7uI9oP1aS3dF5gH7jK9lZ1xC';
let transcript: string;
let trace: string;
let archive: string;
let replayRun: Awaited<ReturnType<typeof cli>>;

beforeAll(async () => {
  const session = syntheticSession({ turns: 16, seed: 5 });
  session.splice(1, 0, { role: 'user', content: `Deploy with api_key=${SECRET} please.` });
  transcript = await temp.file('session.json', session);
  trace = temp.path('trace.jsonl');
  archive = temp.path('archive');
  replayRun = await cli(['replay', transcript, '--max-context', '6000', '--trace', trace, '--out', archive]);
});

const compactionsOf = async (path: string) =>
  (await readFile(path, 'utf8'))
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line))
    .filter((event) => event.name === 'compact.trigger_decision' && event.properties.triggered).length;

describe('report', () => {
  it('writes one self-contained page from a JSONL trace: a marker and a card per compaction, nothing fetched', async () => {
    expect(replayRun.code).toBe(0);
    const out = temp.path('from-trace.html');
    const run = await cli(['report', trace, '--out', out]);
    expect(run.code).toBe(EXIT_CODES.ok);
    const compactions = await compactionsOf(trace);
    expect(run.stdout).toBe(
      `report: ${out} (${compactions} compactions, ${replayRun.stdout.match(/in (\d+) calls/)?.[1]} calls)\n`,
    );
    const html = await readFile(out, 'utf8');
    expect(html.startsWith('<!doctype html>')).toBe(true);
    expect(html.match(/<circle class="compaction-marker/g)).toHaveLength(compactions);
    expect(html.match(/<section class="card/g)).toHaveLength(compactions);
    expect(html).not.toMatch(/<script|<link|src="http|href="http/);
    expect(html).not.toContain(SECRET);
  });

  it('replays a transcript itself, with the same compactions as replay', async () => {
    const out = temp.path('from-transcript.html');
    const run = await cli(['report', transcript, '--out', out, '--max-context', '6000']);
    expect(run.code).toBe(0);
    // The same replay without an archive (an archive adds recall refs to summaries and
    // placeholders, which moves later triggers by a few tokens).
    const bare = temp.path('bare-trace.jsonl');
    expect((await cli(['replay', transcript, '--max-context', '6000', '--trace', bare])).code).toBe(0);
    expect((await readFile(out, 'utf8')).match(/<section class="card/g)).toHaveLength(
      await compactionsOf(bare),
    );
  });

  it("reads an archived session folder's events.jsonl", async () => {
    const out = temp.path('from-archive.html');
    const run = await cli(['report', join(archive, 'replay'), '--out', out]);
    expect(run.code).toBe(0);
    const html = await readFile(out, 'utf8');
    expect(html).toContain('calls that compacted only');
    expect(html.match(/<section class="card/g)).toHaveLength(await compactionsOf(trace));
  });

  it.each([
    ['missing file', async () => temp.path('nope.jsonl'), /cannot read .*nope\.jsonl: ENOENT/],
    ['empty file', async () => temp.file('empty.jsonl', ''), /empty/],
    ['not JSON', async () => temp.file('bad.jsonl', 'not json at all'), /not valid JSON/],
    [
      'a broken trace line',
      async () =>
        temp.file(
          'broken.jsonl',
          '{"name":"compact.token_estimate","properties":{}}\n{"name":\n{"name":"compact.token_estimate","properties":{}}\n',
        ),
      /broken\.jsonl line 2: not valid JSON/,
    ],
    ['wrong shape', async () => temp.file('shape.json', { conversation: [] }), /needs a "messages" array/],
  ])('%s: one line on stderr and exit 2', async (_name, make, message) => {
    const run = await cli(['report', await make(), '--out', temp.path('never.html')]);
    expect(run.code).toBe(EXIT_CODES.badInput);
    expect(run.stderr).toMatch(message);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('needs --out', async () => {
    const run = await cli(['report', trace]);
    expect(run.code).toBe(EXIT_CODES.badInput);
    expect(run.stderr).toMatch(/--out FILE is required/);
  });

  it('an --out in a missing folder names the flag, like --report of compact', async () => {
    const out = join(temp.path('no-such-folder'), 'report.html');
    const run = await cli(['report', trace, '--out', out]);
    expect(run.code).toBe(EXIT_CODES.badInput);
    expect(run.stderr).toBe(`error: --out ${out}: cannot write (ENOENT)\n`);
  });
});

describe('status', () => {
  it('shows the layers, the last compaction and errors of an archived session', async () => {
    const run = await cli(['status', join(archive, 'replay')]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/model: gpt-4o, window 6,000; \d+ compactions/);
    expect(run.stdout).toMatch(/last compaction .*: [\d,]+ -> [\d,]+ tokens \([\d.]+% of the window\)/);
    expect(run.stdout).toMatch(
      / {2}pinned +[\d,]+ +\(\d+ messages?\)\n {2}summary +[\d,]+ +\(v\d+, embedded, task_state\)\n {2}recent +[\d,]+/,
    );
    expect(run.stdout).toContain('errors: 0');
    expect(run.stdout).not.toContain(SECRET);
    const json = JSON.parse((await cli(['status', join(archive, 'replay'), '--json'])).stdout);
    expect(json.compactions).toBe(await compactionsOf(trace));
    expect(json.layers.pinned + json.layers.summary + json.layers.recent).toBe(
      json.lastCompaction.tokensAfter,
    );
  });

  it('an archive whose summary files were deleted still counts the summary from its events, not 0', async () => {
    const pruned = temp.path('pruned');
    await cp(join(archive, 'replay'), pruned, { recursive: true });
    for (const name of await readdir(pruned)) if (name.startsWith('summary-')) await rm(join(pruned, name));
    const run = await cli(['status', pruned, '--json']);
    expect(run.code).toBe(0);
    const json = JSON.parse(run.stdout);
    const summaries = (await readFile(join(pruned, 'events.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
      .filter((event) => event.name === 'compact.summary_created');
    expect(summaries.length).toBeGreaterThan(0);
    expect(json.layers.summary).toBe(summaries.at(-1).properties.summaryTokens);
    expect(json.layers.pinned + json.layers.summary + json.layers.recent).toBe(
      json.lastCompaction.tokensAfter,
    );
  });

  it('a folder that is not an archived session: one line and exit 2', async () => {
    for (const path of [temp.path('nowhere'), temp.path('')]) {
      const run = await cli(['status', path]);
      expect(run.code).toBe(EXIT_CODES.badInput);
      expect(run.stderr.trim().split('\n')).toHaveLength(1);
      expect(run.stderr).toMatch(/not (a folder|an archived session)/);
    }
  });
});
