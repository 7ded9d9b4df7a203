import { describe, expect, it } from 'vitest';
import { LATE_FACTOR, LeadTime } from './lead-time.js';
import { BACKLOG_AFTER, type BacklogInfo, QueueBacklog } from './queue-backlog.js';

/** A session growing `tokens` per call every `ms` (on an injected clock), from `from`. */
function grow(lead: LeadTime, key: string, calls: number, tokens: number, ms: number, from = 5_000): number {
  for (let call = 0; call < calls; call++) lead.recordCall(key, 1, from + call * tokens, (call + 1) * ms);
  return from + (calls - 1) * tokens;
}

const AT = { trigger: 8_500, floor: 5_000, fixed: 7_000 };

describe('the learned lead time', () => {
  it('starts at prepareAtPct until a latency and the growth are known', () => {
    const lead = new LeadTime();
    expect(lead.threshold('s', AT.trigger, AT.floor, AT.fixed)).toEqual({ tokens: 7_000, basis: 'fixed' });
    grow(lead, 's', 3, 100, 1_000);
    expect(lead.threshold('s', AT.trigger, AT.floor, AT.fixed).basis).toBe('fixed');
    lead.recordLatency(2_000);
    expect(lead.threshold('s', AT.trigger, AT.floor, AT.fixed)).toMatchObject({ basis: 'learned' });
  });

  it('a slower queue starts earlier; a faster growth starts earlier; bounded by the floor and one call', () => {
    const threshold = (latency: number, tokensPerCall: number) => {
      const lead = new LeadTime();
      grow(lead, 's', 5, tokensPerCall, 1_000);
      lead.recordLatency(latency);
      return lead.threshold('s', AT.trigger, AT.floor, AT.fixed);
    };
    // 1 s lead (1.25 s with the margin) at 1 s a call: 2 calls + 1 ahead.
    expect(threshold(1_000, 100)).toEqual({ tokens: 8_200, basis: 'learned', leadMs: 1_250, callsAhead: 3 });
    expect(threshold(4_000, 100).tokens).toBe(8_500 - 6 * 100);
    expect(threshold(4_000, 200).tokens).toBe(8_500 - 6 * 200);
    // A queue far slower than the session: from where a compaction leaves it.
    expect(threshold(60_000, 100).tokens).toBe(5_000);
    // A queue far faster: still one call ahead of the trigger.
    expect(threshold(1, 100).tokens).toBe(8_500 - 2 * 100);
  });

  it('a late job counts as a longer latency; the p90 of the recent samples is the lag', () => {
    const lead = new LeadTime();
    for (let i = 0; i < 10; i++) lead.recordLatency(100);
    expect(lead.latencyMs()).toBe(100);
    lead.recordLatency(1_000, true);
    lead.recordLatency(1_000, true);
    expect(lead.latencyMs()).toBe(1_000 * LATE_FACTOR);
    for (let i = 0; i < 40; i++) lead.recordLatency(200);
    expect(lead.latencyMs()).toBe(200);
  });

  it('growth: calls on another version and idle gaps are not a call', () => {
    const lead = new LeadTime();
    lead.recordCall('s', 1, 5_000, 0);
    lead.recordCall('s', 1, 5_100, 1_000);
    lead.recordCall('s', 2, 3_000, 2_000); // compacted: no delta
    lead.recordCall('s', 2, 3_100, 3_000);
    lead.recordCall('s', 2, 3_200, 3_000 + 3_600_000); // an idle hour: the tokens count, not the time
    lead.recordLatency(1_000);
    expect(lead.threshold('s', AT.trigger, 3_000, AT.fixed)).toMatchObject({ callsAhead: 3, tokens: 8_200 });
  });

  it('too late: never before a job was seen published; then when the trigger comes before the median latency', () => {
    const lead = new LeadTime();
    const at = grow(lead, 's', 3, 500, 1_000, 7_000);
    lead.recordLatency(5_000, true);
    expect(lead.tooLate('s', at, AT.trigger), 'a stopped queue still gets its jobs').toBe(false);
    lead.recordLatency(5_000);
    expect(lead.tooLate('s', at, AT.trigger)).toBe(true);
    expect(lead.tooLate('s', 2_000, AT.trigger)).toBe(false);
  });
});

describe('the queue backlog', () => {
  it(`${BACKLOG_AFTER} late jobs in a row: one warning per episode; a job in time ends it`, () => {
    const told: BacklogInfo[] = [];
    const lead = new LeadTime();
    const backlog = new QueueBacklog(lead, 'q', (info) => told.push(info));
    for (let i = 0; i < BACKLOG_AFTER - 1; i++) backlog.observe('s', 0, undefined, 1_000);
    backlog.observe('s', 0, 500, 1_000);
    for (let i = 0; i < BACKLOG_AFTER + 4; i++) backlog.observe(`s${i}`, 0, undefined, 2_000);
    expect(told).toEqual([
      { queue: 'q', late: BACKLOG_AFTER, waitedMs: 2_000, leadTimeMs: lead.leadMs(), key: 's2' },
    ]);
    expect(backlog.status()).toEqual({ late: 2 * BACKLOG_AFTER + 3, backlogEpisodes: 1, backlog: true });
    backlog.observe('s', 0, 100, 1_000);
    expect(backlog.status().backlog).toBe(false);
    for (let i = 0; i < BACKLOG_AFTER; i++) backlog.observe('s', 0, undefined, 1_000);
    expect(told).toHaveLength(2);
  });

  it('a publish time after the trigger (another clock) is bounded by the time waited', () => {
    const lead = new LeadTime();
    new QueueBacklog(lead, 'q').observe('s', 1_000, 9_000, 2_000);
    expect(lead.latencyMs()).toBe(1_000);
  });

  it('a job the trigger waited for while its worker ran is in time (its latency once); one never published is late', () => {
    const lead = new LeadTime();
    const backlog = new QueueBacklog(lead, 'q');
    // One clock reading for both times: a loaded machine may pause between two readings.
    const now = Date.now();
    const queuedAt = now - 2_000;
    // Not there at the first read, published during the wait (300 ms before now), read again.
    const awaited = backlog.observer('s', queuedAt);
    awaited.seen(undefined);
    awaited.seen(now - 300);
    awaited.seen(now - 300);
    awaited.end();
    expect(backlog.status().late).toBe(0);
    expect(lead.latencyMs()).toBe(1_700);
    const never = backlog.observer('s', queuedAt);
    never.seen(undefined);
    never.end();
    expect(backlog.status().late).toBe(1);
    expect(lead.latencyMs()).toBeGreaterThanOrEqual(2_000 * LATE_FACTOR);
  });
});
