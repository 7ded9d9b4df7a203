/**
 * An AI message from Anthropic through LangChain carries its `redacted_thinking` blocks back to
 * the provider, which counts their `data`. The conversion read such a block as its type name
 * (`[redacted_thinking]`, a few tokens): a history of them was undercounted by the whole of
 * their payloads. Real @langchain/core messages; the manager's count of the converted history.
 */
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { describe, expect, it } from 'vitest';
import { ENCRYPTED_CHARS_PER_TOKEN } from '../../core/counting/count-media.js';
import { CompactManager } from '../../core/manager/compact-manager.js';
import { langChainToChat } from './index.js';

describe('LangChain redacted_thinking blocks', () => {
  it('counts their data as encrypted reasoning', () => {
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 128_000 });
    const data = 'RVJBU0VE'.repeat(2_000);
    const history = (redacted: boolean) => [
      new HumanMessage('Probe the hosts.'),
      new AIMessage({
        content: [
          ...(redacted ? [{ type: 'redacted_thinking', data }] : []),
          { type: 'text', text: 'All hosts are up.' },
        ],
      }),
    ];
    const without = manager.estimate(langChainToChat(history(false)), { format: 'openai-chat' }).total;
    const withData = manager.estimate(langChainToChat(history(true)), { format: 'openai-chat' }).total;
    expect(withData - without).toBeGreaterThanOrEqual(Math.floor(data.length / ENCRYPTED_CHARS_PER_TOKEN));
  });
});
