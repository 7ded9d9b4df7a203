/**
 * Reading a body from what is new gives exactly `JSON.parse` of the whole body, whatever the
 * client changed between calls (appended messages, a mark moved, a rewind, fields before and
 * after the conversation, spacing, escapes, a second conversation key), and a spliced body is
 * the compacted request, byte for byte the client's where it kept a message.
 */
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { countLoopTurns, escapedHistory } from '../../../test/support/loop-turns.js';
import { firstDifference, topLevelArray } from '../../core/json/json-layout.js';
import { TimeSlice } from '../../core/time-slice.js';
import { PROXY_ROUTES } from '../proxy-routes.js';
import { ParsedBodies } from './parsed-bodies.js';
import { spliceBody, spliceBodyInSlices } from './splice-body.js';

const chat = PROXY_ROUTES.find((route) => route.path === '/v1/chat/completions')!;
const responses = PROXY_ROUTES.find((route) => route.path === '/v1/responses')!;
const SEED = Number(process.env.FC_SEED ?? 20_261_128);

/** JSON text as various clients write it: compact, Python's `", "`/`": "`, indented, or spaced before the comma. */
function write(value: unknown, style: number): string {
  if (style === 1) return JSON.stringify(value, null, 2);
  if (style === 2 || style === 3)
    return JSON.stringify(value).replace(/("(?:[^"\\]|\\.)*")|([,:])/g, (match, string, sep) =>
      string ? match : style === 2 ? `${sep} ` : ` ${sep}`,
    );
  return JSON.stringify(value);
}

const text = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.constantFrom('say "hi"\\', 'é ü 日本 😀', '{"a":[1,2]}', '\\\\"', ']},{', '\u2028\u0000'),
);
const message = fc.oneof(
  fc.record({ role: fc.constantFrom('user', 'assistant', 'system'), content: text }),
  fc.record({
    role: fc.constant('user'),
    content: fc.array(
      fc.record(
        { type: fc.constant('text'), text, cache_control: fc.constant({ type: 'ephemeral' }) },
        { requiredKeys: ['type', 'text'] },
      ),
      { minLength: 1, maxLength: 2 },
    ),
  }),
  fc.record({ role: fc.constant('tool'), tool_call_id: fc.string({ maxLength: 8 }), content: text }),
);

/** One call of a client: its whole body, derived from the conversation so far. */
const step = fc.record({
  append: fc.array(message, { maxLength: 3 }),
  rewind: fc.nat({ max: 3 }),
  rewindChance: fc.nat({ max: 9 }),
  editChance: fc.nat({ max: 9 }),
  edit: text,
  before: fc.dictionary(fc.constantFrom('model', 'stream', 'n'), fc.jsonValue({ maxDepth: 2 }), {
    maxKeys: 2,
  }),
  after: fc.dictionary(fc.constantFrom('tools', 'temperature', 'messages'), fc.jsonValue({ maxDepth: 2 }), {
    maxKeys: 2,
  }),
  // Most calls keep the fields and the writing of the call before.
  changeChance: fc.nat({ max: 4 }),
  style: fc.nat({ max: 3 }),
});

