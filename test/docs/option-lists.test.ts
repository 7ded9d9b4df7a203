/**
 * docs/integrations.md lists each integration's options in its signature line
 * (`compactionMiddleware(manager, { sessionId?, countTools?, onCompaction? })`): the list names
 * every field of the options interface, each optional exactly when the field is. docs/api.md
 * lists the fields of `CompactionResult` the same way.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const DOC = readFileSync(join(ROOT, 'docs', 'integrations.md'), 'utf8');

/** The doc's section under the `## ` heading that starts with `heading`. */
function section(heading: string): string {
  const start = DOC.indexOf(`\n## ${heading}`);
  const end = DOC.indexOf('\n## ', start + 1);
  return DOC.slice(start, end === -1 ? undefined : end);
}

/** The option names of `call`'s signature line in `text` (`name?` when optional). */
function documented(text: string, call: string): string[] {
  const line = new RegExp(`\`${call.replace(/[.()]/g, '\\$&')}\\([^\`{]*\\{ ([^}]*) \\}\\)\``).exec(text);
  if (!line) throw new Error(`no signature line for ${call}`);
  return line[1]!.split(',').map((name) => name.trim());
}

/** The fields of `name` in `file` (`field?` when optional). */
function declared(file: string, name: string): string[] {
  const source = readFileSync(join(ROOT, file), 'utf8');
  const start = source.search(new RegExp(`export interface ${name}\\b`));
  if (start === -1) throw new Error(`${name} is not in ${file}`);
  const body = source.slice(start, source.indexOf('\n}', start));
  return [...body.matchAll(/^ {2}(?:readonly )?(\w+)(\?)?:/gm)].map(
    (match) => `${match[1]}${match[2] ?? ''}`,
  );
}

const CASES: { heading: string; call: string; file: string; options: string }[] = [
  {
    heading: 'OpenAI Agents',
    call: 'compactionInputFilter',
    file: 'src/adapters/openai-agents/compaction-input-filter.ts',
    options: 'CompactionInputFilterOptions',
  },
  {
    heading: 'OpenAI Agents',
    call: 'new CompactionSession',
    file: 'src/adapters/openai-agents/compaction-session.ts',
    options: 'CompactionSessionOptions',
  },
  {
    heading: 'Vercel AI SDK',
    call: 'compactionMiddleware',
    file: 'src/adapters/ai-sdk/compaction-middleware.ts',
    options: 'CompactionMiddlewareOptions',
  },
  {
    heading: 'Vercel AI SDK',
    call: 'compactionPrepareStep',
    file: 'src/adapters/ai-sdk/compaction-middleware.ts',
    options: 'CompactionPrepareStepOptions',
  },
  {
    heading: 'Vercel AI SDK',
    call: 'compactMessages',
    file: 'src/adapters/ai-sdk/compaction-middleware.ts',
    options: 'CompactMessagesOptions',
  },
  {
    heading: 'Anthropic',
    call: 'withCompaction',
    file: 'src/adapters/anthropic/with-compaction.ts',
    options: 'WithCompactionOptions',
  },
  {
    heading: 'LangChain',
    call: 'compactionMiddleware',
    file: 'src/adapters/langchain/compaction-middleware.ts',
    options: 'CompactionMiddlewareOptions',
  },
];

describe('docs/integrations.md option lists', () => {
  for (const { heading, call, file, options } of CASES) {
    it(`${heading}: ${call} lists every field of ${options}`, () => {
      expect(documented(section(heading), call).sort()).toEqual(declared(file, options).sort());
    });
  }
});

describe('docs/api.md result fields', () => {
  it('CompactionResult lists every field of the interface', () => {
    const api = readFileSync(join(ROOT, 'docs', 'api.md'), 'utf8');
    const listed = /`CompactionResult` is `\{ ([^`]*) \}`/.exec(api)?.[1];
    expect(listed, 'no CompactionResult line in docs/api.md').toBeDefined();
    // Nested objects (`kept: { pinned, ... }`) count as their field's name.
    const names = listed!
      .replace(/\s+/g, ' ')
      .replace(/: \{[^}]*\}/g, '')
      .split(',')
      .map((name) => name.trim());
    expect(names.sort()).toEqual(declared('src/core/manager/manager-options.ts', 'CompactionResult').sort());
  });
});

describe('OBSERVABILITY.md event schema', () => {
  const guide = readFileSync(join(ROOT, 'OBSERVABILITY.md'), 'utf8');
  const source = readFileSync(join(ROOT, 'src', 'core', 'events', 'events.ts'), 'utf8');
  const table = source.slice(source.indexOf('export interface CompactEventProperties'));
  const events = [...table.matchAll(/^ {2}'(compact\.\w+)': \{\n([\s\S]*?)^ {2}\};/gm)];
  const snake = (name: string) => name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);

  it('reads every event of CompactEventProperties', () => {
    expect(events.length).toBeGreaterThanOrEqual(13);
  });

  for (const [, name, body] of events) {
    it(`${name}: its bullet names every property (snake_case, as exporters write them)`, () => {
      const bullet = new RegExp(
        `^- \`${name!.replace('.', '\\.')}\`[^:\n]*:([\\s\\S]*?)(?=^- |^#|^$)`,
        'm',
      ).exec(guide)?.[1];
      expect(bullet, `no bullet for ${name} in OBSERVABILITY.md`).toBeDefined();
      const fields = [...body!.matchAll(/^ {4}(\w+)\??:/gm)].map((match) => snake(match[1]!));
      expect(fields.filter((field) => !new RegExp(`\\b${field}\\b`).test(bullet!))).toEqual([]);
    });
  }
});
