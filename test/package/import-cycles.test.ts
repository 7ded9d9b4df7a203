/**
 * The import graph of src/, eval/, bench/ and scripts/ (every `import`, `import type`,
 * `export ... from` and `import()`, resolved the way `tsc` resolves them over tsconfig.json,
 * `.js` specifiers to the `.ts` sources) has no circles, and src/core imports nothing from the
 * layers built on it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const SCANNED = ['src', 'eval', 'bench', 'scripts'];
const SOURCE = /\.(?:[cm]?ts|tsx|mjs|js)$/;

/** Circles tolerated, each the exact set of files of one circle: none. */
const ALLOWED_CYCLES: readonly (readonly string[])[] = [];

/**
 * src/core imports only itself, `node:` builtins and packages: never src/adapters,
 * src/exporters, src/storage, src/cli, src/summarizers, src/recall or src/config. Its tests
 * may also use the test kit (src/testing, test/). Known exceptions, one line each:
 */
const CORE_TEST_EXCEPTIONS: readonly string[] = [
  // Checks the summary guard against the summarizers' real prompt; belongs beside them.
  'src/core/summary/summary-guard.test.ts imports src/summarizers/prompts/build-summary-prompt.ts',
  'src/core/summary/summary-guard.test.ts imports src/summarizers/render-transcript.ts',
];

/** Repository-relative path with `/` separators. */
function rel(file: string): string {
  return relative(root, file).split(sep).join('/');
}

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : walk(path);
    return SOURCE.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

function compilerOptions(): ts.CompilerOptions {
  const configPath = join(root, 'tsconfig.json');
  const config = ts.readConfigFile(configPath, (path) => ts.sys.readFile(path));
  if (config.error) throw new Error(ts.flattenDiagnosticMessageText(config.error.messageText, '\n'));
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, root, undefined, configPath);
  return { ...parsed.options, allowJs: true };
}

interface ImportEdge {
  /** The specifier as written. */
  specifier: string;
  /** The repository file it resolves to, or undefined for a package, a builtin or nothing. */
  target: string | undefined;
}

/** Every file's imports, keyed by repository-relative path. */
function importGraph(): Map<string, ImportEdge[]> {
  const options = compilerOptions();
  const cache = ts.createModuleResolutionCache(root, (name) => name, options);
  const graph = new Map<string, ImportEdge[]>();
  for (const file of SCANNED.flatMap((dir) => walk(join(root, dir)))) {
    const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const edges = info.importedFiles.map(({ fileName: specifier }) => {
      const resolved = ts.resolveModuleName(
        specifier,
        file,
        options,
        ts.sys,
        cache,
        undefined,
        ts.ModuleKind.ESNext,
      ).resolvedModule;
      const inRepo =
        resolved && !resolved.isExternalLibraryImport && !resolved.resolvedFileName.endsWith('.d.ts');
      return { specifier, target: inRepo ? rel(resolved.resolvedFileName) : undefined };
    });
    graph.set(rel(file), edges);
  }
  return graph;
}

/** Tarjan's strongly connected components with more than one file (or a file importing itself). */
function cycles(graph: Map<string, ImportEdge[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const found: string[][] = [];
  let next = 0;
  const targets = (file: string) =>
    (graph.get(file) ?? []).flatMap((edge) => (edge.target && graph.has(edge.target) ? [edge.target] : []));
  // Iterative, so a deep import chain cannot overflow the call stack.
  for (const start of graph.keys()) {
    if (index.has(start)) continue;
    const work: { file: string; pending: string[] }[] = [];
    const enter = (file: string) => {
      index.set(file, next);
      low.set(file, next);
      next++;
      stack.push(file);
      onStack.add(file);
      work.push({ file, pending: targets(file) });
    };
    enter(start);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const target = frame.pending.pop();
      if (target !== undefined) {
        if (!index.has(target)) enter(target);
        else if (onStack.has(target)) low.set(frame.file, Math.min(low.get(frame.file)!, index.get(target)!));
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.file, Math.min(low.get(parent.file)!, low.get(frame.file)!));
      if (low.get(frame.file) !== index.get(frame.file)) continue;
      const component: string[] = [];
      let member: string | undefined;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== frame.file);
      if (component.length > 1 || targets(frame.file).includes(frame.file)) found.push(component.sort());
    }
  }
  return found.sort((a, b) => a[0]!.localeCompare(b[0]!));
}