describe('ParsedBodies', () => {
  it('gives what JSON.parse of the whole body gives, call after call (property)', () => {
    let reusedCalls = 0;
    fc.assert(
      fc.property(
        fc.array(message, { minLength: 1, maxLength: 6 }),
        fc.array(step, { minLength: 1, maxLength: 8 }),
        (opening, steps) => {
          const bodies = new ParsedBodies();
          const history = [...opening];
          let fields = steps[0]!;
          for (const s of steps) {
            if (s.rewindChance === 0) history.splice(Math.max(1, history.length - s.rewind));
            if (s.editChance === 0 && history.length > 1)
              history[history.length >> 1] = { role: 'user', content: s.edit };
            history.push(...s.append);
            if (s.changeChance === 0) fields = s;
            const { before, after, style } = fields;
            // Keys before and after the conversation; `messages` in `after` is a second conversation key.
            const rest = Object.entries(after).map(
              ([key, value]) => `,${JSON.stringify(key)}:${write(value, style)}`,
            );
            const head = `${write(before, style).slice(0, -1)}${Object.keys(before).length ? ',' : ''}`;
            const raw = `${head}"messages":${write(history, style)}${rest.join('')}}`;
            const bytes = Buffer.from(raw);
            const expected = JSON.parse(raw) as unknown;
            const parsed = bodies.parse(chat, bytes);
            expect(parsed?.body).toEqual(expected);
            expect(Object.keys(parsed!.body)).toEqual(Object.keys(expected as object));
            // Where each message ends is where a whole read finds it (a splice copies by it).
            const whole = topLevelArray(bytes, 'messages');
            if (parsed!.layout !== undefined && whole !== undefined)
              expect(parsed!.layout.ends).toEqual(whole.ends);
            if (parsed!.reused > 0) reusedCalls++;
            bodies.remember('s', parsed!, chat);
          }
        },
      ),
      { seed: SEED, numRuns: Number(process.env.FC_RUNS ?? 300) },
    );
    // The property is about the reading from what is new: most calls took that path.
    expect(reusedCalls).toBeGreaterThan(300);
  });

  it('takes the messages a body repeats (the same objects) and parses only the new ones', () => {
    const bodies = new ParsedBodies();
    const history: unknown[] = [
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'hi' },
    ];
    const first = bodies.parse(chat, Buffer.from(JSON.stringify({ model: 'm', messages: history })))!;
    expect(first.reused).toBe(0);
    bodies.remember('s', first, chat);
    history.push({ role: 'assistant', content: 'hello' });
    const second = bodies.parse(chat, Buffer.from(JSON.stringify({ model: 'm', messages: history })))!;
    expect(second.reused).toBe(2);
    const [a, b] = second.body.messages as unknown[];
    expect(a).toBe((first.body.messages as unknown[])[0]);
    expect(b).toBe((first.body.messages as unknown[])[1]);
    // Another route never takes this route's bodies.
    expect(
      bodies.parse(responses, Buffer.from(JSON.stringify({ model: 'm', messages: history })))?.reused,
    ).toBe(0);
  });

  it('a field before the conversation changed: only that field and the new messages are parsed', () => {
    const bodies = new ParsedBodies();
    const tools = [{ type: 'function', function: { name: 'probe', parameters: {} } }];
    const history: unknown[] = [
      { role: 'system', content: 'é ü 日本 😀 "quoted" \\ \n \u2028' },
      { role: 'user', content: 'hi' },
    ];
    const write = (fields: object) => Buffer.from(JSON.stringify({ ...fields, messages: history, tools }));
    const first = bodies.parse(chat, write({ model: 'a', stream: false }))!;
    bodies.remember('s', first, chat);
    history.push({ role: 'assistant', content: 'hello' });
    for (const fields of [{ model: 'a', stream: true }, { model: 'a-much-longer-name', n: 2 }, {}]) {
      const bytes = write(fields);
      const parsed = bodies.parse(chat, bytes)!;
      expect(parsed.body).toEqual(JSON.parse(bytes.toString()));
      expect(Object.keys(parsed.body)).toEqual(Object.keys(JSON.parse(bytes.toString())));
      expect(parsed.reused).toBe(2);
      // The unchanged field after the conversation is the kept body's own value.
      expect(parsed.body.tools).toBe(first.body.tools);
    }
  });

  it('a number cut where a kept body ended, or a second conversation key, is read as JSON.parse reads it', () => {
    const bodies = new ParsedBodies();
    const first = bodies.parse(chat, Buffer.from('{"messages":[{"role":"user","content":"a"},12]}'))!;
    bodies.remember('s', first, chat);
    for (const raw of [
      '{"messages":[{"role":"user","content":"a"},12.5]}',
      '{"messages":[{"role":"user","content":"a"},12e1,{"x":1}]}',
      '{"messages":[{"role":"user","content":"a"},12],"messages":[{"role":"user","content":"b"}]}',
      '{"messages":[{"role":"user","content":"a"} ,12 ] , "tools" : [] }',
      // Keys an object orders or treats apart: an index, `__proto__`, one given twice, escaped.
      '{"9":1,"messages":[{"role":"user","content":"a"},12,1],"0":[]}',
      '{"messages":[{"role":"user","content":"a"},12,2],"__proto__":{"x":1}}',
      '{"n":1,"n":2,"messages":[{"role":"user","content":"a"},12,3]}',
      '{"\\u006e":1,"messages":[{"role":"user","content":"a"},12,4]}',
    ]) {
      const parsed = bodies.parse(chat, Buffer.from(raw));
      expect(parsed?.body).toEqual(JSON.parse(raw));
      expect(Object.keys(parsed!.body)).toEqual(Object.keys(JSON.parse(raw)));
      expect(Object.getPrototypeOf(parsed!.body)).toBe(Object.prototype);
    }
    // Not JSON after a repeated start: not an object, as a whole parse says.
    expect(bodies.parse(chat, Buffer.from('{"messages":[{"role":"user","content":"a"},12,'))).toBeUndefined();
    expect(
      bodies.parse(chat, Buffer.from('{"messages":[{"role":"user","content":"a"},12]}x')),
    ).toBeUndefined();
  });

  it('keeps at most its byte budget, dropping the oldest conversation first', () => {
    const body = (id: string) =>
      Buffer.from(JSON.stringify({ messages: [{ role: 'user', content: id.repeat(100) }] }));
    const bodies = new ParsedBodies(450);
    for (const id of ['a', 'b', 'c', 'd']) bodies.remember(id, bodies.parse(chat, body(id))!, chat);
    const grown = (id: string) =>
      Buffer.from(
        JSON.stringify({
          messages: [
            { role: 'user', content: id.repeat(100) },
            { role: 'assistant', content: 'x' },
          ],
        }),
      );
    expect(bodies.parse(chat, grown('a'))!.reused).toBe(0);
    expect(bodies.parse(chat, grown('d'))!.reused).toBe(1);
  });
});

