/**
 * Agent runs whose remaining actions need ids from early turns (seeded, OpenAI Chat format):
 * a retail support agent looks up a customer, their orders and product variants, chats, and
 * is about to exchange items, cancel an order and pay the difference. The facts are the ids
 * those remaining actions take (order ids, item ids, new item ids, payment method id). Tool
 * call ids repeat every turn (`call_0`), parallel calls are answered out of order, a
 * scratchpad `think` call sits among them, and product listings dwarf everything else.
 */
import { seededRandom } from '../src/testing/synthetic-session.js';
import type { FidelitySession, KeyFact } from './planted-session.js';
import { int, pick, type Random } from './seeded-picks.js';

/** Options of {@link agentIdSession}. */
export interface AgentIdSessionOptions {
  /** @default 1 */
  seed?: number;
  /** Extra products the customer browses (each a large listing). @default 8 */
  browsing?: number;
}

const digits = (rand: Random, n: number) =>
  Array.from({ length: n }, (_, i) => (i === 0 ? int(rand, 1, 9) : int(rand, 0, 9))).join('');

const PRODUCTS = [
  'T-Shirt',
  'Water Bottle',
  'Desk Lamp',
  'Hiking Boots',
  'Backpack',
  'Coffee Maker',
  'Yoga Mat',
  'Bluetooth Speaker',
  'Running Shoes',
  'Wall Clock',
  'Electric Kettle',
  'Office Chair',
];
const COLORS = ['black', 'white', 'blue', 'red', 'green', 'grey'];
const SIZES = ['S', 'M', 'L', 'XL'];
const MATERIALS = ['cotton', 'polyester', 'leather', 'steel', 'bamboo'];
const FIRST = ['Maya', 'Omar', 'Lena', 'Kofi', 'Yuki', 'Diego'];
const LAST = ['Lopez', 'Haddad', 'Novak', 'Mensah', 'Tanaka', 'Ruiz'];

interface Variant {
  item_id: string;
  options: Record<string, string>;
  available: boolean;
  price: number;
}

function variants(rand: Random, count: number): Record<string, Variant> {
  const out: Record<string, Variant> = {};
  for (let i = 0; i < count; i++) {
    const id = digits(rand, 10);
    out[id] = {
      item_id: id,
      options: { color: pick(rand, COLORS), size: pick(rand, SIZES), material: pick(rand, MATERIALS) },
      available: rand() < 0.7,
      price: Math.round(rand() * 20000) / 100 + 10,
    };
  }
  return out;
}

/** A run being written: messages, tool-call numbering per turn, facts. */
class Run {
  readonly messages: Record<string, unknown>[] = [];
  readonly facts: KeyFact[] = [];
  readonly #firstSeen = new Map<string, number>();

  say(role: 'user' | 'assistant', content: string): void {
    this.messages.push({ role, content });
    this.#note(content);
  }

  /** One assistant turn of parallel calls (`call_0`, `call_1`... every turn), answered in `order`. */
  calls(
    content: string | null,
    calls: { name: string; args: unknown; output: unknown }[],
    order?: number[],
  ): void {
    this.messages.push({
      role: 'assistant',
      content,
      tool_calls: calls.map((c, k) => ({
        id: `call_${k}`,
        type: 'function',
        function: { name: c.name, arguments: JSON.stringify(c.args) },
      })),
    });
    this.#note(calls.map((c) => JSON.stringify(c.args)).join('\n'));
    for (const k of order ?? calls.map((_, i) => i)) {
      const output =
        typeof calls[k]!.output === 'string'
          ? (calls[k]!.output as string)
          : JSON.stringify(calls[k]!.output);
      this.messages.push({ role: 'tool', tool_call_id: `call_${k}`, content: output });
      this.#note(output);
    }
  }

  /** Records `id` as needed by a remaining action, at the message it first appeared in. */
  need(id: string): void {
    const index = this.#firstSeen.get(id);
    if (index === undefined) throw new Error(`id ${id} never appeared`);
    if (!this.facts.some((f) => f.probes[0] === id))
      this.facts.push({
        id: `id-${this.facts.length + 1}`,
        kind: 'identifier',
        probes: [id],
        messageIndex: index,
      });
  }

