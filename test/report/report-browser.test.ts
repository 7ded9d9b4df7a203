/**
 * The HTML report in a real browser: Debian's Chromium driven by playwright-core opens the
 * page `agent-compaction report` wrote and checks what a person would see. Skipped with one
 * notice line without Chromium, unless COMPACT_REQUIRE_CHROMIUM=1 (CI).
 */
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callPoints } from '../../src/cli/replay/call-points.js';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import type { SummarizeRequest } from '../../src/core/summary/summarizer.js';
import { jsonlExporter } from '../../src/exporters/jsonl/jsonl-exporter.js';
import { syntheticSession } from '../../src/testing/synthetic-session.js';
import { chromiumAvailable, chromiumPath } from '../support/chromium.js';
import { cli } from '../support/cli-fixtures.js';

const available = chromiumAvailable('report browser test');
const SECRET = 'sk-proj-Zq8xV3mN5bT2kL9pR4sW7yU1cE6hJ0aD';
const HOSTILE = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned=2">';
const artifacts = process.env.COMPACT_TEST_ARTIFACTS ?? join(tmpdir(), 'agent-compaction-test-artifacts');

let dir: string;
let tracePath: string;
let htmlPath: string;

/** Opens the report in a fresh browser and saves a screenshot of its first screen. */
async function screenshotReport(path: string): Promise<void> {
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    args: ['--no-sandbox'],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
    await page.goto(pathToFileURL(htmlPath).href);
    await page.screenshot({ path });
  } finally {
    await browser.close().catch(() => {});
  }
}

/** A trace from a real manager: a summarizer that fails once (a fallback), hostile text and a secret in the history. */
async function recordTrace(path: string): Promise<void> {
  let calls = 0;
  const flaky = {
    name: 'flaky',
    async summarize(request: SummarizeRequest) {
      calls++;
      if (calls === 2) throw new Error('provider returned 503');
      return {
        text: `## Task\n- keep going (call ${calls})\n## Notes\n- ${request.messages.length} messages folded`,
      };
    },
  };
  const manager = new CompactManager({
    maxContextTokens: 6_000,
    summarizer: flaky,
    exporters: [jsonlExporter({ path })],
  });
  const session = syntheticSession({ turns: 14, seed: 11 });
  session.splice(1, 0, { role: 'user', content: `Use api_key=${SECRET} and keep this: ${HOSTILE}` });
  for (const end of callPoints(session)) await manager.compact('browser-session', session.slice(0, end));
  await manager.shutdown();
}

beforeAll(async () => {
  if (!available) return;
  dir = await mkdtemp(join(tmpdir(), 'agent-compaction-report-'));
  tracePath = join(dir, 'trace.jsonl');
  htmlPath = join(dir, 'report.html');
  await recordTrace(tracePath);
  const run = await cli(['report', tracePath, '--out', htmlPath]);
  if (run.code !== 0) throw new Error(`report failed: ${run.stderr}`);
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe.skipIf(!available)('the HTML report in Chromium', () => {
  it('renders without console errors: one chart marker and one card per compaction, matching the trace', async () => {
    const events = (await readFile(tracePath, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    const triggeredOps = events
      .filter((event) => event.name === 'compact.trigger_decision' && event.properties.triggered)
      .map((event) => event.operationId);
    const erroredOps = new Set(
      events.filter((event) => event.name === 'compact.error').map((event) => event.operationId),
    );
    const pruned = new Map(
      events
        .filter((event) => event.name === 'compact.pruned_messages')
        .map((event) => [event.operationId, event.properties]),
    );
    expect(triggeredOps.length).toBeGreaterThan(1);
    expect(erroredOps.size).toBeGreaterThan(0);

    const html = await readFile(htmlPath, 'utf8');
    expect(html).not.toContain(SECRET);
    expect(html).not.toMatch(/<script|https?:\/\/(?!www\.w3\.org\/2000\/svg)/);

    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({
      executablePath: chromiumPath(),
      headless: true,
      args: ['--no-sandbox'],
    });
    try {
      const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
      const problems: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error') problems.push(message.text());
      });
      page.on('pageerror', (error) => problems.push(error.message));
      page.on('request', (request) => {
        if (!request.url().startsWith('file:')) problems.push(`network request: ${request.url()}`);
      });
      await page.goto(pathToFileURL(htmlPath).href);
      await page.waitForLoadState('load');

      expect(problems).toEqual([]);
      expect(
        await page.evaluate(() => (globalThis as unknown as { __pwned?: number }).__pwned),
      ).toBeUndefined();
      expect(await page.locator('script, img').count()).toBe(0);

      const markers = page.locator('svg.chart circle.compaction-marker');
      expect(await markers.count()).toBe(triggeredOps.length);
      for (const name of ['window', 'trigger', 'target'])
        expect(await page.locator(`svg.chart line[data-line="${name}"]`).count()).toBe(1);
      const cards = page.locator('section.card');
      expect(await cards.count()).toBe(triggeredOps.length);

      for (const [i, operationId] of triggeredOps.entries()) {
        const card = cards.nth(i);
        const marker = markers.nth(i);
        expect(await card.getAttribute('data-call')).toBe(await marker.getAttribute('data-call'));
        const heading = await card.locator('h3').innerText();
        const figures = pruned.get(operationId);
        expect(heading).toContain(
          `${figures.tokensBefore.toLocaleString('en-US')} → ${figures.tokensAfter.toLocaleString('en-US')} tokens`,
        );
        const hasError = ((await card.getAttribute('class')) ?? '').includes('has-error');
        expect(hasError).toBe(erroredOps.has(operationId));
        if (hasError) expect(await card.locator('.errors').innerText()).toMatch(/fallback: \S+/);
      }
      // The hostile text is shown as text where it appears, never run.
      const text = await page.locator('body').innerText();
      if (events.some((event) => JSON.stringify(event).includes('window.__pwned')))
        expect(text).toContain('<script>window.__pwned');
      // The marker links to its card, by mouse and by keyboard (Tab reaches it, Enter follows it),
      // and the chart is a group whose links a screen reader lists (an "img" hides them).
      expect(await page.locator('svg.chart').first().getAttribute('role')).toBe('group');
      await page.keyboard.press('Tab');
      expect(
        await page.evaluate(() =>
          (
            globalThis as unknown as {
              document: { activeElement: { getAttribute(name: string): string | null } | null };
            }
          ).document.activeElement?.getAttribute('aria-label'),
        ),
      ).toMatch(/^compaction 1 at call \d+$/);
      await page.keyboard.press('Enter');
      await page.waitForURL(/#compaction-1$/);
      await page.goto(pathToFileURL(htmlPath).href);
      await markers.first().click();
      expect(page.url()).toMatch(/#compaction-1$/);
    } finally {
      await browser.close();
    }
    await mkdir(artifacts, { recursive: true });
    const screenshot = join(artifacts, 'report-browser.png');
    await screenshotReport(screenshot).catch(async (error: Error) => {
      // Chromium under heavy load now and then drops the page mid-screenshot: one fresh try.
      console.warn(`report screenshot: retrying after ${error.message.split('\n')[0]}`);
      await screenshotReport(screenshot);
    });
    console.log(`report screenshot: ${screenshot}`);
    expect((await readFile(screenshot)).subarray(1, 4).toString()).toBe('PNG');
  });
});