describe('json-layout', () => {
  it('finds each element of the top-level array, and refuses a key given twice', () => {
    const raw = '{"n":{"messages":[1]},"messages" : [ {"a":"],\\""} , [2,3], "x" ],"m":1}';
    const layout = topLevelArray(Buffer.from(raw), 'messages')!;
    const elements = layout.ends.map((end, i) =>
      raw.slice(i === 0 ? layout.start + 1 : layout.ends[i - 1]! + 1, end).trim(),
    );
    expect(elements).toEqual(['{"a":"],\\""}', '[2,3]', '"x"']);
    expect(layout.fields.map((field) => [field.name, raw.slice(field.from, field.to)])).toEqual([
      ['n', '{"messages":[1]}'],
      ['messages', raw.slice(layout.start, layout.end + 1)],
      ['m', '1'],
    ]);
    expect(topLevelArray(Buffer.from('{"messages":[1],"messages":[2]}'), 'messages')).toBeUndefined();
    expect(topLevelArray(Buffer.from('{"\\u006dessages":[1]}'), 'messages')?.ends).toEqual([19]);
  });

  it('firstDifference finds the first differing byte at any offset', () => {
    const a = Buffer.alloc(70_000, 7);
    for (const at of [0, 1, 4095, 4096, 12_287, 50_000, 69_999]) {
      const b = Buffer.from(a);
      b[at] = 8;
      expect(firstDifference(a, b)).toBe(at);
    }
    expect(firstDifference(a, a.subarray(0, 100))).toBe(100);
    expect(firstDifference(a, Buffer.from(a), 500)).toBe(500);
  });
});

describe('ParsedBodies.parseInSlices', () => {
  it('parses a large first body across turns of the loop, as parse does at once', async () => {
    const history = escapedHistory(40_000, 16);
    const bytes = Buffer.from(JSON.stringify({ model: 'm', messages: history, stream: false }));
    const { result: sliced, turns } = await countLoopTurns(() =>
      new ParsedBodies().parseInSlices(chat, bytes),
    );
    const whole = new ParsedBodies().parse(chat, bytes);
    // node's deep equality: vitest's diff of two 16 MB bodies would not fit in memory.
    expect(isDeepStrictEqual(sliced!.body, whole!.body)).toBe(true);
    expect(isDeepStrictEqual(sliced!.layout, whole!.layout)).toBe(true);
    expect(sliced!.layout).toBeDefined();
    expect(sliced!.bytes).toBe(bytes);
    // The loop turned while the body was parsed (the old proxy parsed it in one piece).
    expect(turns).toBeGreaterThan(0);
    // Not JSON: refused as parse refuses it.
    const broken = Buffer.concat([bytes.subarray(0, bytes.length - 1), Buffer.from(',}')]);
    expect(await new ParsedBodies().parseInSlices(chat, broken)).toBeUndefined();
  });
});

