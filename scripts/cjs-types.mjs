#!/usr/bin/env node
/**
 * CommonJS type declarations for the subpaths whose peer ships separate CommonJS and ESM
 * types (`@langchain/core`): a CommonJS TypeScript project resolves the peer's CommonJS
 * declarations, so ours must too, or `createAgent({ middleware: [compactionMiddleware(...)] })`
 * fails to type-check (TS2769: the two copies of LangChain's types do not match). Each
 * `dist/<folder>/*.d.ts` gets a `.d.cts` twin whose same-folder imports point at the twins;
 * package.json's `require` condition points `types` at `index.d.cts`. Run after `tsc`
 * (`npm run build`).
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = resolve(new URL('..', import.meta.url).pathname);
const FOLDERS = ['dist/adapters/langchain'];

for (const folder of FOLDERS) {
  const dir = join(root, folder);
  for (const file of readdirSync(dir).filter((name) => name.endsWith('.d.ts'))) {
    const text = readFileSync(join(dir, file), 'utf8').replace(
      /(from\s+['"])\.\/([^'"]+)\.js(['"])/g,
      (_, open, name, close) => `${open}./${name}.cjs${close}`,
    );
    writeFileSync(join(dir, file.replace(/\.d\.ts$/, '.d.cts')), text);
  }
}
