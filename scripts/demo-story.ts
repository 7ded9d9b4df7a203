/**
 * The demo's session: a coding agent fixing six tickets in a small TypeScript repository
 * (`tiny-invoice`), in OpenAI Chat messages. Synthetic but realistic: the files it reads are
 * code, the test runs fail then pass, the edits are patches, the tickets and paths recur, so
 * a summary of it reads like notes a person would take. Deterministic (no randomness).
 *
 *   npx tsx scripts/demo-story.ts > docs/examples/coding-session.jsonl   # the CLI docs' transcript
 */

type Message = Record<string, unknown>;

const FILES: Record<string, string> = {
  'src/money.ts': `/** Amounts are integer cents; helpers never return fractions of a cent. */
export type Cents = number;

export function toCents(amount: string): Cents {
  const [whole, fraction = ''] = amount.trim().split('.');
  return Number(whole) * 100 + Number(fraction.padEnd(2, '0').slice(0, 2));
}

export function percentOf(amount: Cents, percent: number): Cents {
  return Math.floor((amount * percent) / 100);
}

export function sum(amounts: readonly Cents[]): Cents {
  return amounts.reduce((total, amount) => total + amount, 0);
}`,
  'src/invoice.ts': `import { type Cents, percentOf, sum } from './money.js';
import { taxFor } from './tax.js';

export interface Line { sku: string; quantity: number; unitPrice: Cents; taxRate?: number; currency: string }
export interface Invoice { id: string; lines: Line[]; discountPercent?: number }
export interface Totals { subtotal: Cents; discount: Cents; tax: Cents; total: Cents; currency: string }

export function computeTotals(invoice: Invoice): Totals {
  const currency = invoice.lines[0]?.currency ?? 'USD';
  const subtotal = sum(invoice.lines.map((line) => line.quantity * line.unitPrice));
  const discount = percentOf(subtotal, invoice.discountPercent ?? 0);
  const tax = sum(invoice.lines.map((line) => taxFor(line)));
  return { subtotal, discount, tax, total: subtotal - discount + tax, currency };
}`,
  'src/tax.ts': `import { type Cents, percentOf } from './money.js';
import type { Line } from './invoice.js';

export function taxFor(line: Line): Cents {
  return percentOf(line.quantity * line.unitPrice, line.taxRate as number);
}`,
  'src/format.ts': `import type { Cents } from './money.js';

const SYMBOLS: Record<string, string> = { USD: '$', EUR: '€', GBP: '£' };

export function formatAmount(amount: Cents, currency = 'USD'): string {
  const symbol = SYMBOLS[currency] ?? \`\${currency} \`;
  const units = (amount / 100).toFixed(2);
  return \`\${symbol}\${units}\`;
}`,
  'src/parse-csv.ts': `import type { Line } from './invoice.js';
import { toCents } from './money.js';

export function parseLines(csv: string): Line[] {
  const rows = csv.split('\\n');
  rows.pop(); // the trailing newline
  return rows.slice(1).map((row) => {
    const [sku, quantity, unitPrice, currency, taxRate] = row.split(',');
    return { sku: sku!, quantity: Number(quantity), unitPrice: toCents(unitPrice!), currency: currency!, taxRate: Number(taxRate) };
  });
}`,
};

interface Ticket {
  id: string;
  ask: string;
  search: string;
  files: string[];
  failing: string;
  patch: { path: string; before: string; after: string };
  done: string;
}

