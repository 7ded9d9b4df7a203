import fc from 'fast-check';
import { it } from 'vitest';
import type { CompactManager } from '../../src/core/manager/compact-manager.js';
import { LOOP_PATHS } from '../support/sound-loop-drivers.js';
import { Ledger, WINDOW } from '../support/sound-paths.js';

const tokensOf = (pct: number) => Math.round((pct * WINDOW) / 100);
function systemPrompt(tokens: number): string {
  const rules = Array.from(
    { length: Math.round(tokens / 15) },
    (_, k) => `Rule ${k}: always follow the house style and keep every answer short.`,
  );
  return `You are an SRE agent; never restart a host. ${rules.join(' ')}`;
}
class Probe extends Ledger {
  rows: Record<string, unknown>[] = [];
  cur: Record<string, unknown> = {};
  override listen(path: string, manager: CompactManager): void {
    super.listen(path, manager);
    manager.on('*', (e) => {
      const ev = e as { name: string; properties: Record<string, unknown> };
      if (ev.name === 'compact.token_estimate') {
        this.cur = { tEst: ev.properties.tEst, local: ev.properties.tEstLocal, lastRep: ev.properties.lastReported, r: (ev.properties.calibrationRatio as number | undefined)?.toFixed(3) };
        this.rows.push(this.cur);
      }
      if (ev.name === 'compact.pruned_messages') this.cur.after = ev.properties.tokensAfter;
      if (ev.name === 'compact.reduction') this.cur.lv = `${this.cur.lv ?? ''}${ev.properties.level}${ev.properties.summaryLinesGivenUp ? '+L' : ''},`;
    });
  }
  seen = 0;
  override check(path: string, request: any, given: readonly unknown[], context: any) {
    const row = this.rows[this.seen++];
    if (row && 'rawBody' in request) row.server = Math.ceil(request.rawBody.length / 4);
    return super.check(path, request, given, context);
  }
}
const PATH = process.env.REPRO_PATH ?? 'anthropic: create';
it('repro', async () => {
  const cases = fc.sample(fc.record({ steps: fc.integer({ min: 18, max: 24 }), systemPct: fc.integer({ min: 46, max: 54 }), offset: fc.nat(22), stride: fc.constantFrom(5, 7, 9, 11), quality: fc.boolean() }), { seed: Number(process.env.SEEDX ?? 1), numRuns: Number(process.env.N ?? 6) });
  let worst = 0; let over = 0; let total = 0; let lines = 0;
  for (const c of cases) {
    const ledger = new Probe();
    await LOOP_PATHS[PATH]!(ledger, {
      steps: c.steps,
      sizes: { outputTokens: Array.from({ length: c.steps }, (_, k) => tokensOf(2 + ((c.offset + k * c.stride) % 23))), noteTokens: [0] },
      api: 'chat', promptTokens: 60, system: systemPrompt(tokensOf(c.systemPct)), preset: c.quality ? 'quality' : 'default', ledgerPath: PATH,
    }).catch((e) => console.log('threw', e.message));
    for (const r of ledger.rows) { total++; const s = (r.server as number) + 1200; if (s > WINDOW) over++; worst = Math.max(worst, s / WINDOW); if (String(r.lv ?? '').includes('+L')) lines++; }
    if (process.env.V) console.table(ledger.rows);
    console.log(JSON.stringify(c), 'viol', ledger.of(PATH).violations.length, ledger.of(PATH).violations.slice(0, 2));
  }
  console.log(`${PATH}: requests ${total}, over window ${over}, worst (input+reply) ${(worst * 100).toFixed(1)}% of window, summary_lines ${lines}`);
}, 600_000);
