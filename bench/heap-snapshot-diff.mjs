// What a run left on the heap, from two V8 heap snapshots of one process (object ids are stable
// within a process): the objects of `after` whose id `before` lacks, grouped by category (code,
// feedback, bytecode, maps, strings, ...) and by type and name, self sizes in KB.
// With `--across`, the two snapshots come from two processes: no ids in common, so the totals
// of each group are compared instead (what `after` holds more than `before`).
//
// HEAP_SNAPSHOTS=/tmp/s node --expose-gc test/fixtures/memory/heap-after-shutdown.mjs 40 128000 shared
// node bench/heap-snapshot-diff.mjs /tmp/s/fresh.heapsnapshot /tmp/s/after.heapsnapshot [--top 40] [--across]
//   [--strings]: the largest new strings, [--retainers NAME]: what holds the new objects named NAME.
import { readFileSync } from 'node:fs';

function load(file) {
  const { snapshot, nodes, edges, strings } = JSON.parse(readFileSync(file, 'utf8'));
  const fields = snapshot.meta.node_fields;
  const types = snapshot.meta.node_types[0];
  const edgeFields = snapshot.meta.edge_fields;
  const edgeTypes = snapshot.meta.edge_types[0];
  const width = fields.length;
  const at = (name) => fields.indexOf(name);
  const [type, name, id, size, edgeCount] = ['type', 'name', 'id', 'self_size', 'edge_count'].map(at);
  const list = [];
  let firstEdge = 0;
  for (let i = 0; i < nodes.length; i += width) {
    list.push({
      type: types[nodes[i + type]],
      name: strings[nodes[i + name]],
      id: nodes[i + id],
      size: nodes[i + size],
      firstEdge,
      edges: nodes[i + edgeCount],
    });
    firstEdge += nodes[i + edgeCount] * edgeFields.length;
  }
  return { list, edges, edgeFields, edgeTypes, strings, width };
}

