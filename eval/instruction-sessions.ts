/**
 * Generated agent sessions for the instruction-retention eval (issue 20 point 4): coding,
 * support and research agents of N model calls, tool-heavy (outputs of 200 to 3,000
 * tokens), with 5 to 15 user instructions at seeded random calls, worded in several ways
 * ("keep X", "don't touch Y", "never Z", "always use A not B", "remember ticket T-123", "the
 * deadline is ...", "use path src/x"). Each instruction carries its key content (the id, path
 * or key words a request must still hold for the instruction to count as kept), and that
 * content is in no other message of the session.
 */
import { seededRandom } from '../src/testing/synthetic-session.js';
import { contextText, normalize } from './context-measures.js';
import { int, pick, type Random, shuffle } from './seeded-picks.js';

/** The kinds of session generated. */
export const SESSION_KINDS = ['coding', 'support', 'research'] as const;
export type SessionKind = (typeof SESSION_KINDS)[number];

/** The ways an instruction is worded. */
export type InstructionForm =
  | 'keep'
  | 'dont_touch'
  | 'never'
  | 'always_use'
  | 'ticket'
  | 'deadline'
  | 'use_path';

/** One user instruction and what a request must hold for it to count as kept. */
export interface PlannedInstruction {
  id: string;
  form: InstructionForm;
  /** The sentence as the user wrote it. */
  sentence: string;
  /** Every key must be in the request (whitespace-normalized, case-insensitive). */
  keys: string[];
  /** The model call before which the user gave it (0-based). */
  call: number;
}

/** One step of the scripted loop: what is appended before a model call, and the model's answer after it. */
export interface ScriptedCall {
  /** Messages appended before the call (the user's turn, and the answer that closed the last one). */
  before: Record<string, unknown>[];
  /** The model's answer and the tool's result, appended after the call. */
  after: Record<string, unknown>[];
}

/** A scripted session: the opening messages, then one step per model call. */
export interface InstructionSession {
  name: string;
  kind: SessionKind;
  calls: ScriptedCall[];
  instructions: PlannedInstruction[];
}

/** Options of {@link instructionSession}. */
export interface InstructionSessionOptions {
  kind: SessionKind;
  /** @default 1 */
  seed?: number;
  /** Model calls. @default 300 */
  calls?: number;
  /** Fewest and most instructions. @default [5, 15] */
  instructions?: [number, number];
}

// ---- Instruction material, per kind (none of it appears in the filler) ----

interface KindMaterial {
  system: string;
  opening: string;
  ticketPrefixes: string[];
  pathDirs: string[];
  pathNames: string[];
  pathExts: string[];
  /** Things to keep: [what the user calls it, its key]. */
  keep: { thing: string; key: string }[];
  /** Things never to do: the clause and its key words. */
  never: { clause: string; keys: string[] }[];
  /** Always A, not B. */
  always: { a: string; b: string; what: string }[];
  /** What a deadline is for. */
  deadlineFor: string[];
}

