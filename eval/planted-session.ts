/**
 * Deterministic agent sessions (OpenAI Chat format) with planted facts: ticket keys,
 * UUIDs, file names, branches, constraints, decisions with rationale, open tasks and
 * numbers with units, each placed at a seeded random position among realistic filler
 * turns (a coding agent reading files, grepping, running tests and editing).
 */
import { seededRandom } from '../src/testing/synthetic-session.js';
import { int, pick, type Random, shuffle } from './seeded-picks.js';

/** The kinds of fact the harness plants. */
export type FactKind =
  | 'ticket'
  | 'uuid'
  | 'file'
  | 'branch'
  | 'constraint'
  | 'decision'
  | 'open_task'
  | 'number'
  | 'identifier'
  | 'error'
  | 'url';

/** A fact whose presence in the compacted context is checked. */
export interface KeyFact {
  /** Stable id within its session. */
  id: string;
  kind: FactKind;
  /** Every probe must appear (whitespace-normalized, case-insensitive) for the fact to count. */
  probes: string[];
  /** Index of the raw message that carries the fact. */
  messageIndex: number;
}

/** A session with the facts it carries. */
export interface FidelitySession {
  name: string;
  messages: Record<string, unknown>[];
  facts: KeyFact[];
}

/** Options of {@link plantedSession}. */
export interface PlantedSessionOptions {
  /** @default 1 */
  seed?: number;
  /** User turns of filler. @default 36 */
  turns?: number;
}

function hex(rand: Random, n: number): string {
  let out = '';
  for (let i = 0; i < n; i++) out += '0123456789abcdef'[Math.floor(rand() * 16)];
  return out;
}

function uuid(rand: Random): string {
  return `${hex(rand, 8)}-${hex(rand, 4)}-4${hex(rand, 3)}-${pick(rand, ['8', '9', 'a', 'b'])}${hex(rand, 3)}-${hex(rand, 12)}`;
}

// ---- Fact material (disjoint from the filler's vocabulary) ----

const TICKET_PREFIXES = ['PAY', 'BILL', 'OPS', 'CORE', 'SEC', 'DATA', 'MOB', 'INFRA'];
const FACT_DIRS = [
  'services/ledger',
  'packages/checkout',
  'apps/console',
  'libs/telemetry',
  'workers/exporter',
];
const FACT_SUBDIRS = ['src', 'src/internal', 'lib', 'src/handlers'];
const FACT_NAMES = [
  'invoice_rounding',
  'currencyFormatter',
  'refund-reconciler',
  'ledgerSnapshot',
  'webhook_dispatch',
  'quota-enforcer',
  'tax_rules',
  'retryBudget',
  'csv_exporter',
  'tenantResolver',
];
const FACT_EXTS = ['ts', 'py', 'go', 'sql', 'yaml'];
const BRANCH_KINDS = ['fix', 'feature', 'hotfix', 'chore'];
const BRANCH_TOPICS = [
  'ledger-rounding',
  'refund-idempotency',
  'tenant-quota',
  'webhook-retries',
  'tax-rules-2025',
  'csv-export-streaming',
];

const CONSTRAINTS: { sentence: string; probe: string }[] = [
  {
    sentence:
      'Constraint: we must not change the public signature of LedgerClient.post because three teams call it.',
    probe: 'must not change the public signature of LedgerClient.post',
  },
  {
    sentence: 'Hard rule: never write to the eu-central-1 read replica from this job.',
    probe: 'never write to the eu-central-1 read replica',
  },
  {
    sentence: 'Keep in mind that the schema migration must be reversible with a single down step.',
    probe: 'migration must be reversible with a single down step',
  },
  {
    sentence:
      'Do not add any new runtime dependency to the checkout package; security review is closed for this quarter.',
    probe: 'Do not add any new runtime dependency to the checkout package',
  },
  {
    sentence: 'All amounts must stay in integer minor units, no floats anywhere in the ledger path.',
    probe: 'amounts must stay in integer minor units',
  },
  {
    sentence: 'The feature flag ledger_v2_rounding must default to off in production.',
    probe: 'ledger_v2_rounding must default to off in production',
  },
  {
    sentence:
      'Only the on-call SRE may run the backfill against production; we prepare the script but do not run it.',
    probe: 'Only the on-call SRE may run the backfill against production',
  },
  {
    sentence: 'Customer-visible error messages must not include internal tenant identifiers.',
    probe: 'error messages must not include internal tenant identifiers',
  },
];