/** V8's kinds of object, folded into the categories of the notes. */
function category({ type, name }) {
  if (type === 'string' || type === 'concatenated string' || type === 'sliced string') return 'strings';
  if (type === 'hidden' || type === 'code' || type === 'object shape' || type === 'array') {
    if (/BytecodeArray|bytecode|ConstantPool|SourcePosition|source_position|constant_pool/i.test(name))
      return 'bytecode';
    if (
      /Feedback|feedback|AllocationSite|Handler|LoadHandler|StoreHandler|ClosureFeedbackCellArray/.test(name)
    )
      return 'feedback';
    if (/\(code|Code|Instruction|Deoptimization|deoptimization|Relocation|relocation/.test(name))
      return 'code';
    if (
      /ScopeInfo|scope_info|SharedFunctionInfo|UncompiledData|PreparseData|(shared)|FunctionTemplate/.test(
        name,
      )
    )
      return 'function info';
    if (
      /^system \/ Map|Map$|DescriptorArray|TransitionArray|PrototypeInfo|descriptors|transitions|WeakArrayList|dependent_code/.test(
        name,
      )
    )
      return 'maps';
  }
  if (type === 'closure') return 'closures';
  if (type === 'code') return 'code';
  if (type === 'regexp') return 'regexps';
  return type === 'object' || type === 'array' ? 'objects and arrays' : `other (${type})`;
}

function table(rows, top) {
  return rows
    .sort((a, b) => b.size - a.size)
    .slice(0, top)
    .map(
      (row) => `${(row.size / 1024).toFixed(1).padStart(9)} KB ${String(row.count).padStart(6)}  ${row.key}`,
    )
    .join('\n');
}

function group(list, keyOf) {
  const groups = new Map();
  for (const node of list) {
    const key = keyOf(node);
    const row = groups.get(key) ?? { key, size: 0, count: 0 };
    row.size += node.size;
    row.count++;
    groups.set(key, row);
  }
  return groups;
}

const args = process.argv.slice(2);
const files = args.filter((arg) => !arg.startsWith('--') && !/^\d+$/.test(arg));
const option = (name) => {
  const index = args.indexOf(name);
  return index < 0 ? undefined : args[index + 1];
};
const top = Number(option('--top') ?? 30);
const before = load(files[0]);
const after = load(files[1]);
const typeName = (node) => `${node.type} ${String(node.name).slice(0, 80).replace(/\s+/g, ' ')}`;

if (args.includes('--across')) {
  for (const [label, keyOf] of [
    ['by category', category],
    ['by type and name', typeName],
  ]) {
    const old = group(before.list, keyOf);
    const rows = [...group(after.list, keyOf).values()].map((row) => ({
      key: row.key,
      size: row.size - (old.get(row.key)?.size ?? 0),
      count: row.count - (old.get(row.key)?.count ?? 0),
    }));
    const total = rows.reduce((sum, row) => sum + row.size, 0);
    console.log(`\n${label}: ${(total / 1024).toFixed(1)} KB more\n${table(rows, top)}`);
  }
} else {
  const ids = new Set(before.list.map((node) => node.id));
  const added = after.list.filter((node) => !ids.has(node.id));
  const total = added.reduce((sum, node) => sum + node.size, 0);
  console.log(`${added.length} new objects, ${(total / 1024).toFixed(1)} KB`);
  console.log(`\nby category\n${table([...group(added, category).values()], top)}`);
  console.log(`\nby type and name\n${table([...group(added, typeName).values()], top)}`);
  if (args.includes('--strings'))
    console.log(
      `\nlargest new strings\n${table(
        added
          .filter((node) => category(node) === 'strings')
          .map((node) => ({
            key: JSON.stringify(String(node.name).slice(0, 100)),
            size: node.size,
            count: 1,
          })),
        top,
      )}`,
    );
  const wanted = option('--retainers');
  if (wanted !== undefined) retainers(after, new Set(added.filter((node) => node.name === wanted)), top);
  const traced = option('--path');
  if (traced)
    paths(
      after,
      traced.startsWith('@')
        ? after.list.filter((node) => String(node.id) === traced.slice(1))
        : added
            .filter((node) => String(node.name).startsWith(traced))
            .sort((a, b) => b.size - a.size)
            .slice(0, 5),
    );
}

/** The shortest path from the roots to each of `targets` (weak edges not followed). */
function paths(snapshot, targets) {
  const { list, edges, edgeFields, edgeTypes, strings, width } = snapshot;
  const toField = edgeFields.indexOf('to_node');
  const nameField = edgeFields.indexOf('name_or_index');
  const typeField = edgeFields.indexOf('type');
  const parent = new Int32Array(list.length).fill(-1);
  const via = new Array(list.length);
  parent[0] = 0;
  const queue = [0];
  for (let head = 0; head < queue.length; head++) {
    const index = queue[head];
    const node = list[index];
    // The string table holds its strings weakly (dead ones are cleared).
    if (node.type === 'synthetic' && node.name.includes('Internalized strings')) continue;
    for (let e = 0; e < node.edges; e++) {
      const offset = node.firstEdge + e * edgeFields.length;
      const edgeType = edgeTypes[edges[offset + typeField]];
      if (edgeType === 'weak') continue;
      const to = edges[offset + toField] / width;
      if (parent[to] !== -1) continue;
      parent[to] = index;
      const name = edges[offset + nameField];
      via[to] = edgeType === 'element' || edgeType === 'hidden' ? `[${name}]` : strings[name];
      queue.push(to);
    }
  }
  const indexOf = new Map(list.map((node, index) => [node, index]));
  for (const target of targets) {
    let index = indexOf.get(target);
    if (parent[index] === -1) {
      console.log(`\n${typeName(target)}: reachable through weak edges only`);
      continue;
    }
    const chain = [];
    while (index !== 0) {
      chain.push(`${typeName(list[index])} <-${via[index]}-`);
      index = parent[index];
    }
    console.log(`\npath to ${typeName(target)}\n  ${chain.join('\n  ')}`);
  }
}

/** The new objects' retainers, by type and name (one edge back). */
function retainers(snapshot, targets, top) {
  const byIndex = new Map();
  snapshot.list.forEach((node, index) => {
    byIndex.set(index * snapshot.width, node);
  });
  const toField = snapshot.edgeFields.indexOf('to_node');
  const nameField = snapshot.edgeFields.indexOf('name_or_index');
  const typeField = snapshot.edgeFields.indexOf('type');
  const rows = new Map();
  for (const node of snapshot.list)
    for (let e = 0; e < node.edges; e++) {
      const offset = node.firstEdge + e * snapshot.edgeFields.length;
      const target = byIndex.get(snapshot.edges[offset + toField]);
      if (!targets.has(target)) continue;
      const edgeType = snapshot.edgeTypes[snapshot.edges[offset + typeField]];
      const edgeName =
        edgeType === 'element' || edgeType === 'hidden'
          ? `[${snapshot.edges[offset + nameField]}]`
          : snapshot.strings[snapshot.edges[offset + nameField]];
      const key = `${typeName(node)} --${edgeName}-->`;
      const row = rows.get(key) ?? { key, size: 0, count: 0 };
      row.size += target.size;
      row.count++;
      rows.set(key, row);
    }
  console.log(`\nretainers\n${table([...rows.values()], top)}`);
}
