/**
 * `npx tsx bench/ai-sdk-warm.ts [--against=DIR] [--size=16000] [--rounds=5]`: the AI SDK
 * middleware's warm call (`transformParams`, nothing triggers), the history growing by one
 * message a call; median per call. With `--against`, a second checkout (e.g. main, from
 * `git archive`) alternated round by round with this one (issue 47 point 2: slicing the first
 * call's conversions must not slow warm calls).
 */
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const here = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;

async function loop(tree: string, size: number) {
  const { CompactManager } = (await import(
    pathToFileURL(path.join(tree, 'src/index.ts')).href
  )) as typeof import('../src/index.js');
  const { compactionMiddleware } = (await import(
    pathToFileURL(path.join(tree, 'src/adapters/ai-sdk/index.ts')).href
  )) as typeof import('../src/adapters/ai-sdk/index.js');
  const { chatOf } = await import('./langchain-middleware.js');
  const names = new Map<string, string>();
  const prompt: unknown[] = (
    chatOf(size) as {
      role: string;
      content?: string | null;
      tool_call_id?: string;
      tool_calls?: { id: string; function: { name: string; arguments: string } }[];
    }[]
  ).map((m) => {
    const text = m.content ? [{ type: 'text', text: m.content }] : [];
    if (m.role === 'assistant') {
      const calls = (m.tool_calls ?? []).map((c) => {
        names.set(c.id, c.function.name);
        return {
          type: 'tool-call',
          toolCallId: c.id,
          toolName: c.function.name,
          input: JSON.parse(c.function.arguments),
        };
      });
      return { role: 'assistant', content: [...text, ...calls] };
    }
    if (m.role === 'tool')
      return {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: m.tool_call_id,
            toolName: names.get(m.tool_call_id ?? ''),
            output: { type: 'text', value: m.content ?? '' },
          },
        ],
      };
    return {
      role: m.role === 'developer' ? 'system' : m.role,
      content: m.role === 'user' ? text : m.content,
    };
  });
  const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 2_000_000_000 });
  await manager.ready();
  const middleware = compactionMiddleware(manager, { sessionId: 'warm' });
  const call = () => middleware.transformParams!({ params: { prompt }, type: 'generate' } as never);
  await call();
  await manager.flush();
  return async (calls: number) => {
    const times: number[] = [];
    const cpu: number[] = [];
    for (let i = 0; i < calls; i++) {
      prompt.push({ role: 'user', content: [{ type: 'text', text: `follow-up ${i}` }] });
      const t = performance.now();
      const c = process.cpuUsage();
      await call();
      const used = process.cpuUsage(c);
      times.push(performance.now() - t);
      cpu.push((used.user + used.system) / 1000);
      await new Promise((resolve) => setImmediate(resolve));
    }
    return { wall: median(times), cpu: median(cpu) };
  };
}

const size = Number(arg('size') ?? 16_000);
const rounds = Number(arg('rounds') ?? 5);
const against = arg('against');
const trees = against ? [path.resolve(against), here] : [here];
const loops = [];
for (const tree of trees) loops.push(await loop(tree, size));
const results = trees.map(() => [] as number[]);
const cpus = trees.map(() => [] as number[]);
for (const run of loops) await run(20);
for (let round = 0; round < rounds; round++)
  for (let k = 0; k < trees.length; k++) {
    // Each side first in every other round: the one that runs second inherits the other's garbage.
    const t = (k + round) % trees.length;
    const { wall, cpu } = await loops[t]!(30);
    results[t]!.push(wall);
    cpus[t]!.push(cpu);
  }
trees.forEach((tree, t) => {
  console.log(
    `${tree === here ? 'this   ' : 'against'} ${size} messages: warm call medians per round ${results[t]!.map((v) => v.toFixed(2)).join(' ')} ms, median ${median(results[t]!).toFixed(2)} ms; CPU ${cpus[t]!.map((v) => v.toFixed(2)).join(' ')}, median ${median(cpus[t]!).toFixed(2)} ms (${tree})`,
  );
});