const DECISIONS: { sentence: string; probes: string[] }[] = [
  {
    sentence:
      'Decision: we will use banker’s rounding (round half to even) in the invoice totals because the auditors reconcile against the bank’s own half-even totals.',
    probes: ['round half to even', 'auditors reconcile against the bank'],
  },
  {
    sentence:
      'I chose an idempotency key stored in the refunds table instead of a Redis lock, since the lock would be lost on failover and refunds could double-post.',
    probes: ['idempotency key stored in the refunds table', 'lost on failover'],
  },
  {
    sentence:
      'We are going with a nightly batch for the tax rule sync rather than webhooks because the provider rate-limits webhooks to 10 per minute per tenant.',
    probes: ['nightly batch for the tax rule sync', 'rate-limits webhooks'],
  },
  {
    sentence:
      'Decided to stream the CSV export with a cursor instead of loading all rows, to avoid the out-of-memory kills we saw on large tenants.',
    probes: ['stream the CSV export with a cursor', 'out-of-memory kills'],
  },
  {
    sentence:
      'We will keep the old quota endpoint alive behind a deprecation header because the mobile app 4.x still calls it.',
    probes: ['old quota endpoint alive behind a deprecation header', 'mobile app 4.x still calls it'],
  },
  {
    sentence:
      'Going with exponential backoff capped at five attempts for webhook retries, since unbounded retries flooded the dead-letter queue last incident.',
    probes: ['exponential backoff capped at five attempts', 'flooded the dead-letter queue'],
  },
];

const OPEN_TASKS: { sentence: string; probe: string }[] = [
  {
    sentence: 'TODO: backfill currency_code for the legacy invoices created before the migration.',
    probe: 'backfill currency_code for the legacy invoices',
  },
  {
    sentence: 'Still open: add a regression test for negative refund amounts.',
    probe: 'regression test for negative refund amounts',
  },
  {
    sentence: 'Blocked: waiting on the payments team to confirm the settlement cut-off time.',
    probe: 'confirm the settlement cut-off time',
  },
  {
    sentence: 'Follow-up: update the runbook section on replaying dead-lettered webhooks.',
    probe: 'runbook section on replaying dead-lettered webhooks',
  },
  {
    sentence: 'Next step after this: benchmark the export cursor against the largest tenant snapshot.',
    probe: 'benchmark the export cursor against the largest tenant snapshot',
  },
  {
    sentence: 'Remaining: remove the ledger_v1 code path once the flag has been on for two weeks.',
    probe: 'remove the ledger_v1 code path',
  },
];

const NUMBER_SUBJECTS: { template: (value: string) => string; unit: string; range: [number, number] }[] = [
  {
    template: (v) => `The p99 latency budget for POST /ledger/entries is ${v}.`,
    unit: 'ms',
    range: [120, 480],
  },
  {
    template: (v) => `The export worker is capped at ${v} of memory per pod.`,
    unit: 'MiB',
    range: [300, 1900],
  },
  {
    template: (v) => `Settlement files may be at most ${v} old when we reconcile them.`,
    unit: 'hours',
    range: [13, 71],
  },
  {
    template: (v) => `The refund batch size has to stay at ${v} per transaction.`,
    unit: 'rows',
    range: [230, 990],
  },
  { template: (v) => `Our monthly budget for the tax provider is ${v}.`, unit: 'USD', range: [1100, 8900] },
  {
    template: (v) => `The webhook dispatcher must sustain ${v} during the sale.`,
    unit: 'req/s',
    range: [1300, 9700],
  },
];

// ---- Filler ----