const MATERIAL: Record<SessionKind, KindMaterial> = {
  coding: {
    system:
      'You are a coding agent working in the acme/billing repository. Read, search, test and edit code with the tools.',
    opening:
      'We are moving the billing service to the new invoice API this sprint. Work through the modules one by one and keep the test suite green.',
    ticketPrefixes: ['BILL', 'PAY', 'CORE', 'OPS'],
    pathDirs: ['src/invoicing', 'src/proration', 'lib/ledger-bridge', 'packages/tax-engine'],
    pathNames: ['credit_notes', 'prorateSeats', 'dunningSchedule', 'vat_overrides', 'usageRollup'],
    pathExts: ['ts', 'py', 'go'],
    keep: [
      { thing: 'the `legacyInvoiceTotal` export', key: 'legacyInvoiceTotal' },
      { thing: 'the `parseLedgerRowV1` helper', key: 'parseLedgerRowV1' },
      { thing: 'the `X-Billing-Trace` header on outgoing calls', key: 'X-Billing-Trace' },
      { thing: 'the `roundHalfEvenCents` behaviour', key: 'roundHalfEvenCents' },
    ],
    never: [
      { clause: 'force-push to the release branches', keys: ['force-push', 'release branches'] },
      { clause: 'log full card numbers, mask them', keys: ['full card numbers'] },
      { clause: 'disable the idempotency check in the webhook handler', keys: ['idempotency check'] },
      { clause: 'bump the Postgres driver major version', keys: ['Postgres driver major version'] },
    ],
    always: [
      { a: 'date-fns', b: 'moment', what: 'for dates' },
      { a: 'zod', b: 'joi', what: 'for validation' },
      { a: 'pino', b: 'winston', what: 'for logging' },
      { a: 'undici', b: 'axios', what: 'for HTTP calls' },
    ],
    deadlineFor: ['the invoice API cutover', 'the proration fix', 'the code freeze', 'the tax engine review'],
  },
  support: {
    system:
      'You are a customer support agent for Northwind Outdoor. Use the tools to look up customers, orders and knowledge base articles, and to reply.',
    opening:
      'Please work through the escalation queue for the returns team today, oldest cases first, and draft replies for each customer.',
    ticketPrefixes: ['SUP', 'ESC', 'RMA', 'CX'],
    pathDirs: ['kb/returns', 'kb/shipping', 'macros/escalations', 'templates/replies'],
    pathNames: ['eu-withdrawal', 'damaged_in_transit', 'warranty-claims', 'store_credit', 'late_delivery'],
    pathExts: ['md', 'txt', 'yaml'],
    keep: [
      { thing: 'the goodwill voucher code GW-SPRING-40 on every reply', key: 'GW-SPRING-40' },
      { thing: 'the Platinum tier flag on the Okafor account', key: 'Platinum tier' },
      { thing: 'the courtesy callback note for Mrs Lindqvist', key: 'Lindqvist' },
      { thing: 'the partial refund hold on order NW-77310', key: 'NW-77310' },
    ],
    never: [
      { clause: 'promise a delivery date to a customer', keys: ['promise a delivery date'] },
      { clause: 'share the warehouse phone number', keys: ['warehouse phone number'] },
      { clause: 'offer cash refunds above 200 euros without approval', keys: ['cash refunds above 200'] },
      { clause: 'close a case the customer reopened', keys: ['customer reopened'] },
    ],
    always: [
      { a: 'macro REFUND-STD-2', b: 'REFUND-LEGACY', what: 'for refunds' },
      { a: 'the formal greeting', b: 'first names', what: 'in replies' },
      { a: 'DHL Express', b: 'Hermes', what: 'for replacement shipments' },
      { a: 'store credit', b: 'bank transfers', what: 'for goodwill' },
    ],
    deadlineFor: ['the warranty backlog', 'the Okafor escalation', 'the returns audit', 'the holiday queue'],
  },
  research: {
    system:
      'You are a research assistant. Search the literature, read papers and pages, and keep notes with the tools.',
    opening:
      'I am writing a literature review on urban heat islands and cooling interventions. Collect the key studies and summarize their methods and findings.',
    ticketPrefixes: ['RES', 'LIB', 'DATA', 'IRB'],
    pathDirs: ['notes/lit-review', 'data/derived', 'drafts/chapter2', 'figures/heat-maps'],
    pathNames: ['albedo_studies', 'canopy-cover', 'surface_temps', 'green_roofs', 'street-trees'],
    pathExts: ['md', 'csv', 'bib'],
    keep: [
      { thing: 'the Oke 1982 energy balance paper as the anchor reference', key: 'Oke 1982' },
      { thing: 'the Landsat 8 thermal band comparison', key: 'Landsat 8' },
      { thing: 'the Phoenix cool pavement pilot in the comparison', key: 'cool pavement pilot' },
      { thing: 'the Santamouris meta-analysis numbers', key: 'Santamouris' },
    ],
    never: [
      { clause: 'cite preprints that have no DOI', keys: ['preprints', 'no DOI'] },
      { clause: 'paraphrase the abstracts as findings', keys: ['paraphrase the abstracts'] },
      { clause: 'mix Fahrenheit readings into the Celsius tables', keys: ['Fahrenheit'] },
      { clause: 'include studies from before 1990 in the main table', keys: ['before 1990'] },
    ],
    always: [
      { a: 'APA 7', b: 'Chicago style', what: 'for citations' },
      { a: 'land surface temperature', b: 'air temperature proxies', what: 'as the outcome' },
      { a: 'Zotero keys', b: 'page numbers', what: 'in the notes' },
      { a: 'median effects', b: 'means', what: 'in the summary table' },
    ],
    deadlineFor: ['the chapter draft', 'the ethics form', 'the figures', 'the supervisor meeting'],
  },
};

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'September', 'October'];
const HOURS = ['10:00', '11:00', '12:00', '13:00', '14:00', '15:00', '16:00', '17:00'];
const WEEKDAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday'];

