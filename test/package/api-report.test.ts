/**
 * The API report: every public entry's declarations, from the built .d.ts files, checked in
 * under api/ so that every change to the surface shows in review. After a deliberate change:
 * `npx vitest run test/package/api-report.test.ts -u`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../support/ensure-built.js';

const root = join(import.meta.dirname, '..', '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  name: string;
  exports: Record<string, string | { types?: string; import: string | { types: string } }>;
};
// The ESM declarations of each subpath (top-level `types`, or nested under `import`).
const typesOf = (target: { types?: string; import: string | { types: string } }) =>
  target.types ?? (typeof target.import === 'string' ? target.import : target.import.types);
const entries = Object.entries(pkg.exports).flatMap(([subpath, target]) =>
  typeof target === 'string' ? [] : [{ subpath, types: join(root, typesOf(target)) }],
);

beforeAll(() => ensureBuilt());

/** The declaration text of one exported symbol (no comments, one space for any run of whitespace). */
function declarationText(declaration: ts.Declaration): string {
  const node = ts.isVariableDeclaration(declaration) ? declaration.parent.parent : declaration;
  const printer = ts.createPrinter({ removeComments: true });
  return sortEnumMembers(
    printer.printNode(ts.EmitHint.Unspecified, node, declaration.getSourceFile()).trim(),
  );
}

/**
 * zod's inferred `ZodEnum<{ a: "a"; b: "b" }>` members come out of `tsc` in the order its
 * checker met them, which differs between builds: sorted, the report changes only with the API.
 */
function sortEnumMembers(text: string): string {
  return text.replace(/ZodEnum<\{([^{}]*)\}>/g, (_match, body: string) => {
    const indent = /\n([ ]*)\S/.exec(body)?.[1] ?? '';
    const members = body
      .split(';')
      .map((member) => member.trim())
      .filter(Boolean)
      .sort();
    const close = /\n([ ]*)$/.exec(body)?.[1] ?? '';
    return `ZodEnum<{\n${members.map((member) => `${indent}${member};\n`).join('')}${close}}>`;
  });
}

/** The report of one entry: every export, sorted by name, with its declaration(s). */
function report(program: ts.Program, file: string, title: string): string {
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(file);
  if (!source) throw new Error(`${file} is not built`);
  const module = checker.getSymbolAtLocation(source);
  const lines = [`# ${title}`, ''];
  const exports = module ? checker.getExportsOfModule(module) : [];
  for (const symbol of [...exports].sort((a, b) => a.name.localeCompare(b.name))) {
    const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
    const kind = target.flags & ts.SymbolFlags.Value ? 'value' : 'type';
    lines.push(`## ${symbol.name} (${kind})`, '', '```ts');
    for (const declaration of target.declarations ?? []) lines.push(declarationText(declaration));
    lines.push('```', '');
  }
  return `${lines.join('\n')}\n`;
}

const options: ts.CompilerOptions = {
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  skipLibCheck: true,
  types: [],
  noLib: true,
};

/**
 * A compiler host that resolves the package's own relative imports only: the report prints
 * our declarations as written, so the SDKs' and Node's types (most of the parse time) are
 * never needed.
 */
function ownFilesOnly(compilerOptions: ts.CompilerOptions): ts.CompilerHost {
  const host = ts.createCompilerHost(compilerOptions);
  host.resolveModuleNameLiterals = (literals, containingFile, redirected, resolveOptions) =>
    literals.map((literal) =>
      literal.text.startsWith('.')
        ? ts.resolveModuleName(literal.text, containingFile, resolveOptions, host, undefined, redirected)
        : { resolvedModule: undefined },
    );
  return host;
}

describe('API report', () => {
  let built: ts.Program | undefined;
  const program = () =>
    (built ??= ts.createProgram({
      rootNames: entries.map((entry) => entry.types),
      options,
      host: ownFilesOnly(options),
    }));

  it.each(entries)('$subpath matches api/', async ({ subpath, types }) => {
    const title = subpath === '.' ? pkg.name : `${pkg.name}${subpath.slice(1)}`;
    const name = subpath === '.' ? 'index' : subpath.slice(2).replaceAll('/', '-');
    await expect(report(program(), types, title)).toMatchFileSnapshot(join(root, 'api', `${name}.api.md`));
  });
});