const TICKETS: Ticket[] = [
  {
    id: 'INV-142',
    ask: 'Invoice totals are off by one cent when a percentage discount applies (ticket INV-142). A customer was billed $89.99 for an order that should be $90.00. Find and fix it, and do not change the public API of src/invoice.ts.',
    search: 'percentOf',
    files: ['src/money.ts', 'src/invoice.ts'],
    failing:
      'computeTotals > rounds a 15% discount to the nearest cent\n  expected total 9000, received 8999\n  at test/invoice.test.ts:41:31',
    patch: {
      path: 'src/money.ts',
      before: 'return Math.floor((amount * percent) / 100);',
      after: 'return Math.round((amount * percent) / 100);',
    },
    done: "Fixed INV-142: percentOf in src/money.ts used Math.floor, which always rounded discounts down; it now rounds half up (Math.round). The public API of src/invoice.ts is unchanged. Added a regression test with the customer's order (15% off $105.88).",
  },
  {
    id: 'INV-151',
    ask: 'CSV import drops the last line item when the file has no trailing newline (INV-151). Fix parseLines in src/parse-csv.ts; files from the bank never end with a newline.',
    search: 'rows.pop',
    files: ['src/parse-csv.ts'],
    failing:
      'parseLines > keeps the last row without a trailing newline\n  expected 3 lines, received 2\n  at test/parse-csv.test.ts:18:27',
    patch: {
      path: 'src/parse-csv.ts',
      before: "const rows = csv.split('\\n');\n  rows.pop(); // the trailing newline",
      after: "const rows = csv.split(/\\r?\\n/).filter((row) => row.trim() !== '');",
    },
    done: 'Fixed INV-151: parseLines removed the last row unconditionally (rows.pop) to drop the empty string after a trailing newline; it now filters blank rows, so files with or without a final newline (and CRLF files) keep every line item.',
  },
  {
    id: 'INV-163',
    ask: 'Negative amounts print as $-12.50; finance wants -$12.50 (INV-163). Credit notes go out tomorrow, so please keep the change small.',
    search: 'formatAmount',
    files: ['src/format.ts'],
    failing:
      'formatAmount > puts the sign before the symbol\n  expected "-$12.50", received "$-12.50"\n  at test/format.test.ts:9:35',
    patch: {
      path: 'src/format.ts',
      before: `const units = (amount / 100).toFixed(2);\n  return \`\${symbol}\${units}\`;`,
      after: `const units = (Math.abs(amount) / 100).toFixed(2);\n  return \`\${amount < 0 ? '-' : ''}\${symbol}\${units}\`;`,
    },
    done: 'Fixed INV-163: formatAmount now puts the minus sign before the currency symbol (-$12.50, -€3.00). One-line change in src/format.ts plus two tests.',
  },
  {
    id: 'INV-170',
    ask: 'Zero-rated items (no taxRate in the CSV) make the whole invoice total NaN (INV-170). A missing rate means 0%.',
    search: 'taxRate',
    files: ['src/tax.ts', 'src/invoice.ts'],
    failing:
      'computeTotals > treats a missing tax rate as zero\n  expected total 2500, received NaN\n  at test/invoice.test.ts:77:31',
    patch: {
      path: 'src/tax.ts',
      before: 'percentOf(line.quantity * line.unitPrice, line.taxRate as number)',
      after: 'percentOf(line.quantity * line.unitPrice, line.taxRate ?? 0)',
    },
    done: 'Fixed INV-170: taxFor cast a missing taxRate to number (undefined -> NaN); it now defaults to 0. parseLines already maps an empty column to NaN, so I also made it map an empty rate to undefined.',
  },
  {
    id: 'INV-177',
    ask: 'An invoice that mixes USD and EUR lines is totalled as if everything were USD (INV-177). Reject mixed currencies with a clear error instead.',
    search: 'currency',
    files: ['src/invoice.ts'],
    failing:
      'computeTotals > rejects mixed currencies\n  expected function to throw "mixed currencies: USD, EUR", but it returned a total\n  at test/invoice.test.ts:95:12',
    patch: {
      path: 'src/invoice.ts',
      before: "const currency = invoice.lines[0]?.currency ?? 'USD';",
      after: `const currencies = [...new Set(invoice.lines.map((line) => line.currency))];\n  if (currencies.length > 1) throw new Error(\`mixed currencies: \${currencies.join(', ')}\`);\n  const currency = currencies[0] ?? 'USD';`,
    },
    done: 'Fixed INV-177: computeTotals throws "mixed currencies: USD, EUR" when an invoice has lines in more than one currency. The error names every currency found.',
  },
  {
    id: 'INV-180',
    ask: 'Release prep (INV-180): run the whole suite, then write the CHANGELOG entry for 1.4.1 listing every ticket fixed today.',
    search: 'CHANGELOG',
    files: ['src/invoice.ts', 'src/money.ts'],
    failing: 'all 48 tests pass; lint clean',
    patch: {
      path: 'CHANGELOG.md',
      before: '## 1.4.0',
      after:
        '## 1.4.1\n- INV-142 discounts round to the nearest cent\n- INV-151 CSV import keeps the last line\n- INV-163 negative amounts print as -$12.50\n- INV-170 a missing tax rate is 0%\n- INV-177 mixed currencies are rejected\n\n## 1.4.0',
    },
    done: 'Suite green (48 tests). CHANGELOG.md has the 1.4.1 entry listing INV-142, INV-151, INV-163, INV-170 and INV-177.',
  },
];

function numbered(text: string): string {
  return text
    .split('\n')
    .map((line, i) => `${String(i + 1).padStart(4)}  ${line}`)
    .join('\n');
}

function testRun(ticket: Ticket, passing: boolean, round: number): string {
  const suites = [
    'test/money.test.ts',
    'test/invoice.test.ts',
    'test/parse-csv.test.ts',
    'test/format.test.ts',
    'test/tax.test.ts',
  ];
  const lines = [`> tiny-invoice@1.4.0 test`, `> vitest run`, '', ` RUN  v1.6.0 /home/dev/tiny-invoice`, ''];
  suites.forEach((suite, i) => {
    const failing = !passing && ticket.failing.includes(suite);
    lines.push(
      ` ${failing ? '❯' : '✓'} ${suite} (${8 + i} tests${failing ? ' | 1 failed' : ''}) ${12 + ((i * 7 + round) % 30)}ms`,
    );
  });
  if (!passing)
    lines.push(
      '',
      ` FAIL  ${ticket.failing}`,
      '',
      ' Test Files  1 failed | 4 passed (5)',
      '      Tests  1 failed | 47 passed (48)',
    );
  else lines.push('', ' Test Files  5 passed (5)', '      Tests  48 passed (48)');
  return lines.join('\n');
}