  #note(text: string): void {
    const index = this.messages.length - 1;
    for (const match of text.matchAll(/#?[\w]+/g))
      if (!this.#firstSeen.has(match[0])) this.#firstSeen.set(match[0], index);
  }
}

/** The customer: ids, payment methods and three orders of two items each. */
function makeCustomer(rand: Random) {
  const first = pick(rand, FIRST);
  const last = pick(rand, LAST);
  const userId = `${first.toLowerCase()}_${last.toLowerCase()}_${digits(rand, 4)}`;
  const cards = {
    credit: `credit_card_${digits(rand, 7)}`,
    gift: `gift_card_${digits(rand, 7)}`,
    paypal: `paypal_${digits(rand, 7)}`,
  };
  const products = [...PRODUCTS].sort(() => rand() - 0.5);
  const orders = [0, 1, 2].map((k) => ({
    id: `#W${digits(rand, 7)}`,
    status: k === 2 ? 'pending' : 'delivered',
    items: products.slice(k * 2, k * 2 + 2).map((name) => ({
      name,
      product_id: digits(rand, 10),
      item_id: digits(rand, 10),
      price: int(rand, 15, 300) + 0.99,
      options: { color: pick(rand, COLORS), size: pick(rand, SIZES) },
    })),
  }));
  return { first, last, userId, cards, orders };
}

type Customer = ReturnType<typeof makeCustomer>;

/** Authentication, the account and its orders (looked up in parallel, answered out of order). */
function lookUp(run: Run, rand: Random, customer: Customer): void {
  const { first, last, userId, cards, orders } = customer;
  run.say(
    'user',
    "Hi there! I hope you're having a good day. I'd like to exchange a couple of things I bought and maybe cancel another order.",
  );
  run.say(
    'assistant',
    'Happy to help! Could you please give me your email, or your full name and zip code, so I can find your account?',
  );
  run.say('user', `Sure, it's ${first} ${last}, zip ${digits(rand, 5)}.`);
  run.calls(null, [
    {
      name: 'find_user_id_by_name_zip',
      args: { first_name: first, last_name: last, zip: digits(rand, 5) },
      output: userId,
    },
  ]);
  run.calls(null, [
    {
      name: 'get_user_details',
      args: { user_id: userId },
      output: {
        user_id: userId,
        name: { first_name: first, last_name: last },
        address: {
          address1: `${int(rand, 10, 999)} Elm Street`,
          city: 'Springfield',
          zip: digits(rand, 5),
          country: 'USA',
        },
        email: `${first.toLowerCase()}.${last.toLowerCase()}@example.com`,
        payment_methods: {
          [cards.credit]: {
            source: 'credit_card',
            brand: 'visa',
            last_four: digits(rand, 4),
            id: cards.credit,
          },
          [cards.gift]: { source: 'gift_card', balance: int(rand, 20, 200), id: cards.gift },
          [cards.paypal]: { source: 'paypal', id: cards.paypal },
        },
        orders: orders.map((o) => o.id),
      },
    },
  ]);
  // Parallel order lookups, answered out of order.
  run.calls(
    'Let me pull up your orders.',
    orders.map((o) => ({
      name: 'get_order_details',
      args: { order_id: o.id },
      output: {
        order_id: o.id,
        user_id: userId,
        address: { address1: 'redacted' },
        items: o.items,
        status: o.status,
        payment_history: [
          {
            transaction_type: 'payment',
            amount: o.items.reduce((n, i) => n + i.price, 0),
            payment_method_id: cards.credit,
          },
        ],
      },
    })),
    [2, 0, 1],
  );
  const listing = orders
    .map((o) => `order ${o.id} (${o.status}): ${o.items.map((i) => i.name).join(', ')}`)
    .join('; ');
  run.say(
    'assistant',
    `Thanks ${first}! I found three orders: ${listing}. Which items would you like to exchange?`,
  );
}

/** The items to exchange and the variants on offer; returns the items and the variants chosen. */
function pickExchange(run: Run, rand: Random, customer: Customer) {
  const { orders } = customer;
  const swap = [orders[0]!.items[0]!, orders[1]!.items[1]!];
  run.say(
    'user',
    `The ${swap[0]!.name} from the first order and the ${swap[1]!.name} from the second one. Honestly I love the style, the size is just off. And I'd like to cancel the third order, I don't need it anymore.`,
  );
  const targets = swap.map((item) => ({ item, variants: variants(rand, int(rand, 25, 40)) }));
  run.calls(
    null,
    targets.map((t) => ({
      name: 'get_product_details',
      args: { product_id: t.item.product_id },
      output: { name: t.item.name, product_id: t.item.product_id, variants: t.variants },
    })),
    [1, 0],
  );
  const chosen = targets.map((t) => Object.values(t.variants).find((v) => v.available)!);
  run.say(
    'assistant',
    `There are several options available. For the ${swap[0]!.name}, item ${chosen[0]!.item_id} is ${chosen[0]!.options.color}, size ${chosen[0]!.options.size}, at $${chosen[0]!.price}. For the ${swap[1]!.name}, there are many variants in stock too. Which would you prefer?`,
  );
  return { swap, chosen };
}

/** Browsing other products: large listings and small talk between the early ids and their use. */
function browse(run: Run, rand: Random, count: number): void {
  for (let b = 0; b < count; b++) {
    const name = pick(rand, PRODUCTS);
    run.say(
      'user',
      pick(rand, [
        `Oh, while I'm here, what do you have in the ${name} line?`,
        `Out of curiosity, is the ${name} any good? My sister keeps talking about it.`,
        `Could you also check the ${name} for me? Just browsing.`,
      ]),
    );
    run.calls(null, [
      {
        name: 'get_product_details',
        args: { product_id: digits(rand, 10) },
        output: { name, product_id: digits(rand, 10), variants: variants(rand, int(rand, 20, 35)) },
      },
    ]);
    run.say(
      'assistant',
      pick(rand, [
        `The ${name} comes in several colors and sizes; most variants are in stock right now.`,
        `We have quite a few ${name} options, prices range widely depending on the material.`,
        `The ${name} is popular; let me know if you want details on a specific variant.`,
      ]),
    );
    run.say(
      'user',
      pick(rand, [
        'Nice, thanks! Maybe another time.',
        'Cool, good to know.',
        'Haha okay, I will think about it.',
        'Great, thank you so much!',
      ]),
    );
  }
}

/** The user settles the last details; returns the payment method chosen. */
function settle(run: Run, rand: Random, exchange: ReturnType<typeof pickExchange>) {
  const { swap, chosen } = exchange;
  run.say(
    'user',
    `Okay, back to the exchange. For the ${swap[1]!.name}, the ${chosen[1]!.options.color} one in size ${chosen[1]!.options.size} is perfect, that's item ${chosen[1]!.item_id}.`,
  );
  run.calls(null, [
    {
      name: 'think',
      args: {
        thought:
          'Exchange both items in one call per order; price difference goes to the payment method the user picks; cancel the pending order with reason no longer needed.',
      },
      output: '',
    },
  ]);
  run.say(
    'assistant',
    `Got it. Which payment method should cover any price difference: the Visa card, the gift card, or PayPal?`,
  );
  const method = pick(rand, ['gift', 'credit', 'paypal'] as const);
  run.say(
    'user',
    `Let's use the ${method === 'gift' ? 'gift card' : method === 'credit' ? 'Visa card' : 'PayPal account'}. And yes, please cancel the pending order.`,
  );
  run.say(
    'assistant',
    'To confirm: I will exchange both items as discussed, charge or refund the difference to that payment method, and cancel the pending order because you no longer need it. Shall I go ahead?',
  );
  run.say('user', 'Yes, please go ahead with all of it. Thank you!');
  return method;
}

/** Builds one run; its facts are the ids of the actions that come after it. */
export function agentIdSession(options: AgentIdSessionOptions = {}): FidelitySession {
  const seed = options.seed ?? 1;
  const rand = seededRandom(seed * 15_485_863 + 11);
  const run = new Run();
  run.messages.push({
    role: 'system',
    content:
      'You are a retail support agent. Authenticate the user, look up orders and products with the tools, and confirm every change before making it.',
  });
  const customer = makeCustomer(rand);
  lookUp(run, rand, customer);
  const exchange = pickExchange(run, rand, customer);
  browse(run, rand, options.browsing ?? 8);
  const method = settle(run, rand, exchange);
  const { orders, cards } = customer;
  const { swap, chosen } = exchange;
  // The remaining actions (not in the history) take these ids.
  for (const id of [
    orders[0]!.id,
    swap[0]!.item_id,
    chosen[0]!.item_id,
    orders[1]!.id,
    swap[1]!.item_id,
    chosen[1]!.item_id,
    cards[method],
    orders[2]!.id,
  ])
    run.need(id);
  return { name: `agent-ids-${seed}`, messages: run.messages, facts: run.facts };
}