/** The instruction's sentence in one of several wordings, with its keys. */
function wordInstruction(
  rand: Random,
  form: InstructionForm,
  material: KindMaterial,
  used: Set<string>,
): { sentence: string; keys: string[] } | undefined {
  const fresh = <T>(list: readonly T[], keyOf: (item: T) => string): T | undefined => {
    const left = list.filter((item) => !used.has(keyOf(item)));
    if (left.length === 0) return undefined;
    const item = pick(rand, left);
    used.add(keyOf(item));
    return item;
  };
  switch (form) {
    case 'keep': {
      const item = fresh(material.keep, (k) => k.key);
      if (!item) return undefined;
      const sentence = pick(rand, [
        `Keep ${item.thing}, other people depend on it.`,
        `Please keep ${item.thing} as it is.`,
        `Whatever you change, ${item.thing} has to stay.`,
        `Make sure you keep ${item.thing}.`,
      ]);
      return { sentence, keys: [item.key] };
    }
    case 'dont_touch': {
      const path = `${pick(rand, material.pathDirs)}/${pick(rand, ['generated', 'vendor', 'frozen', 'legacy'])}-${int(rand, 10, 99)}/`;
      if (used.has(path)) return undefined;
      used.add(path);
      const sentence = pick(rand, [
        `Don't touch anything under ${path}, another team owns it.`,
        `Do not modify files in ${path}.`,
        `Hands off ${path} please.`,
        `Leave ${path} alone, it is regenerated nightly.`,
      ]);
      return { sentence, keys: [path] };
    }
    case 'never': {
      const item = fresh(material.never, (n) => n.clause);
      if (!item) return undefined;
      const sentence = pick(rand, [
        `Never ${item.clause}.`,
        `One hard rule: never ${item.clause}.`,
        `Please never ${item.clause}, no exceptions.`,
      ]);
      return { sentence, keys: item.keys };
    }
    case 'always_use': {
      const item = fresh(material.always, (a) => a.a);
      if (!item) return undefined;
      const sentence = pick(rand, [
        `Always use ${item.a}, not ${item.b}, ${item.what}.`,
        `Use ${item.a} instead of ${item.b} ${item.what}.`,
        `${item.what[0]!.toUpperCase()}${item.what.slice(1)} we use ${item.a}, never ${item.b}.`,
      ]);
      return { sentence, keys: [item.a, item.b] };
    }
    case 'ticket': {
      const ticket = `${pick(rand, material.ticketPrefixes)}-${int(rand, 1000, 9899)}`;
      if (used.has(ticket)) return undefined;
      used.add(ticket);
      const sentence = pick(rand, [
        `Remember ticket ${ticket}, it needs to go in the final report.`,
        `Also keep ticket ${ticket} in mind while you go.`,
        `This is tracked in ${ticket}; reference it when you are done.`,
        `Note ${ticket} for later.`,
      ]);
      return { sentence, keys: [ticket] };
    }
    case 'deadline': {
      const subject = fresh(material.deadlineFor, (d) => d);
      if (!subject) return undefined;
      const day = int(rand, 2, 28);
      // One month per deadline: no date of one is a prefix of another's (`June 2`, `June 21`).
      const month = fresh(MONTHS, (m) => m);
      if (!month) return undefined;
      // Distinct hours of two digits: no hour is inside another (`9:00`, `19:00`).
      const hour = fresh(HOURS, (h) => `hour ${h}`);
      if (!hour) return undefined;
      const date = pick(rand, [`${day} ${month}`, `${month} ${day}`]);
      const sentence = pick(rand, [
        `The deadline for ${subject} is ${date} at ${hour}.`,
        `${subject[0]!.toUpperCase()}${subject.slice(1)} is due ${pick(rand, WEEKDAYS)} ${date}, ${hour} sharp.`,
        `Heads up: ${subject} has to be done by ${date}, ${hour}.`,
      ]);
      return { sentence, keys: [date, hour] };
    }
    case 'use_path': {
      const path = `${pick(rand, material.pathDirs)}/${pick(rand, material.pathNames)}_${int(rand, 2, 9)}.${pick(rand, material.pathExts)}`;
      if (used.has(path)) return undefined;
      used.add(path);
      const sentence = pick(rand, [
        `Use path ${path} for the new work.`,
        `Put it in ${path}.`,
        `Write the output to ${path}, not next to the old one.`,
      ]);
      return { sentence, keys: [path] };
    }
  }
}