/** The test file a ticket's fix is checked by, as the agent reads it. */
function testFile(ticket: Ticket): string {
  const subject = ticket.patch.path.replace(/^src\//, '').replace(/\.ts$/, '');
  const [name, detail] = ticket.failing.split('\n');
  return `import { describe, expect, it } from 'vitest';
import { computeTotals } from '../src/invoice.js';
import { formatAmount } from '../src/format.js';
import { parseLines } from '../src/parse-csv.js';

describe('${subject}', () => {
  it('keeps the totals of a plain invoice', () => {
    const totals = computeTotals({ id: 'A-1', lines: [{ sku: 'PEN', quantity: 3, unitPrice: 250, currency: 'USD', taxRate: 0 }] });
    expect(totals).toEqual({ subtotal: 750, discount: 0, tax: 0, total: 750, currency: 'USD' });
  });

  it('${(name ?? '').split(' > ')[1] ?? name}', () => {
    // ${ticket.id}: ${(detail ?? '').trim()}
    const csv = 'sku,quantity,unit_price,currency,tax_rate\nPEN,3,2.50,USD,8\nINK,1,19.99,USD,\nPAD,2,4.75,USD,8';
    const lines = parseLines(csv);
    expect(lines).toHaveLength(3);
    expect(formatAmount(-1250)).toBe('-$12.50');
  });
});`;
}

function grepOutput(ticket: Ticket): string {
  const hits: string[] = [];
  for (const [path, text] of Object.entries(FILES))
    text.split('\n').forEach((line, i) => {
      if (line.includes(ticket.search)) hits.push(`${path}:${i + 1}:${line.trim()}`);
    });
  hits.push(
    `test/${ticket.patch.path.split('/').pop()!.replace('.ts', '')}.test.ts:3:import { ${ticket.search} } from '../src/index.js';`,
  );
  return hits.join('\n');
}

/** The story as OpenAI Chat messages: a system prompt, then each ticket's turn. */
export function codingStory(): Message[] {
  const messages: Message[] = [
    {
      role: 'system',
      content:
        'You are a coding agent working in the repository tiny-invoice (TypeScript, vitest). Use the tools to read, search, edit and test. Keep changes minimal and explain each fix in one paragraph.',
    },
  ];
  let call = 0;
  const tool = (name: string, args: Record<string, unknown>, output: string) => {
    const id = `call_${String(++call).padStart(3, '0')}`;
    messages.push({
      role: 'assistant',
      content: null,
      tool_calls: [{ id, type: 'function', function: { name, arguments: JSON.stringify(args) } }],
    });
    messages.push({ role: 'tool', tool_call_id: id, content: output });
  };
  TICKETS.forEach((ticket, round) => {
    messages.push({ role: 'user', content: ticket.ask });
    tool('search', { pattern: ticket.search, path: 'src' }, grepOutput(ticket));
    for (const path of ticket.files) tool('read_file', { path }, numbered(FILES[path] ?? ''));
    const testPath = /at (test\/[\w.-]+):/.exec(ticket.failing)?.[1] ?? 'test/invoice.test.ts';
    tool('read_file', { path: testPath }, numbered(testFile(ticket)));
    tool('run_tests', { command: 'npm test' }, testRun(ticket, ticket.id === 'INV-180', round));
    tool(
      'edit_file',
      { path: ticket.patch.path, old: ticket.patch.before, new: ticket.patch.after },
      `Edited ${ticket.patch.path}: 1 hunk, ${ticket.patch.after.split('\n').length} lines changed.`,
    );
    tool('run_tests', { command: 'npm test' }, testRun(ticket, true, round + 1));
    tool(
      'git_diff',
      { path: ticket.patch.path },
      `diff --git a/${ticket.patch.path} b/${ticket.patch.path}\n--- a/${ticket.patch.path}\n+++ b/${ticket.patch.path}\n@@ -1,6 +1,6 @@\n-${ticket.patch.before.split('\n').join('\n-')}\n+${ticket.patch.after.split('\n').join('\n+')}`,
    );
    messages.push({ role: 'assistant', content: ticket.done });
  });
  return messages;
}

if (process.argv[1]?.endsWith('demo-story.ts')) {
  for (const message of codingStory()) process.stdout.write(`${JSON.stringify(message)}\n`);
}
