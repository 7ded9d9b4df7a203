import { describe, expect, it } from 'vitest';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import type { PreparationJob, PreparationQueue } from '../../src/core/queues/preparation-queue.js';
import { charCounter, chatTurns, GatedSummarizer } from '../support/background-fixtures.js';
import { leakFinder } from './support/secret-shapes.js';

/**
 * review-87a: a summary prepared in the background (in process, or as a queued job) folds the
 * oldest messages; a secret split between the last folded message and the first kept one
 * (`the bot token is ghp_x7Kq2M` | `9vTz...`) is cut across that seam, as the foreground's
 * summarizer slice is (run-cascade.ts, `cutOuterSeams`): no run of 8 of it leaves.
 */

const GITHUB = 'ghp_x7Kq2M9vTz4Lw8Rj3Nc6Pb1Yd5Hf0Gs2Ua7E';
const find = leakFinder([{ kind: 'github', secret: GITHUB, text: GITHUB }], 8);

/**
 * 50 turns of 200 tokens (one a character); at 35 turns the preparation folds the 46 oldest
 * messages (chatTurns' sizes, kept here: each message stays 100 characters), and the token's
 * first 10 characters end the last of them, the rest opens the first kept one.
 */
function history(): Record<string, unknown>[] {
  const turns = chatTurns(50);
  turns[45] = {
    role: 'assistant',
    content: `A22 the bot token is ${GITHUB.slice(0, 10)}`.padStart(100, 'a'),
  };
  turns[46] = { role: 'user', content: `${GITHUB.slice(10)} Q23 use it for the release `.padEnd(100, 'q') };
  return turns;
}

/** A queue that keeps its jobs, as they would leave the process. */
class KeptQueue implements PreparationQueue {
  readonly name = 'kept';
  readonly jobs: string[] = [];
  async enqueue(job: PreparationJob): Promise<void> {
    this.jobs.push(JSON.stringify(job));
  }
  async withdraw(): Promise<void> {}
}

const options = { maxContextTokens: 10_000, tokenCounter: charCounter, policy: { hardCapBuffer: 500 } };

describe('a secret split over the outer seam of a background preparation', () => {
  it('holds the token split, and the fold ends between its halves (the test can fail)', async () => {
    expect(find(JSON.stringify(history())).length).toBeGreaterThan(0);
    const summarizer = new GatedSummarizer('gated', true);
    const manager = new CompactManager({ ...options, summarizer, background: true, redaction: false });
    for (let n = 30; n <= 38; n++) await manager.preflight('s', history().slice(0, 2 * n));
    await summarizer.requested();
    const folded = summarizer.requests[0]!.messages;
    expect(folded).toHaveLength(46);
    expect(folded.at(-1)!.text).toContain(GITHUB.slice(0, 10));
    await manager.shutdown();
  });

  it('leaves none in what the in-process preparation sends its summarizer', async () => {
    const summarizer = new GatedSummarizer('gated', true);
    const manager = new CompactManager({ ...options, summarizer, background: true });
    for (let n = 30; n <= 38; n++) await manager.preflight('s', history().slice(0, 2 * n));
    await summarizer.requested();
    const sent = JSON.stringify(summarizer.requests[0]!.messages);
    expect(sent).toContain('A22 the bot token is');
    expect(find(sent)).toEqual([]);
    await manager.shutdown();
  });

  it('leaves none in the job a preparation queue gets', async () => {
    const queue = new KeptQueue();
    const manager = new CompactManager({
      ...options,
      preparationQueue: queue,
      summarizer: { name: 'agent', summarize: async () => ({ text: '## Task\n- by the agent' }) },
    });
    for (let n = 30; n <= 38 && queue.jobs.length === 0; n++) {
      await manager.compact('s', history().slice(0, 2 * n));
      while (manager.backgroundStatus().running > 0) await new Promise((resolve) => setImmediate(resolve));
    }
    expect(queue.jobs).toHaveLength(1);
    expect(queue.jobs[0]).toContain('A22 the bot token is');
    expect(find(queue.jobs[0]!)).toEqual([]);
    await manager.shutdown();
  });
});