/** Small talk and context around an instruction, or a user turn with no instruction at all. */
const LEAD_INS = ['Quick note before you go on.', 'One more thing.', 'Ok, thanks for the update.', ''];
const LEAD_OUTS = ['Carry on after that.', 'Thanks!', '', ''];
const CHATTER = [
  'Looks good so far, carry on.',
  'Thanks, continue with the next one.',
  'Ok, go ahead.',
  'Nice, that was quick. Keep going.',
  'Sounds reasonable to me.',
  'What did you find so far? Then continue.',
];

// ---- Tool output filler (no instruction key in it) ----

const CODE_FILES = [
  'src/server.ts',
  'src/routes/health.ts',
  'src/db/pool.ts',
  'src/util/logger.ts',
  'test/api.test.ts',
];
const CODE_FUNCS = [
  'startServer',
  'healthCheck',
  'getPool',
  'createLogger',
  'loadConfig',
  'shutdown',
  'handle',
];
const LOG_WORDS =
  'request handled connection opened pool acquired released timeout retry scheduled cache warm idle worker started stopped listening'.split(
    ' ',
  );
const PROSE =
  'the of and to in is that for with as was on are by this be from at an which or were their its has have been more than between during these also other into most some after such found higher lower city surface area effect values study results data model measured average daily summer night heat cooling vegetation temperature variation urban regions across observed method sample station analysis'.split(
    ' ',
  );
const CUSTOMERS = ['Jonas Berg', 'Aiko Sato', 'Priya Nair', 'Tom Becker', 'Sara Costa', 'Luis Ortega'];
const PRODUCTS = ['trail tent', 'down jacket', 'water filter', 'camp stove', 'sleeping pad', 'day pack'];

/** About `tokens` tokens of lines from `line` (four characters a token is close enough here). */
function sized(tokens: number, line: (i: number) => string): string {
  const out: string[] = [];
  let chars = 0;
  for (let i = 1; chars < tokens * 4; i++) {
    const text = line(i);
    out.push(text);
    chars += text.length + 1;
  }
  return out.join('\n');
}

/** Context a user pastes around an instruction: about `tokens` tokens of sentences, a few of them asking something in passing. */
function context(rand: Random, tokens: number): string {
  const out: string[] = [];
  let chars = 0;
  while (chars < tokens * 4) {
    const sentence = rand() < 0.15 ? pick(rand, ASIDES) : prose(rand, int(rand, 8, 20));
    out.push(sentence[0]!.toUpperCase() + sentence.slice(1));
    chars += sentence.length + 1;
  }
  return out.join(' ');
}

/** Sentences that sound like instructions but name nothing to keep. */
const ASIDES = [
  'We should probably look at this again next quarter.',
  'It would be nice to have this cleaner at some point.',
  'Please read the surrounding notes as background only.',
  'I need to check with the team about the other items.',
  'Make sure the summary you write is short.',
];

function prose(rand: Random, words: number): string {
  const out: string[] = [];
  for (let i = 0; i < words; i++) out.push(pick(rand, PROSE));
  return `${out.join(' ')}.`;
}

interface ToolStep {
  name: string;
  args: Record<string, unknown>;
  output: string;
}

