/**
 * The fenced code blocks of README.md, docs/*.md and the top-level guides the README links
 * (OBSERVABILITY.md, SECURITY.md, ARCHITECTURE.md), for the doc tests: each with its file,
 * line, language and the reason it is not run when a `<!-- doc-test: skip (reason) -->`
 * comment precedes it. TypeScript blocks become modules (imports hoisted, the rest inside an
 * exported `__docSnippet()`), so every snippet is type-checked and run as written.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/** One fenced block. */
export interface DocBlock {
  file: string;
  /** The line of the opening fence (1-based). */
  line: number;
  lang: string;
  code: string;
  /** Why the block is not run, from its `doc-test: skip (...)` comment. */
  skip?: string;
}

/** The guides beside README.md that it links and the package ships. */
const GUIDES = ['OBSERVABILITY.md', 'SECURITY.md', 'ARCHITECTURE.md'];

/** The documents whose blocks are tested: README.md, every docs/*.md and the guides. */
export function docFiles(root: string): string[] {
  const docs = readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => join(root, 'docs', name));
  return [join(root, 'README.md'), ...docs, ...GUIDES.map((name) => join(root, name))];
}

/** The README.md of each src/ folder: what a reader of the source reads first. */
export function sourceReadmes(root: string): string[] {
  return readdirSync(join(root, 'src'), { recursive: true, encoding: 'utf8' })
    .filter((path) => path.endsWith('README.md'))
    .sort()
    .map((path) => join(root, 'src', path));
}

/** Every fenced block of `path`. */
export function docBlocks(path: string, root: string): DocBlock[] {
  const lines = readFileSync(path, 'utf8').split('\n');
  const blocks: DocBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    // A block inside a list item is indented: its lines lose that indent.
    const open = /^( *)```(\S*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const indent = open[1]!.length;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !lines[i]!.trimStart().startsWith('```'); i++)
      body.push(lines[i]!.slice(Math.min(indent, lines[i]!.length - lines[i]!.trimStart().length)));
    let previous = start - 1;
    while (previous >= 0 && lines[previous]!.trim() === '') previous--;
    const skip = /<!-- doc-test: skip \((.+)\) -->/.exec(lines[previous] ?? '')?.[1];
    blocks.push({
      file: relative(root, path),
      line: start + 1,
      lang: open[2]!,
      code: body.join('\n'),
      ...(skip ? { skip } : {}),
    });
  }
  return blocks;
}

/**
 * The `agent-compaction` commands of a `sh` block (one a line) or a `console` block (`$ `
 * lines), each with the output a console block shows after it (the lines up to the next `$ `).
 */
export function cliCommands(block: DocBlock): { command: string; output?: string[] }[] {
  const lines = block.code.split('\n');
  const commands: { command: string; output?: string[] }[] = [];
  lines.forEach((line, i) => {
    const command = block.lang === 'console' ? /^\$ (.*)$/.exec(line)?.[1] : line;
    if (command === undefined || !/^(\w+=\S+ )*agent-compaction /.test(command.trim())) return;
    const output: string[] = [];
    for (let k = i + 1; block.lang === 'console' && k < lines.length && !lines[k]!.startsWith('$ '); k++)
      output.push(lines[k]!);
    while (output.length > 0 && output.at(-1)!.trim() === '') output.pop();
    commands.push({ command: command.trim(), ...(output.length > 0 ? { output } : {}) });
  });
  return commands;
}

/**
 * A line with what changes from run to run masked: timestamps (`<time>`) and the elapsed
 * seconds of a replay (`<seconds> s`). Every other figure is compared as printed.
 */
export function masked(line: string): string {
  return line
    .replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z/g, '<time>')
    .replace(/\b\d+(\.\d+)? s$/, '<seconds> s')
    .trimEnd();
}

/** Values every snippet may use without declaring them (it may shadow them). */
const PRELUDE = `import type { ChatCompletionMessageParam as __Chat } from 'openai/resources/chat/completions';
import { MemorySession as __MemorySession } from '@openai/agents';
import { syntheticSession as __synthetic } from 'agent-compaction/testing';
const sessionId = 'doc-session';
const threadId = 'doc-thread';
const history = __synthetic({ turns: 6, seed: 11 }) as unknown as __Chat[];
const tools: any = [];
const system = 'You are a careful coding agent.';
const SYSTEM = system;
const messages: any = [{ role: 'user', content: 'Hello' }];
const threadHistory: any = [{ role: 'user', content: 'Hi' }, { role: 'assistant', content: 'Hello! How can I help?' }];
const userMessage = 'Summarize the thread so far.';
const model: any = 'claude-sonnet-4-6';
const session = new __MemorySession();
void sessionId, threadId, history, tools, system, SYSTEM, messages, threadHistory, userMessage, model, session;
`;

