/**
 * `compactionPrepareStep` takes the `ToolSet` given to `generateText` (typed as the installed
 * `ai` declares it) and counts its tools as it counts their JSON schemas.
 */
import { type ModelMessage, type ToolSet, tool } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CompactManager } from '../../core/manager/compact-manager.js';
import type { CompactionResult } from '../../core/manager/manager-options.js';
import { callToolSchemas, compactionPrepareStep } from './index.js';
import { toolSetSchemas } from './tool-set-schemas.js';

const tools: ToolSet = {
  read_file: tool({
    description: 'Read a file of the repository',
    inputSchema: z.object({ path: z.string(), lines: z.number().optional() }),
    execute: async ({ path }) => path,
  }),
};

const messages: ModelMessage[] = [{ role: 'user', content: 'Read the README.' }];

/** The request's tokens as `compactionPrepareStep` counts them with `tools`. */
async function countedWith(tools: ToolSet | readonly unknown[] | undefined): Promise<number> {
  const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 100_000 });
  let result: CompactionResult<unknown> | undefined;
  const prepareStep = compactionPrepareStep(manager, {
    sessionId: 'tool-set',
    ...(tools === undefined ? {} : { tools }),
    onCompaction: (compaction) => {
      result = compaction;
    },
  });
  await prepareStep({ messages, steps: [] });
  await manager.shutdown();
  return result!.tokensAfter;
}

describe('compactionPrepareStep with a ToolSet', () => {
  it("reads each tool's input schema as JSON Schema", async () => {
    const [schema] = await toolSetSchemas(tools);
    expect(schema).toMatchObject({
      type: 'function',
      name: 'read_file',
      description: 'Read a file of the repository',
      parameters: { type: 'object', properties: { path: { type: 'string' }, lines: { type: 'number' } } },
    });
  });

  it('counts a ToolSet as the same tools given as schemas', async () => {
    const [schema] = (await toolSetSchemas(tools)) as { parameters: unknown }[];
    const asSchemas = callToolSchemas([
      { name: 'read_file', description: 'Read a file of the repository', inputSchema: schema!.parameters },
    ]);
    const withToolSet = await countedWith(tools);
    expect(withToolSet).toBe(await countedWith(asSchemas));
    expect(withToolSet).toBeGreaterThan(await countedWith(undefined));
  });
});