const FILLER_FILES = [
  'src/server.ts',
  'src/routes/health.ts',
  'src/db/pool.ts',
  'src/util/logger.ts',
  'test/server.test.ts',
  'package.json',
  'src/config/index.ts',
  'docs/ARCHITECTURE.md',
];
const FILLER_FUNCS = ['startServer', 'healthCheck', 'getPool', 'createLogger', 'loadConfig', 'shutdown'];
const FILLER_ASKS = [
  'Can you look at why the health check is flaky on CI?',
  'Please tidy up the logger setup, it prints twice on startup.',
  'The config loader ignores environment overrides, can you check?',
  'Let us make the pool shutdown cleaner when the process exits.',
  'Could you see why the server test sometimes times out?',
  'Please read through the architecture doc and check it still matches the code.',
  'Look into the warning about an unhandled promise during shutdown.',
];
const FILLER_THOUGHTS = [
  'Let me open the file first to see the current implementation.',
  'I will search for the call sites before changing anything.',
  'Let me run the test suite to see the current state.',
  'I am going to check how the logger is created.',
  'Now I will make the edit and rerun the tests.',
  'Let me look at the surrounding code.',
];
const FILLER_WRAPS = [
  'The change is in place and the tests pass locally.',
  'That part looks fine; nothing to change there.',
  'I updated the code and the suite is green again.',
  'The flakiness came from a shared port; it now uses an ephemeral one.',
  'The duplicate log line is gone after removing the second transport.',
];
const LOG_WORDS =
  'request handled connection opened pool acquired released timeout retry scheduled cache warm idle worker started stopped listening'.split(
    ' ',
  );

function codeListing(rand: Random, file: string, lines: number): string {
  const out = [`[File: ${file} (${lines + int(rand, 10, 90)} lines total)]`];
  for (let i = 1; i <= lines; i++) {
    const fn = pick(rand, FILLER_FUNCS);
    const kind = int(rand, 0, 4);
    const text =
      kind === 0
        ? `export async function ${fn}(options = {}) {`
        : kind === 1
          ? `  const value = await ${pick(rand, FILLER_FUNCS)}(options);`
          : kind === 2
            ? `  if (!value) throw new Error('${fn} failed');`
            : kind === 3
              ? `  logger.debug('${pick(rand, LOG_WORDS)} ${pick(rand, LOG_WORDS)}');`
              : '}';
    out.push(`${i}: ${text}`);
  }
  return out.join('\n');
}

function testOutput(rand: Random): string {
  const passed = int(rand, 20, 60);
  const lines = [`> vitest run`, ''];
  for (let i = 0; i < int(rand, 4, 10); i++)
    lines.push(
      ` ✓ ${pick(
        rand,
        FILLER_FILES.filter((f) => f.startsWith('test')),
      )} > ${pick(rand, FILLER_FUNCS)} ${pick(rand, LOG_WORDS)}`,
    );
  const failing = rand() < 0.4;
  if (failing) {
    lines.push(` × test/server.test.ts > ${pick(rand, FILLER_FUNCS)} times out`);
    lines.push(`   AssertionError: expected 'ready' to be 'listening'`);
  }
  lines.push(
    '',
    ` Tests  ${failing ? '1 failed | ' : ''}${passed} passed`,
    ` Duration  ${int(rand, 1, 9)}.${int(rand, 10, 99)}s`,
  );
  return lines.join('\n');
}

function grepOutput(rand: Random, pattern: string): string {
  const lines: string[] = [];
  for (let i = 0; i < int(rand, 3, 9); i++)
    lines.push(
      `${pick(rand, FILLER_FILES)}:${int(rand, 1, 300)}:  await ${pattern}(${pick(rand, ['', 'options', 'config'])})`,
    );
  return lines.join('\n');
}

function logOutput(rand: Random, lines: number): string {
  const out: string[] = [];
  for (let i = 0; i < lines; i++)
    out.push(
      `2025-03-${String(int(rand, 10, 28))}T1${int(rand, 0, 9)}:${int(rand, 10, 59)}:${int(rand, 10, 59)}Z info ${pick(rand, LOG_WORDS)} ${pick(rand, LOG_WORDS)} worker=${int(rand, 1, 8)}`,
    );
  return out.join('\n');
}

/** One tool call and its result. */
interface ToolStep {
  name: string;
  args: Record<string, unknown>;
  output: string;
}

