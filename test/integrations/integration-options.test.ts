/**
 * Review 88: the integration factories (and `CompactionSession`) took any options. A misspelt key (`sesionId`,
 * `onCompation`, `cacheBreakpoint`) was ignored without a word, where `new CompactManager`
 * names it (`invalid_config`, "did you mean ..."); `withCompaction(client, manager,
 * { sessionId: 5 })` was accepted and failed at the first request instead; and a missing manager
 * (`compactionMiddleware(undefined, ...)`) was accepted and failed at the first call with a bare
 * TypeError. Now each factory refuses them at once, `invalid_config` naming the option.
 */
import Anthropic from '@anthropic-ai/sdk';
import { MemorySession } from '@openai/agents';
import { describe, expect, it } from 'vitest';
import {
  compactionMiddleware as aiSdkMiddleware,
  compactionPrepareStep,
} from '../../src/adapters/ai-sdk/index.js';
import { withCompaction } from '../../src/adapters/anthropic/index.js';
import { compactionMiddleware as langChainMiddleware } from '../../src/adapters/langchain/index.js';
import { CompactionSession, compactionInputFilter } from '../../src/adapters/openai-agents/index.js';
import { CompactError } from '../../src/core/errors.js';
import { CompactManager } from '../../src/core/manager/compact-manager.js';

const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 8_000 });
const client = () => new Anthropic({ apiKey: 'test', baseURL: 'http://127.0.0.1:9' });

function refused(make: () => unknown): CompactError {
  try {
    make();
  } catch (error) {
    expect(error).toBeInstanceOf(CompactError);
    expect((error as CompactError).code).toBe('invalid_config');
    return error as CompactError;
  }
  throw new Error('expected invalid_config');
}

describe('integration factories check their options', () => {
  it('a misspelt option is named, with the one meant', () => {
    expect(
      refused(() => withCompaction(client(), manager, { sessionId: 's', cacheBreakpoint: false } as never))
        .message,
    ).toBe('withCompaction: cacheBreakpoint is not an option (did you mean cacheBreakpoints?)');
    expect(refused(() => aiSdkMiddleware(manager, { sesionId: 's' } as never)).message).toBe(
      'compactionMiddleware: sesionId is not an option (did you mean sessionId?)',
    );
    expect(
      refused(() => langChainMiddleware(manager, { sessionId: 's', onCompation: () => {} } as never)).message,
    ).toBe('compactionMiddleware: onCompation is not an option (did you mean onCompaction?)');
    expect(
      refused(() => compactionPrepareStep(manager, { sessionId: 's', replyToken: 100 } as never)).issues,
    ).toEqual([
      {
        path: ['replyToken'],
        message: 'is not an option (did you mean replyTokens?)',
        code: 'invalid_config',
      },
    ]);
    expect(
      refused(() => compactionInputFilter(manager, { sessionId: 's', spanname: 'x' } as never)).message,
    ).toBe('compactionInputFilter: spanname is not an option (did you mean spanName?)');
    const session = new MemorySession();
    expect(
      refused(() => new CompactionSession({ session, manager, writeTimeCompation: true } as never)).message,
    ).toBe('CompactionSession: writeTimeCompation is not an option (did you mean writeTimeCompaction?)');
  });

  it('a session id that is neither a string nor a function is refused when the integration is made', () => {
    expect(refused(() => withCompaction(client(), manager, { sessionId: 5 } as never)).message).toBe(
      'withCompaction: sessionId must be a non-empty string or a function (got number)',
    );
    expect(refused(() => aiSdkMiddleware(manager, { sessionId: { id: 'x' } } as never)).message).toBe(
      'compactionMiddleware: sessionId must be a non-empty string or a function (got object)',
    );
  });

  it('a missing manager or a callback that is not a function is refused', () => {
    expect(refused(() => aiSdkMiddleware(undefined as never, { sessionId: 's' })).message).toBe(
      'compactionMiddleware: manager must be a CompactManager',
    );
    expect(refused(() => withCompaction(client(), {} as never, { sessionId: 's' })).message).toBe(
      'withCompaction: manager must be a CompactManager',
    );
    expect(refused(() => langChainMiddleware(manager, { onCompaction: 'log' } as never)).message).toBe(
      'compactionMiddleware: onCompaction must be a function (got string)',
    );
  });

  it('well-formed options are accepted as before', () => {
    expect(() =>
      withCompaction(client(), manager, { sessionId: () => 't', cacheBreakpoints: 'auto' }),
    ).not.toThrow();
    expect(() => aiSdkMiddleware(manager)).not.toThrow();
    expect(() =>
      aiSdkMiddleware(manager, { sessionId: 's', countTools: false, onCompaction: () => {} }),
    ).not.toThrow();
    expect(() => langChainMiddleware(manager, { name: 'compaction', countTools: true })).not.toThrow();
    expect(() =>
      compactionPrepareStep(manager, { sessionId: 's', system: 'x', tools: [], replyTokens: 10 }),
    ).not.toThrow();
    expect(() =>
      compactionInputFilter(manager, { sessionId: () => 's', countTools: false, spanName: 'c' }),
    ).not.toThrow();
    const session = new MemorySession();
    const options = {
      session,
      manager,
      sessionId: 's',
      instructions: 'i',
      tools: [],
      writeTimeCompaction: false,
    };
    expect(() => new CompactionSession(options)).not.toThrow();
  });
});
