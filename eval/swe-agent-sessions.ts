/**
 * The real SWE-agent transcripts vendored in test/fixtures/swe-agent as OpenAI Chat sessions, with
 * key facts defined from the transcript itself (not from what any summarizer extracts).
 *
 * Key facts of a transcript: file paths, error/exception names, URLs and backticked code
 * identifiers that the task statement or the agent's own messages (thoughts, commands,
 * tool-call arguments) mention in the first half of the conversation. Environment output
 * (file listings, test logs) is not a source: a name the agent never refers to is not key.
 * Facts that also appear in the system prompt are left out (the system prompt is never
 * compacted, so they would be retained trivially), and a candidate contained in a longer
 * one (a path inside its URL) counts once, as the longer.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FidelitySession, KeyFact } from './planted-session.js';

/** Where the transcripts are, from the repository root. */
export const DEFAULT_SWE_AGENT_DIR = join(import.meta.dirname, '..', 'test', 'fixtures', 'swe-agent');

interface TrajMessage {
  role: string;
  content: unknown;
  is_demo?: boolean;
  tool_calls?: { id: string; type: string; function: { name: string; arguments: string } }[];
  tool_call_ids?: string[];
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content.map((part) => (typeof part?.text === 'string' ? part.text : '')).join('\n');
  return '';
}

const FILE_PATH =
  /(?<![\w/.-])(?:\.{0,2}\/)?(?:[\w.-]+\/)*[\w-]+\.(?:py|ts|js|md|rst|cfg|toml|txt|pl|cgi|html|json|ya?ml|ini|sh|c|h)\b/g;
const ERROR_NAME = /\b[A-Z]\w*(?:Error|Exception)\b/g;
const URL = /\bhttps?:\/\/[^\s)\]>"'`]+/g;
const BACKTICKED = /`([A-Za-z_][\w.]{2,60})`/g;

function candidates(text: string): string[] {
  const out: string[] = [];
  for (const pattern of [FILE_PATH, ERROR_NAME, URL]) for (const m of text.matchAll(pattern)) out.push(m[0]);
  for (const m of text.matchAll(BACKTICKED)) out.push(m[1]!);
  return out.map((f) => f.replace(/[.,;:]+$/, '')).filter((f) => f.length >= 4);
}

/** Converts one `.traj` history into OpenAI Chat messages and its key facts. */
export function sweAgentSession(name: string, history: readonly TrajMessage[]): FidelitySession {
  const messages: Record<string, unknown>[] = [];
  const sources: { index: number; text: string }[] = [];
  let system = '';
  let taskSeen = false;
  for (const entry of history) {
    const text = textOf(entry.content);
    const index = messages.length;
    if (entry.role === 'system') {
      system += `${text}\n`;
      messages.push({ role: 'system', content: text });
    } else if (entry.role === 'assistant') {
      const message: Record<string, unknown> = { role: 'assistant', content: text };
      if (entry.tool_calls?.length) message.tool_calls = entry.tool_calls;
      messages.push(message);
      sources.push({
        index,
        text: [text, ...(entry.tool_calls ?? []).map((c) => c.function.arguments)].join('\n'),
      });
    } else if (entry.role === 'tool') {
      // SWE-agent writes `tool_call_ids: [id]`; OpenAI wants one `tool_call_id` per message.
      for (const id of entry.tool_call_ids ?? [])
        messages.push({ role: 'tool', tool_call_id: id, content: text });
    } else {
      messages.push({ role: 'user', content: text });
      if (!entry.is_demo && !taskSeen) {
        taskSeen = true;
        sources.push({ index, text });
      }
    }
  }
  const half = Math.floor(messages.length / 2);
  const facts: KeyFact[] = [];
  const seen = new Set<string>();
  for (const source of sources) {
    if (source.index >= half) continue;
    for (const fact of candidates(source.text)) {
      const key = fact.toLowerCase();
      if (seen.has(key) || system.toLowerCase().includes(key)) continue;
      seen.add(key);
      facts.push({
        id: `fact-${facts.length + 1}`,
        kind: 'file',
        probes: [fact],
        messageIndex: source.index,
      });
    }
  }
  // A candidate inside a longer one (`/cgi-bin/hello.pl` in its URL) is the same fact: keep the longer.
  const all = facts.map((f) => f.probes[0]!.toLowerCase());
  const distinct = facts.filter(
    (_f, k) => !all.some((o, j) => j !== k && o.length > all[k]!.length && o.includes(all[k]!)),
  );
  facts.length = 0;
  facts.push(...distinct.map((f, k) => ({ ...f, id: `fact-${k + 1}` })));
  for (const fact of facts) {
    const probe = fact.probes[0]!;
    if (/^[A-Z]\w*(?:Error|Exception)$/.test(probe)) fact.kind = 'error';
    else if (/^https?:/.test(probe)) fact.kind = 'url';
    else if (!FILE_PATH.test(probe)) fact.kind = 'identifier';
    FILE_PATH.lastIndex = 0;
  }
  return { name, messages, facts };
}

/** Loads every `.traj` file in `dir` (sorted by name); none when the directory is missing. */
export function loadSweAgentSessions(dir: string = DEFAULT_SWE_AGENT_DIR): FidelitySession[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((file) => file.endsWith('.traj'))
    .sort()
    .map((file) => {
      const data = JSON.parse(readFileSync(join(dir, file), 'utf8')) as { history: TrajMessage[] };
      return sweAgentSession(file.replace(/\.traj$/, ''), data.history);
    });
}