function codingStep(rand: Random, tokens: number): ToolStep {
  const file = pick(rand, CODE_FILES);
  switch (pick(rand, ['read', 'read', 'grep', 'test', 'logs', 'edit'])) {
    case 'read':
      return {
        name: 'read_file',
        args: { path: file },
        output: sized(tokens, (i) => {
          const fn = pick(rand, CODE_FUNCS);
          return `${i}: ${pick(rand, [`export async function ${fn}(options = {}) {`, `  const value = await ${fn}(options);`, `  if (!value) throw new Error('${fn} failed');`, `  logger.debug('${pick(rand, LOG_WORDS)}');`, '}'])}`;
        }),
      };
    case 'grep': {
      const pattern = pick(rand, CODE_FUNCS);
      return {
        name: 'grep',
        args: { pattern, path: 'src' },
        output: sized(
          tokens,
          () => `${pick(rand, CODE_FILES)}:${int(rand, 1, 400)}:  await ${pattern}(options)`,
        ),
      };
    }
    case 'test':
      return {
        name: 'run_tests',
        args: { command: 'npm test' },
        output: `${sized(tokens - 20, () => ` ✓ ${pick(rand, CODE_FILES)} > ${pick(rand, CODE_FUNCS)} ${pick(rand, LOG_WORDS)}`)}\n Tests  ${int(rand, 20, 90)} passed`,
      };
    case 'logs':
      return {
        name: 'bash',
        args: { command: 'tail -n 200 logs/app.log' },
        output: sized(
          tokens,
          () =>
            `2025-0${int(rand, 1, 9)}-${int(rand, 10, 28)}T1${int(rand, 0, 9)}:${int(rand, 10, 59)}:${int(rand, 10, 59)}Z info ${pick(rand, LOG_WORDS)} ${pick(rand, LOG_WORDS)} worker=${int(rand, 1, 8)}`,
        ),
      };
    default:
      return {
        name: 'edit_file',
        args: {
          path: file,
          old: `await ${pick(rand, CODE_FUNCS)}()`,
          new: `await ${pick(rand, CODE_FUNCS)}(options)`,
        },
        output: `Edited ${file}: 1 replacement.`,
      };
  }
}

function supportStep(rand: Random, tokens: number): ToolStep {
  const customer = pick(rand, CUSTOMERS);
  switch (pick(rand, ['customer', 'orders', 'kb', 'history', 'reply'])) {
    case 'customer':
      return {
        name: 'lookup_customer',
        args: { name: customer },
        output: JSON.stringify(
          {
            name: customer,
            since: `20${int(rand, 12, 23)}`,
            notes: Array.from({ length: Math.max(1, Math.floor(tokens / 40)) }, () => prose(rand, 25)),
          },
          null,
          1,
        ),
      };
    case 'orders':
      return {
        name: 'list_orders',
        args: { customer },
        output: sized(
          tokens,
          () =>
            `{"order":"W${int(rand, 100000, 999999)}","item":"${pick(rand, PRODUCTS)}","status":"${pick(rand, ['delivered', 'shipped', 'returned', 'processing'])}","total":${int(rand, 10, 400)}.${int(rand, 10, 99)}}`,
        ),
      };
    case 'kb':
      return {
        name: 'search_kb',
        args: { query: `${pick(rand, PRODUCTS)} return` },
        output: sized(tokens, () => prose(rand, 18)),
      };
    case 'history':
      return {
        name: 'case_history',
        args: { customer },
        output: sized(tokens, () => `${pick(rand, ['customer', 'agent'])}: ${prose(rand, 14)}`),
      };
    default:
      return {
        name: 'send_reply',
        args: { customer, body: prose(rand, 30) },
        output: 'Reply queued.',
      };
  }
}

function researchStep(rand: Random, tokens: number): ToolStep {
  switch (pick(rand, ['search', 'page', 'page', 'paper', 'note'])) {
    case 'search':
      return {
        name: 'web_search',
        args: { query: `${pick(rand, PROSE)} ${pick(rand, PROSE)} urban heat` },
        output: sized(
          tokens,
          (i) =>
            `${i}. ${prose(rand, 6)} (https://example.org/a/${int(rand, 1000, 9999)})\n   ${prose(rand, 20)}`,
        ),
      };
    case 'page':
      return {
        name: 'fetch_page',
        args: { url: `https://example.org/a/${int(rand, 1000, 9999)}` },
        output: sized(tokens, () => prose(rand, 40)),
      };
    case 'paper':
      return {
        name: 'read_paper',
        args: { id: `paper-${int(rand, 100, 999)}` },
        output: `Abstract\n${sized(tokens, () => prose(rand, 35))}`,
      };
    default:
      return {
        name: 'save_note',
        args: { text: prose(rand, 20) },
        output: 'Saved.',
      };
  }
}

const STEPS: Record<SessionKind, (rand: Random, tokens: number) => ToolStep> = {
  coding: codingStep,
  support: supportStep,
  research: researchStep,
};

const WRAPS = [
  'Done with that part; here is where things stand.',
  'Finished this step, the results are above.',
  'That is complete. Let me know how to continue.',
];

/**
 * A scripted session of `calls` model calls: 5 to 15 instructions at seeded random calls
 * (plus some chatter turns), and between them a tool call per model call whose output is 200
 * to 3,000 tokens. The same options give the same session.
 *
 * @example
 * ```ts
 * const session = instructionSession({ kind: 'coding', seed: 1, calls: 300 });
 * ```
 */
export function instructionSession(options: InstructionSessionOptions): InstructionSession {
  const { kind } = options;
  const seed = options.seed ?? 1;
  const total = options.calls ?? 300;
  const [fewest, most] = options.instructions ?? [5, 15];
  const rand = seededRandom(seed * 104_729 + SESSION_KINDS.indexOf(kind) * 7_919 + 3);
  const material = MATERIAL[kind];
  const forms: InstructionForm[] = [
    'keep',
    'dont_touch',
    'never',
    'always_use',
    'ticket',
    'deadline',
    'use_path',
  ];
  const count = int(rand, fewest, most);
  // Distinct calls after the first (the opening request is the task, not counted).
  const slots = shuffle(
    rand,
    Array.from({ length: Math.max(0, total - 2) }, (_, k) => k + 1),
  )
    .slice(0, count)
    .sort((a, b) => a - b);
  const used = new Set<string>();
  const instructions: PlannedInstruction[] = [];
  let formOrder = shuffle(rand, forms);
  for (const call of slots) {
    let worded: { sentence: string; keys: string[] } | undefined;
    let form: InstructionForm | undefined;
    for (let tries = 0; !worded && tries < 20; tries++) {
      if (formOrder.length === 0) formOrder = shuffle(rand, forms);
      form = formOrder.pop()!;
      worded = wordInstruction(rand, form, material, used);
    }
    if (!worded || !form) break;
    instructions.push({ id: `${kind}-${seed}-i${instructions.length + 1}`, form, call, ...worded });
  }
  const byCall = new Map(instructions.map((i) => [i.call, i]));
  const chatter = new Set(
    shuffle(
      rand,
      Array.from({ length: Math.max(0, total - 2) }, (_, k) => k + 1).filter((c) => !byCall.has(c)),
    ).slice(0, int(rand, 4, 10)),
  );
  const calls: ScriptedCall[] = [];
  const step = STEPS[kind];
  for (let call = 0; call < total; call++) {
    const before: Record<string, unknown>[] = [];
    if (call === 0) {
      before.push({ role: 'system', content: material.system }, { role: 'user', content: material.opening });
    } else {
      const instruction = byCall.get(call);
      if (instruction || chatter.has(call)) {
        // The previous call's answer closed the turn; the user speaks.
        // A third of the instructions sit in a long message (context pasted around them).
        const long = rand() < 0.35;
        const text = instruction
          ? [
              pick(rand, LEAD_INS),
              long ? context(rand, int(rand, 150, 600)) : '',
              instruction.sentence,
              long ? context(rand, int(rand, 50, 300)) : '',
              pick(rand, LEAD_OUTS),
            ]
              .filter(Boolean)
              .join(' ')
          : pick(rand, CHATTER);
        before.push({ role: 'user', content: text });
      }
    }
    const after: Record<string, unknown>[] = [];
    const nextSpeaks = byCall.has(call + 1) || chatter.has(call + 1);
    if (nextSpeaks) {
      after.push({ role: 'assistant', content: pick(rand, WRAPS) });
    } else {
      const tool = step(rand, int(rand, 200, 3000));
      const id = `call_${call}`;
      after.push(
        {
          role: 'assistant',
          content: rand() < 0.4 ? 'Let me look at the next piece.' : null,
          tool_calls: [
            { id, type: 'function', function: { name: tool.name, arguments: JSON.stringify(tool.args) } },
          ],
        },
        { role: 'tool', tool_call_id: id, content: tool.output },
      );
    }
    calls.push({ before, after });
  }
  const session: InstructionSession = { name: `${kind}-${seed}`, kind, calls, instructions };
  assertKeysUnique(session);
  return session;
}

/**
 * Checks that each instruction's keys are in its own message and in no other message of the
 * session (so a key found in a request is the instruction kept, not filler); throws otherwise.
 */
export function assertKeysUnique(session: InstructionSession): void {
  const messages = session.calls.flatMap((c) => [...c.before, ...c.after]);
  const texts = messages.map((m) => normalize(contextText([m])));
  for (const instruction of session.instructions) {
    const own = normalize(instruction.sentence);
    for (const key of instruction.keys) {
      const k = normalize(key);
      if (!own.includes(k)) throw new Error(`${instruction.id}: key "${key}" is not in its sentence`);
      const carriers = texts.filter((t) => t.includes(k));
      if (carriers.length !== 1)
        throw new Error(
          `${session.name}: key "${key}" of ${instruction.id} is in ${carriers.length} messages`,
        );
    }
  }
}