/** One concrete circle through the component's first file, e.g. `a.ts -> b.ts -> a.ts`. */
function samplePath(graph: Map<string, ImportEdge[]>, component: readonly string[]): string {
  const members = new Set(component);
  const start = component[0]!;
  const previous = new Map<string, string>();
  const queue = [start];
  for (let at = 0; at < queue.length; at++) {
    const file = queue[at]!;
    for (const edge of graph.get(file) ?? []) {
      if (!edge.target || !members.has(edge.target)) continue;
      if (edge.target === start) {
        const path = [start];
        for (let step: string | undefined = file; step !== undefined; step = previous.get(step)) {
          path.unshift(step);
        }
        return path.join(' -> ');
      }
      if (!previous.has(edge.target) && edge.target !== start) {
        previous.set(edge.target, file);
        queue.push(edge.target);
      }
    }
  }
  return component.join(', ');
}

describe('import graph', () => {
  const graph = importGraph();

  it('resolves every relative import to a file of the repository', () => {
    const unresolved = [...graph].flatMap(([file, edges]) =>
      edges
        .filter((edge) => edge.specifier.startsWith('.') && edge.target === undefined)
        .map((edge) => `${file}: ${edge.specifier}`),
    );
    expect(unresolved).toEqual([]);
    expect(graph.size).toBeGreaterThan(100);
  });

  it('has no import circle', () => {
    const allowed = new Set(ALLOWED_CYCLES.map((files) => [...files].sort().join('\n')));
    const report = cycles(graph)
      .filter((component) => !allowed.has(component.join('\n')))
      .map((component) => `${component.length} files: ${samplePath(graph, component)}`);
    expect(report).toEqual([]);
  });

  it('finds a circle when there is one', () => {
    const made = new Map<string, ImportEdge[]>([
      ['a.ts', [{ specifier: './b.js', target: 'b.ts' }]],
      ['b.ts', [{ specifier: './c.js', target: 'c.ts' }]],
      ['c.ts', [{ specifier: './a.js', target: 'a.ts' }]],
      ['d.ts', [{ specifier: './a.js', target: 'a.ts' }]],
      ['e.ts', [{ specifier: './e.js', target: 'e.ts' }]],
    ]);
    expect(cycles(made)).toEqual([['a.ts', 'b.ts', 'c.ts'], ['e.ts']]);
    expect(samplePath(made, ['a.ts', 'b.ts', 'c.ts'])).toBe('a.ts -> b.ts -> c.ts -> a.ts');
  });

  it('keeps the floors of src/core: nothing imports the manager, background or manager-options upwards', () => {
    // Floors: compactMessages -> compact-manager -> background -> preflight -> manager-options
    // -> the concern folders.
    const floor = (file: string): number => {
      // The one-call helper over a manager.
      if (file === 'src/core/compact-messages.ts') return 5;
      // The manager and the settings it resolves in its constructor.
      if (file.startsWith('src/core/manager/') && file !== 'src/core/manager/manager-options.ts') return 4;
      if (file.startsWith('src/core/background/')) return 3;
      if (file.startsWith('src/core/preflight/')) return 2;
      if (file === 'src/core/manager/manager-options.ts') return 1;
      return 0;
    };
    const violations = [...graph].flatMap(([file, edges]) => {
      if (!file.startsWith('src/core/') || file.endsWith('.test.ts')) return [];
      return edges
        .filter(({ target }) => target?.startsWith('src/core/') && floor(target) > floor(file))
        .map(({ target }) => `${file} imports ${target} (a floor above it)`);
    });
    expect(violations).toEqual([]);
  });

  it('keeps src/core free of the layers above it (core imports itself, node: builtins and packages)', () => {
    const violations = [...graph].flatMap(([file, edges]) => {
      if (!file.startsWith('src/core/')) return [];
      const isTest = file.endsWith('.test.ts');
      return edges
        .filter(({ target }) => target !== undefined && !target.startsWith('src/core/'))
        .filter(
          ({ target }) => !(isTest && (target!.startsWith('src/testing/') || target!.startsWith('test/'))),
        )
        .map(({ target }) => `${file} imports ${target}`)
        .filter((line) => !CORE_TEST_EXCEPTIONS.includes(line));
    });
    expect(violations).toEqual([]);
  });
});
