/**
 * `node --import tsx bench/proxy-tiny-messages.ts <tree> <count> [proxy|proxy-warm|library|library-warm]`
 * (PROFILE=1 for the longest gap's functions): one proxy request of `count` tiny OpenAI Chat
 * messages (`{"role":"user", "content":"hi N"}`) into gpt-4o's 128k window, to a bare upstream
 * in this process; prints the request's total time, the longest block (bench/block-monitor.ts)
 * and the proxy's log fields. `proxy-warm`: the same conversation's second request (two more
 * messages), after the first one and its background work. `library`: the same history through
 * `manager.compact` (the library's preflight, cold); `library-warm`: its next call with two more
 * messages.
 * `<tree>`: the checkout whose src and bench are run (an old tree from `git archive` for A/B).
 * Issue 47 point 2: many small messages, where bench/path-blocks.ts's proxy row has few large.
 */
import { postJson, startBareUpstream } from './support/bare-upstream.js';

const [tree = '.', countArg = '100000', mode = 'proxy'] = process.argv.slice(2);
const count = Number(countArg);
const root = new URL(`${tree.replace(/\/$/, '')}/`, `file://${process.cwd()}/`).href;
const { watchBlocks: plain } = await import(`${root}bench/block-monitor.ts`);
const { watchAttributed } = await import(`${root}bench/block-profile.ts`);
const watch = process.env.PROFILE ? watchAttributed : plain;
const { startProxy } = await import(`${root}src/proxy/index.ts`);
const { CompactManager } = await import(`${root}src/index.ts`);

const upstream = await startBareUpstream();
const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 128_000 });
await manager.ready();
const logs: Record<string, unknown>[] = [];
const running = await startProxy({
  upstream: upstream.url,
  manager,
  port: 0,
  log: (entry: Record<string, unknown>) => logs.push(entry),
});
const messages: unknown[] = Array.from({ length: count }, (_, i) => ({ role: 'user', content: `hi ${i}` }));
const bodyOf = () => Buffer.from(JSON.stringify({ model: 'gpt-4o', messages }));
const library = mode.startsWith('library');
const call = async (body: Buffer) => {
  if (library) await manager.compact('tiny', messages);
  else await postJson(`${running.url}/v1/chat/completions`, body);
  await manager.flush();
};
if (mode.endsWith('-warm')) {
  await call(bodyOf());
  logs.length = 0;
  messages.push({ role: 'assistant', content: 'ok' }, { role: 'user', content: 'and now?' });
}
const body = library ? Buffer.alloc(0) : bodyOf();
let totalMs = 0;
const send = async () => {
  const start = performance.now();
  await call(body);
  totalMs = performance.now() - start;
};
const row = await watch(`${count}`, send);
const log = logs[0] ?? {};
const ms = (value: unknown) => Math.round(Number(value));
console.log(
  JSON.stringify({
    count,
    mode,
    totalMs: ms(totalMs),
    blockMs: Number(row.threadMs.toFixed(1)),
    gcMs: Number(row.gcMs.toFixed(1)),
    turns: row.turns,
    applied: log.applied,
    before: log.tokensBefore,
    after: log.tokensAfter,
    sessionMs: ms(log.sessionMs),
    compactMs: ms(log.compactMs),
    serializeMs: ms(log.serializeMs),
  }),
);
if (row.attribution) console.log(JSON.stringify(row.attribution, null, 1));
await running.close();
upstream.close();
process.exit(0);
