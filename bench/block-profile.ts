/**
 * Who held the loop (issue 47 point 2): a CPU profile (`node:inspector`, 250 us samples) taken
 * while a path runs under {@link watchBlocks}, cut to the longest gap the sampler saw. Per
 * gap, the functions with the most samples (self time) and the nearest frame of this package
 * (`/src/`) above each sample, so that a block is put down to our code or to the SDK's, V8's
 * or the collector's.
 */
import { Session } from 'node:inspector/promises';
import { type Blocks, watchBlocks } from './block-monitor.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** A block's attribution: sample shares of the top functions and of our nearest frames. */
export interface BlockAttribution {
  samples: number;
  self: string[];
  ours: string[];
  /** The commonest stacks (our frames only, innermost first). */
  stacks: string[];
}

const short = (frame: ProfileNode['callFrame']) => {
  const file = frame.url.replace(/^.*\/(src|node_modules)\//, '$1/');
  return `${frame.functionName || '(anonymous)'} ${file}:${frame.lineNumber + 1}`;
};

/** The top `count` of a tally as `share% name`. */
function top(tally: Map<string, number>, total: number, count = 6): string[] {
  return [...tally]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([name, n]) => `${((100 * n) / total).toFixed(0)}% ${name}`);
}

/** The samples of `profile` between `from` and `to` (profile clock, us), attributed. */
function attribute(profile: Profile, from: number, to: number): BlockAttribution {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const self = new Map<string, number>();
  const ours = new Map<string, number>();
  const stacks = new Map<string, number>();
  let samples = 0;
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i] ?? 0;
    if (at < from || at > to) continue;
    const node = byId.get(profile.samples[i]!)!;
    if (node.callFrame.functionName === '(idle)') continue;
    samples++;
    const name = short(node.callFrame);
    self.set(name, (self.get(name) ?? 0) + 1);
    let up: ProfileNode | undefined = node;
    while (up && !up.callFrame.url.includes('/src/')) up = byId.get(parent.get(up.id) ?? -1);
    const mine = up ? short(up.callFrame) : `(none of ours) ${name}`;
    ours.set(mine, (ours.get(mine) ?? 0) + 1);
    const chain: string[] = [];
    for (
      let at: ProfileNode | undefined = up;
      at && chain.length < 10;
      at = byId.get(parent.get(at.id) ?? -1)
    )
      if (at.callFrame.url.includes('/src/')) chain.push(at.callFrame.functionName || '(anonymous)');
    const stack = chain.join(' < ');
    stacks.set(stack, (stacks.get(stack) ?? 0) + 1);
  }
  const total = Math.max(1, samples);
  return { samples, self: top(self, total), ours: top(ours, total), stacks: top(stacks, total, 3) };
}

/** {@link watchBlocks} under the profiler: the row and who held its longest gap. */
export async function watchAttributed(
  path: string,
  work: () => Promise<unknown>,
): Promise<Blocks & { attribution: BlockAttribution }> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 250 });
  await session.post('Profiler.start');
  // The profile's clock is the monotonic one in microseconds; `performance.now()` is offset.
  const offset = Number(process.hrtime.bigint() / 1000n) - performance.now() * 1000;
  const row = await watchBlocks(path, work);
  const { profile } = (await session.post('Profiler.stop')) as unknown as { profile: Profile };
  session.disconnect();
  const attribution =
    row.worstGap === undefined
      ? { samples: 0, self: [], ours: [], stacks: [] }
      : attribute(profile, row.worstGap[0] * 1000 + offset, row.worstGap[1] * 1000 + offset);
  // `--all-gaps`: every gap over the target attributed on stderr, not only the longest.
  if (process.argv.includes('--all-gaps'))
    for (const [from, to, cpu] of row.longGaps ?? []) {
      const each = attribute(profile, from * 1000 + offset, to * 1000 + offset);
      process.stderr.write(
        `gap ${cpu.toFixed(1)} ms CPU at ${from.toFixed(0)} ms, ${each.samples} samples\n  self: ${each.self.join('; ')}\n  ours: ${each.ours.join('; ')}\n  stacks: ${each.stacks.join(' | ')}\n`,
      );
    }
  return { ...row, attribution };
}