function fillerStep(rand: Random): ToolStep {
  const kind = pick(rand, ['read', 'read', 'grep', 'test', 'edit', 'logs']);
  const file = pick(rand, FILLER_FILES);
  switch (kind) {
    case 'read':
      return { name: 'read_file', args: { path: file }, output: codeListing(rand, file, int(rand, 25, 70)) };
    case 'grep': {
      const pattern = pick(rand, FILLER_FUNCS);
      return { name: 'grep', args: { pattern, path: 'src' }, output: grepOutput(rand, pattern) };
    }
    case 'test':
      return { name: 'run_tests', args: { command: 'npx vitest run' }, output: testOutput(rand) };
    case 'logs':
      return {
        name: 'bash',
        args: { command: 'tail -n 40 logs/app.log' },
        output: logOutput(rand, int(rand, 15, 40)),
      };
    default:
      return {
        name: 'edit_file',
        args: {
          path: file,
          old: `await ${pick(rand, FILLER_FUNCS)}()`,
          new: `await ${pick(rand, FILLER_FUNCS)}(options)`,
        },
        output: `Edited ${file}: 1 replacement.`,
      };
  }
}

// ---- Facts ----

type Carrier = 'user' | 'assistant' | 'tool';

interface PlannedFact {
  kind: FactKind;
  carrier: Carrier;
  /** Text for a user or assistant carrier; the tool step for a tool carrier. */
  sentence?: string;
  step?: ToolStep;
  probes: string[];
}

function planFacts(rand: Random): PlannedFact[] {
  const facts: PlannedFact[] = [];
  const prefixes = shuffle(rand, TICKET_PREFIXES);
  for (let i = 0; i < 3; i++) {
    const key = `${prefixes[i]}-${int(rand, 1000, 9899)}`;
    const sentence = pick(rand, [
      `This is tracked in ${key}; reference it in the pull request.`,
      `Please link ${key} in the commit message.`,
      `Related incident ticket: ${key}.`,
    ]);
    facts.push({ kind: 'ticket', carrier: i === 2 ? 'assistant' : 'user', sentence, probes: [key] });
  }
  for (let i = 0; i < 3; i++) {
    const id = uuid(rand);
    if (i === 0) {
      facts.push({ kind: 'uuid', carrier: 'user', sentence: `The affected tenant is ${id}.`, probes: [id] });
    } else {
      facts.push({
        kind: 'uuid',
        carrier: 'tool',
        step: {
          name: 'bash',
          args: { command: 'psql -c "select id, status from tenants where status = \'suspended\'"' },
          output: `                  id                  |  status\n--------------------------------------+-----------\n ${id} | suspended\n(1 row)`,
        },
        probes: [id],
      });
    }
  }
  const names = shuffle(rand, FACT_NAMES);
  for (let i = 0; i < 4; i++) {
    const path = `${pick(rand, FACT_DIRS)}/${pick(rand, FACT_SUBDIRS)}/${names[i]}.${pick(rand, FACT_EXTS)}`;
    if (i < 2) {
      facts.push({
        kind: 'file',
        carrier: i === 0 ? 'user' : 'assistant',
        sentence:
          i === 0
            ? `The rounding logic that needs fixing lives in ${path}.`
            : `Found it: the retry loop is implemented in ${path}.`,
        probes: [path],
      });
    } else {
      facts.push({
        kind: 'file',
        carrier: 'tool',
        step: {
          name: 'grep',
          args: { pattern: 'applyRounding', path: '.' },
          output: `${path}:${int(rand, 10, 400)}:  return applyRounding(total, mode)`,
        },
        probes: [path],
      });
    }
  }
  const topics = shuffle(rand, BRANCH_TOPICS);
  for (let i = 0; i < 2; i++) {
    const branch = `${pick(rand, BRANCH_KINDS)}/${topics[i]}-${int(rand, 10, 99)}`;
    if (i === 0) {
      facts.push({
        kind: 'branch',
        carrier: 'user',
        sentence: `Push everything to the branch ${branch}, not to main.`,
        probes: [branch],
      });
    } else {
      facts.push({
        kind: 'branch',
        carrier: 'tool',
        step: {
          name: 'bash',
          args: { command: 'git status' },
          output: `On branch ${branch}\nYour branch is up to date with 'origin/${branch}'.\n\nnothing to commit, working tree clean`,
        },
        probes: [branch],
      });
    }
  }
  for (const c of shuffle(rand, CONSTRAINTS).slice(0, 4))
    facts.push({ kind: 'constraint', carrier: 'user', sentence: c.sentence, probes: [c.probe] });
  for (const d of shuffle(rand, DECISIONS).slice(0, 4))
    facts.push({ kind: 'decision', carrier: 'assistant', sentence: d.sentence, probes: d.probes });
  shuffle(rand, OPEN_TASKS)
    .slice(0, 4)
    .forEach((t, i) => {
      facts.push({
        kind: 'open_task',
        carrier: i % 2 ? 'assistant' : 'user',
        sentence: t.sentence,
        probes: [t.probe],
      });
    });
  for (const n of shuffle(rand, NUMBER_SUBJECTS).slice(0, 4)) {
    const value = `${int(rand, n.range[0], n.range[1])} ${n.unit}`;
    facts.push({ kind: 'number', carrier: 'user', sentence: n.template(value), probes: [value] });
  }
  return facts;
}

