/**
 * `node --expose-gc --import tsx bench/live-objects.ts [--messages=16000] [--tree=DIR] [--top=20]`:
 * the objects a cold first call leaves alive, by kind (issue 47 point 2: each object alive
 * across a cold call is copied by the scavenges that run during it, and the pause is per-object
 * work). A fresh manager, its tokenizer loaded, makes one call on a history it has never seen
 * (parsed from JSON first, then promoted), waits for the work it left for later, and keeps it
 * alive; two heap snapshots, before and after, are compared by node id: the nodes only the
 * second holds are the call's. Printed: their number (JavaScript objects and strings apart
 * from code and engine internals), bytes, per message, and the most frequent kinds (a plain
 * object by the names of its properties). Counts do not depend on the machine's load.
 *
 * `--tree=DIR`: another checkout of the package (for example main's, to compare).
 */
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { getHeapSnapshot } from 'node:v8';

const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);

interface Snapshot {
  snapshot: {
    meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] };
  };
  nodes: number[];
  edges: number[];
  strings: string[];
}

async function snapshot(): Promise<Snapshot> {
  const chunks: string[] = [];
  for await (const chunk of getHeapSnapshot()) chunks.push(String(chunk));
  return JSON.parse(chunks.join('')) as Snapshot;
}

/**
 * The ids of every node of `snap`, sorted, in `into` (made before the snapshot, so that what
 * holds them is not counted as the call's).
 */
function nodeIds(snap: Snapshot, into: Uint32Array): Uint32Array {
  const fields = snap.snapshot.meta.node_fields;
  const width = fields.length;
  const id = fields.indexOf('id');
  const count = snap.nodes.length / width;
  if (count > into.length) throw new Error(`more than ${into.length} nodes`);
  for (let n = 0; n < count; n++) into[n] = snap.nodes[n * width + id]!;
  return into.subarray(0, count).sort();
}

/** Whether the sorted `ids` hold `id`. */
function holds(ids: Uint32Array, id: number): boolean {
  let low = 0;
  let high = ids.length - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    const at = ids[middle]!;
    if (at === id) return true;
    if (at < id) low = middle + 1;
    else high = middle - 1;
  }
  return false;
}

const JS_TYPES = new Set([
  'object',
  'string',
  'array',
  'concatenated string',
  'sliced string',
  'number',
  'closure',
  'regexp',
]);

/** The nodes of `after` not in `before`, counted by kind. */
function newNodes(before: Uint32Array, after: Snapshot) {
  const meta = after.snapshot.meta;
  const width = meta.node_fields.length;
  const [type, name, selfSize, edgeCount, id] = ['type', 'name', 'self_size', 'edge_count', 'id'].map((f) =>
    meta.node_fields.indexOf(f),
  ) as [number, number, number, number, number];
  const edgeWidth = meta.edge_fields.length;
  const [edgeType, edgeName] = ['type', 'name_or_index'].map((f) => meta.edge_fields.indexOf(f)) as [
    number,
    number,
  ];
  const kinds = new Map<string, { count: number; bytes: number }>();
  let js = 0;
  let other = 0;
  let bytes = 0;
  let edge = 0;
  for (let i = 0; i < after.nodes.length; i += width) {
    const edges = after.nodes[i + edgeCount]!;
    const from = edge;
    edge += edges * edgeWidth;
    if (holds(before, after.nodes[i + id]!)) continue;
    const nodeType = meta.node_types[0][after.nodes[i + type]!]!;
    if (!JS_TYPES.has(nodeType)) {
      other++;
      continue;
    }
    js++;
    const size = after.nodes[i + selfSize]!;
    bytes += size;
    let kind = nodeType.endsWith('string')
      ? 'string'
      : `${nodeType} ${after.strings[after.nodes[i + name]!]}`;
    if (nodeType === 'object' && after.strings[after.nodes[i + name]!] === 'Object') {
      const properties: string[] = [];
      for (let e = from; e < edge; e += edgeWidth)
        if (meta.edge_types[0][after.edges[e + edgeType]!] === 'property') {
          const property = after.strings[after.edges[e + edgeName]!]!;
          if (property !== '__proto__') properties.push(property);
        }
      kind = `{${properties.sort().join(', ')}}`;
    }
    const row = kinds.get(kind) ?? { count: 0, bytes: 0 };
    row.count++;
    row.bytes += size;
    kinds.set(kind, row);
  }
  return { js, other, bytes, kinds };
}

async function main(): Promise<void> {
  const gc = globalThis.gc as (() => void) | undefined;
  if (!gc) throw new Error('run with node --expose-gc --import tsx bench/live-objects.ts');
  const here = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const tree = path.resolve(arg('tree') ?? here);
  const messages = Number(arg('messages') ?? 16_000);
  const top = Number(arg('top') ?? 20);
  const { syntheticSession } = (await import(
    pathToFileURL(path.join(tree, 'src/testing/synthetic-session.ts')).href
  )) as typeof import('../src/testing/synthetic-session.js');
  const { hasOpenToolCalls } = await import('../test/support/open-tool-calls.js');
  // As bench/scavenges.ts: a synthetic coding session cut at the end of a turn.
  let turns = Math.ceil(messages / 8);
  let generated = syntheticSession({ turns, seed: 7, resultChars: 2500 });
  while (generated.length < messages) {
    turns = Math.ceil((turns * messages) / generated.length) + 1;
    generated = syntheticSession({ turns, seed: 7, resultChars: 2500 });
  }
  let end = messages;
  while (end > 0 && hasOpenToolCalls(generated.slice(Math.max(0, end - 40), end))) end--;
  const history = JSON.parse(JSON.stringify(generated.slice(0, end))) as unknown[];
  generated = [];
  const { CompactManager } = (await import(
    pathToFileURL(path.join(tree, 'src/index.ts')).href
  )) as typeof import('../src/index.js');
  const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 20_000_000 });
  await manager.ready();
  const idSpace = new Uint32Array(4_000_000);
  gc();
  gc();
  const before = nodeIds(await snapshot(), idSpace);
  gc();
  await manager.compact('cold', history);
  await manager.flush();
  gc();
  gc();
  const { js, other, bytes, kinds } = newNodes(before, await snapshot());
  console.log(
    `${tree}: ${history.length} messages: ${js} objects and strings alive after the cold call (${(js / history.length).toFixed(1)} a message, ${(bytes / 2 ** 20).toFixed(1)} MB), ${other} code and engine nodes`,
  );
  for (const [kind, row] of [...kinds].sort((a, b) => b[1].count - a[1].count).slice(0, top))
    console.log(
      `  ${String(row.count).padStart(7)} ${(row.bytes / 2 ** 10).toFixed(0).padStart(6)} KB  ${kind.slice(0, 110)}`,
    );
  // Kept alive until both snapshots are read.
  void manager.endSession;
}

await main();
