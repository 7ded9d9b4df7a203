/**
 * `npx tsx scripts/vendor-false-alarm-corpus.ts`: builds the false-alarm corpus of issue 44 in
 * test/fixtures/redaction/real-text/ from installed npm packages (MIT, ISC or Apache-2.0 only):
 * the JavaScript of a few packages (code.txt.gz) and the READMEs of many (readmes.txt.gz), each
 * file preceded by a `==> package@version/path <==` line, and the packages' licenses
 * (LICENSES.txt.gz). Run once; the output is committed.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

const ROOT = new URL('../node_modules/', import.meta.url).pathname;
const OUT = new URL('../test/fixtures/redaction/real-text/', import.meta.url).pathname;
const ALLOWED = /^(?:MIT|ISC|Apache-2\.0)$/;
const CODE: Record<string, string> = {
  ioredis: 'built',
  undici: 'lib',
  luxon: 'src',
  ws: 'lib',
  express: 'lib',
  'body-parser': 'lib',
  commander: 'lib',
  semver: '.',
  'cron-parser': 'lib',
  minisearch: 'dist/es',
  bullmq: 'dist/esm',
};
const README_BYTES = 1_600_000;

interface Package {
  name: string;
  version: string;
  license: string;
  dir: string;
}

function packageAt(dir: string): Package | undefined {
  const file = join(dir, 'package.json');
  if (!existsSync(file)) return undefined;
  const json = JSON.parse(readFileSync(file, 'utf8')) as {
    name?: string;
    version?: string;
    license?: unknown;
  };
  if (typeof json.name !== 'string' || typeof json.license !== 'string' || !ALLOWED.test(json.license)) {
    return undefined;
  }
  return { name: json.name, version: json.version ?? '0', license: json.license, dir };
}

function allPackages(): Package[] {
  const found: Package[] = [];
  for (const entry of readdirSync(ROOT).sort()) {
    if (entry.startsWith('.')) continue;
    const dirs = entry.startsWith('@')
      ? readdirSync(join(ROOT, entry))
          .sort()
          .map((name) => join(ROOT, entry, name))
      : [join(ROOT, entry)];
    for (const dir of dirs) {
      const found1 = packageAt(dir);
      if (found1) found.push(found1);
    }
  }
  return found;
}

function jsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory() && entry.name !== 'node_modules' && entry.name !== 'test')
      out.push(...jsFiles(path));
    else if (/\.(?:js|mjs|cjs)$/.test(entry.name) && !entry.name.includes('.min.')) out.push(path);
  }
  return out.sort();
}

function licenseOf(pkg: Package): string {
  const file = readdirSync(pkg.dir).find((name) => /^licen[cs]e/i.test(name));
  return file
    ? readFileSync(join(pkg.dir, file), 'utf8')
    : `(license field: ${pkg.license}; no license file shipped)`;
}

const packages = allPackages();
const used = new Map<string, Package>();
const code: string[] = [];
for (const [name, sub] of Object.entries(CODE)) {
  const pkg = packages.find((candidate) => candidate.name === name);
  if (!pkg || !existsSync(join(pkg.dir, sub))) continue;
  used.set(name, pkg);
  for (const file of jsFiles(join(pkg.dir, sub))) {
    if (statSync(file).size > 400_000) continue;
    code.push(
      `==> ${pkg.name}@${pkg.version}/${file.slice(pkg.dir.length + 1)} <==\n${readFileSync(file, 'utf8')}`,
    );
  }
}
const readmes: string[] = [];
let readmeBytes = 0;
for (const pkg of packages) {
  const file = readdirSync(pkg.dir).find((name) => /^readme\.md$/i.test(name));
  if (!file || readmeBytes > README_BYTES) continue;
  const text = readFileSync(join(pkg.dir, file), 'utf8');
  readmes.push(`==> ${pkg.name}@${pkg.version}/${file} <==\n${text}`);
  readmeBytes += text.length;
  used.set(pkg.name, pkg);
}
const licenses = [...used.values()].map(
  (pkg) => `==> ${pkg.name}@${pkg.version} (${pkg.license}) <==\n${licenseOf(pkg)}`,
);
mkdirSync(OUT, { recursive: true });
writeFileSync(join(OUT, 'code.txt.gz'), gzipSync(code.join('\n'), { level: 9 }));
writeFileSync(join(OUT, 'readmes.txt.gz'), gzipSync(readmes.join('\n'), { level: 9 }));
writeFileSync(join(OUT, 'LICENSES.txt.gz'), gzipSync(licenses.join('\n\n'), { level: 9 }));
console.log(
  `code ${(code.join('\n').length / 1e6).toFixed(2)} MB, readmes ${(readmes.join('\n').length / 1e6).toFixed(2)} MB, ${used.size} packages`,
);