/**
 * Builds a planted session: about `turns` user turns of filler with 28 facts placed at
 * seeded random turns. The same seed gives the same session.
 *
 * @example
 * ```ts
 * const { messages, facts } = plantedSession({ seed: 3 });
 * ```
 */
export function plantedSession(options: PlantedSessionOptions = {}): FidelitySession {
  const seed = options.seed ?? 1;
  const rand = seededRandom(seed * 7919 + 17);
  const turns = options.turns ?? 36;
  const planned = planFacts(rand);
  // Each fact goes to a random turn; several facts may share a turn.
  const byTurn = new Map<number, PlannedFact[]>();
  for (const fact of planned) {
    const turn = int(rand, 0, turns - 1);
    byTurn.set(turn, [...(byTurn.get(turn) ?? []), fact]);
  }
  const messages: Record<string, unknown>[] = [
    {
      role: 'system',
      content:
        'You are a senior engineer working as a coding agent in the acme/platform monorepo. Use the tools to read, search, test and edit code.',
    },
  ];
  const facts: KeyFact[] = [];
  const record = (fact: PlannedFact) =>
    facts.push({
      id: `${fact.kind}-${facts.length + 1}`,
      kind: fact.kind,
      probes: fact.probes,
      messageIndex: messages.length - 1,
    });
  let call = 0;
  for (let turn = 0; turn < turns; turn++) {
    const here = byTurn.get(turn) ?? [];
    const userFacts = here.filter((f) => f.carrier === 'user');
    const ask =
      turn === 0
        ? 'We are fixing the ledger service this week; start by getting familiar with the code.'
        : pick(rand, FILLER_ASKS);
    messages.push({ role: 'user', content: [ask, ...userFacts.map((f) => f.sentence)].join(' ') });
    for (const f of userFacts) record(f);
    const toolFacts = here.filter((f) => f.carrier === 'tool');
    const steps = int(rand, 2, 5);
    const toolSlots = new Set(toolFacts.map(() => int(rand, 0, steps - 1)));
    let pendingToolFacts = [...toolFacts];
    for (let s = 0; s < steps; s++) {
      const step: { step: ToolStep; fact?: PlannedFact } =
        toolSlots.has(s) && pendingToolFacts.length > 0
          ? { step: pendingToolFacts[0]!.step!, fact: pendingToolFacts[0]! }
          : { step: fillerStep(rand) };
      if (step.fact) pendingToolFacts = pendingToolFacts.slice(1);
      const id = `call_${seed}_${call++}`;
      messages.push({
        role: 'assistant',
        content: rand() < 0.6 ? pick(rand, FILLER_THOUGHTS) : null,
        tool_calls: [
          {
            id,
            type: 'function',
            function: { name: step.step.name, arguments: JSON.stringify(step.step.args) },
          },
        ],
      });
      messages.push({ role: 'tool', tool_call_id: id, content: step.step.output });
      if (step.fact) record(step.fact);
    }
    // Tool facts that found no slot go in a last step.
    for (const fact of pendingToolFacts) {
      const id = `call_${seed}_${call++}`;
      messages.push({
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id,
            type: 'function',
            function: { name: fact.step!.name, arguments: JSON.stringify(fact.step!.args) },
          },
        ],
      });
      messages.push({ role: 'tool', tool_call_id: id, content: fact.step!.output });
      record(fact);
    }
    const assistantFacts = here.filter((f) => f.carrier === 'assistant');
    messages.push({
      role: 'assistant',
      content: [pick(rand, FILLER_WRAPS), ...assistantFacts.map((f) => f.sentence)].join(' '),
    });
    for (const f of assistantFacts) record(f);
  }
  return { name: `planted-${seed}`, messages, facts };
}