/**
 * Names a fragment may use from the text around it (a `manager` made above, the `messages`
 * of the reader's loop): declared for the type check only. A snippet that uses one it does
 * not declare itself is compiled, not run.
 */
const CONTEXT_NAMES = [
  'manager',
  'options',
  'traceId',
  'parentSpanId',
  'agent',
  'signal',
  'note',
  'recall',
  'input',
  'max_tokens',
  'toolResults',
  'POLICY',
  'plannerSummarizer',
  'coderSummarizer',
  'client',
  'tracer',
];

/** The type a context name is declared with, where one is known (else `any`). */
const CONTEXT_TYPES: Record<string, string> = {
  manager: "import('agent-compaction').CompactManager",
  traceId: 'string',
  parentSpanId: 'string',
  signal: 'AbortSignal',
};

/**
 * Package and SDK exports a fragment may use without its import line: imported for it. A
 * snippet with import lines of its own and no context names is copied whole by a reader, so
 * it gets none: it must import all it uses.
 */
const KNOWN_IMPORTS: Record<string, string> = {
  CompactManager: "import { CompactManager } from 'agent-compaction';",
  openaiSummarizer: "import { openaiSummarizer } from 'agent-compaction/summarizers/openai';",
  anthropicSummarizer: "import { anthropicSummarizer } from 'agent-compaction/summarizers/anthropic';",
  Agent: "import { Agent } from '@openai/agents';",
  run: "import { run } from '@openai/agents';",
  wrapLanguageModel: "import { wrapLanguageModel } from 'ai';",
  generateText: "import { generateText } from 'ai';",
  openai: "import { openai } from '@ai-sdk/openai';",
  Anthropic: "import Anthropic from '@anthropic-ai/sdk';",
};

function uses(code: string, name: string): boolean {
  // Not as an object key (`{ model: 'gpt-4o' }`), a property (`.model`), a string or a comment.
  return new RegExp(`(?<![\\w.$'"])${name}(?![\\w$'"]|\\s*:)`).test(code.replace(/\/\/.*$/gm, ''));
}

function declares(code: string, name: string): boolean {
  const binding = `(?:const|let|var|function|class)\\s+(?:${name}\\b|[{[][^}\\]]*\\b${name}\\b(?!\\s*:))`;
  const imported = `import[^;]*\\b${name}\\b[^;]*from`;
  return new RegExp(`${binding}|${imported}`).test(code);
}

/** The context names `block` uses without declaring them (empty: it runs as written). */
export function contextNames(block: DocBlock): string[] {
  return CONTEXT_NAMES.filter((name) => uses(block.code, name) && !declares(block.code, name));
}

/**
 * A TypeScript block as a module: its imports first (and those of package exports it uses
 * without importing), the prelude, the context names it needs declared, then the rest of the
 * block inside `export async function __docSnippet()`.
 */
export function snippetModule(block: DocBlock): string {
  const imports: string[] = [];
  const body: string[] = [];
  let inImport = false;
  for (const line of block.code.split('\n')) {
    if (inImport || /^import\s/.test(line)) {
      imports.push(line);
      inImport = !/;\s*(\/\/.*)?$/.test(line);
    } else body.push(line);
  }
  const standalone = imports.length > 0 && contextNames(block).length === 0;
  for (const [name, line] of Object.entries(KNOWN_IMPORTS))
    if (!standalone && uses(block.code, name) && !declares(block.code, name)) imports.push(line);
  const context = contextNames(block).map(
    (name) => `declare const ${name}: ${CONTEXT_TYPES[name] ?? 'any'};`,
  );
  return `// ${block.file}:${block.line} (generated by test/support/doc-blocks.ts)
${imports.join('\n')}
${PRELUDE}${context.join('\n')}
export async function __docSnippet(): Promise<void> {
${body.map((line) => `  ${line}`).join('\n')}
}
`;
}

/** A file name for a block's module: `readme-42.ts`, `docs-report-30.ts`. */
export function snippetName(block: DocBlock): string {
  return `${block.file
    .replace(/\.md$/, '')
    .replace(/[^\w]+/g, '-')
    .toLowerCase()}-${block.line}.ts`;
}