describe('spliceBody', () => {
  it("writes the compacted request from the client's bytes where a message was kept", () => {
    const raw =
      '{"model":"m", "messages":[ {"role":"system","content":"s"},{"role":"user","content":"é"} , {"role":"user","content":"2"}], "tools":[{"x":1.0}]}';
    const parsed = new ParsedBodies().parse(chat, Buffer.from(raw))!;
    const [system, , last] = parsed.body.messages as unknown[];
    const summary = { role: 'user', content: '<summary>' };
    const next = chat.withMessages(parsed.body, [system, summary, last]);
    const out = spliceBody(parsed, 'messages', next)!.toString('utf8');
    expect(JSON.parse(out)).toEqual(next);
    // The client's own writing of what was kept (spacing, 1.0) is what goes upstream.
    expect(out).toContain(' {"role":"system","content":"s"}');
    expect(out).toContain('"tools":[{"x":1.0}]');
    // Another field changed too: not spliced.
    expect(spliceBody(parsed, 'messages', { ...next, tools: [] })).toBeUndefined();
  });

  it('splices any pick of kept and new messages into the request the manager sent', () => {
    fc.assert(
      fc.property(
        fc.array(message, { minLength: 1, maxLength: 8 }),
        fc.array(fc.oneof(fc.nat({ max: 9 }), message), { maxLength: 10 }),
        fc.nat({ max: 2 }),
        (messages, picks, style) => {
          const raw = write({ model: 'm', messages, tools: [{ x: 1 }] }, style);
          const parsed = new ParsedBodies().parse(chat, Buffer.from(raw))!;
          const original = parsed.body.messages as unknown[];
          const sent = picks.map((pick) =>
            typeof pick === 'number' ? original[pick % original.length] : pick,
          );
          const out = spliceBody(parsed, 'messages', chat.withMessages(parsed.body, sent))!;
          expect(JSON.parse(out.toString('utf8'))).toEqual({ ...parsed.body, messages: sent });
          // Every message kept: the client's bytes as sent.
          const same = spliceBody(parsed, 'messages', chat.withMessages(parsed.body, original))!;
          expect(same.equals(Buffer.from(raw))).toBe(true);
        },
      ),
      { seed: SEED, numRuns: 300 },
    );
  });

  it('splices a large body in slices, giving the loop turns, to the same bytes (issue 47)', async () => {
    const messages = Array.from({ length: 6_000 }, (_, i) => ({
      role: i % 2 ? 'assistant' : 'user',
      content: `message ${i} é 😀 ${'x'.repeat(400)}`,
    }));
    const raw = write({ model: 'm', messages, tools: [{ x: 1.0 }] }, 2);
    const parsed = new ParsedBodies().parse(chat, Buffer.from(raw))!;
    const original = parsed.body.messages as unknown[];
    const summary = { role: 'user', content: '<summary>' };
    const picks = [
      original,
      [summary, ...original.slice(3_000)],
      [
        original[0],
        summary,
        ...original.slice(1_000, 4_000),
        { role: 'user', content: 'new' },
        ...original.slice(5_000),
      ],
    ];
    for (const sent of picks) {
      const next = chat.withMessages(parsed.body, sent);
      const slice = new TimeSlice({ sliceMs: 0 });
      const { result, turns: ticks } = await countLoopTurns(() =>
        spliceBodyInSlices(parsed, 'messages', next, slice),
      );
      const out = result!;
      // The same bytes as at once, and a turn of the loop observed while it ran.
      expect(out.equals(spliceBody(parsed, 'messages', next)!)).toBe(true);
      expect(JSON.parse(out.toString('utf8'))).toEqual({ ...parsed.body, messages: sent });
      expect(ticks).toBeGreaterThan(0);
      expect(slice.pauses).toBeGreaterThan(0);
    }
    // Every message kept (a body over the copy step, 1 MB): the client's bytes as sent.
    expect(raw.length).toBeGreaterThan(2 * 2 ** 20);
    const same = await spliceBodyInSlices(parsed, 'messages', chat.withMessages(parsed.body, original));
    expect(same!.equals(Buffer.from(raw))).toBe(true);
  });
});
