/**
 * The rolling run the real-chat scripts share (`real-chat-*.ts`): one conversation fed to a
 * CompactManager message by message in a window of 1/`ratio` of its tokens (gpt-4o counts, no
 * redaction, the default policy unless one is given), `compact()` after every message.
 */
import { CompactManager } from '../src/core/manager/compact-manager.js';
import type { CompactionResult } from '../src/core/manager/manager-options.js';
import type { CompactPolicy } from '../src/core/policy.js';
import type { Summarizer } from '../src/core/summary/summarizer.js';

/** What {@link rollRealChat} needs of a chat (a `RealChat` of `real-chat-facts.ts` fits). */
export interface RollableChat {
  name: string;
  messages: readonly Record<string, unknown>[];
}

/** Options of {@link rollRealChat}; every hook is optional. */
export interface RollOptions {
  policy?: Partial<CompactPolicy>;
  summarizer?: Summarizer;
  /** Compact once, after the last message, instead of after every message. */
  oneShot?: boolean;
  /** Called with the manager before the first message (to listen to its events). */
  onManager?: (manager: CompactManager) => void;
  /** Called after each `compact()` with its result and the number of messages fed so far. */
  onCompact?: (result: CompactionResult, fed: number) => void;
  /** Called with each summary text that differs from the last one seen (empty ones skipped). */
  onSummary?: (text: string, fed: number) => void;
}

/** The chat's size, the window it ran in, and the last `compact()` result. */
export interface RolledChat {
  rawTokens: number;
  window: number;
  last: CompactionResult;
}

/** Runs one conversation rolling at 1/`ratio` (see the file comment). */
export async function rollRealChat(
  chat: RollableChat,
  ratio: number,
  options: RollOptions = {},
): Promise<RolledChat> {
  const probe = new CompactManager({ model: 'gpt-4o', maxContextTokens: 10_000_000 });
  const rawTokens = probe.estimate(chat.messages).total;
  await probe.shutdown();
  const window = Math.floor(rawTokens / ratio);
  const manager = new CompactManager({
    model: 'gpt-4o',
    maxContextTokens: window,
    redaction: false,
    ...(options.policy ? { policy: options.policy } : {}),
    ...(options.summarizer ? { summarizer: options.summarizer } : {}),
  });
  options.onManager?.(manager);
  const history: Record<string, unknown>[] = [];
  let last: CompactionResult | undefined;
  let previous = '';
  for (const [index, message] of chat.messages.entries()) {
    history.push(message);
    if (options.oneShot && index < chat.messages.length - 1) continue;
    last = await manager.compact(chat.name, history);
    options.onCompact?.(last, history.length);
    const text = last.summary?.text ?? '';
    if (text && text !== previous) {
      options.onSummary?.(text, history.length);
      previous = text;
    }
  }
  await manager.shutdown();
  if (!last) throw new Error(`${chat.name} has no messages`);
  return { rawTokens, window, last };
}
