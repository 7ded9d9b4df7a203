import { describe, expect, it } from 'vitest';
import {
  boundedLevenshtein,
  closestModelName,
  MODEL_FAMILIES,
  modelInfo,
  normalizeModelName,
  UNKNOWN_MODEL_CONTEXT_WINDOW,
} from './model-table.js';

describe('model table', () => {
  it.each([
    ['gpt-5', 400_000, true],
    ['gpt-5-mini-2025-08-07', 400_000, true],
    ['gpt-5-chat-latest', 128_000, true],
    ['gpt-4.1-nano-2025-04-14', 1_047_576, true],
    ['gpt-4o-2024-11-20', 128_000, true],
    ['openai/gpt-4o-mini', 128_000, true],
    ['o1-mini', 128_000, true],
    ['o1-2024-12-17', 200_000, true],
    ['o3-mini', 200_000, true],
    ['o4-mini-2025-04-16', 200_000, true],
    ['gpt-4-0613', 8_192, true],
    ['gpt-4-turbo-2024-04-09', 128_000, true],
    ['gpt-3.5-turbo-0125', 16_385, true],
    ['claude-3-5-sonnet-20241022', 200_000, false],
    ['claude-3-7-sonnet-latest', 200_000, false],
    ['claude-sonnet-4-5-20250929', 200_000, false],
    ['claude-opus-4-1', 200_000, false],
    ['claude-haiku-4-5', 200_000, false],
    ['us.anthropic.claude-sonnet-4-20250514-v1:0', 200_000, false],
    ['claude-3-5-sonnet-v2@20241022', 200_000, false],
    ['claude-instant-1.2', 100_000, false],
    ['gemini-2.5-pro', 1_048_576, false],
    ['models/gemini-2.0-flash-001', 1_048_576, false],
    ['gemini-1.5-pro-002', 2_097_152, false],
    ['llama3.1:8b', 131_072, false],
    ['meta-llama/Llama-3.3-70B-Instruct', 131_072, false],
    ['llama3:8b', 8_192, false],
    ['qwen2.5-coder:32b', 32_768, false],
    ['Qwen/Qwen3-Coder-480B-A35B-Instruct', 262_144, false],
    ['mistral-large-latest', 131_072, false],
    ['open-mixtral-8x22b', 65_536, false],
    ['deepseek-reasoner', 131_072, false],
    ['deepseek-r1:8b', 131_072, false],
  ])('%s: window %i, exact tokenizer %s', (name, window, exact) => {
    expect(modelInfo(name)).toMatchObject({ contextWindow: window, exact, known: true });
    expect(modelInfo(name).closest).toBeUndefined();
  });

  it('maps families to providers and encodings', () => {
    expect(modelInfo('gpt-4')).toMatchObject({
      encoding: 'cl100k_base',
      provider: 'openai',
      family: 'gpt-4',
    });
    expect(modelInfo('claude-3-haiku-20240307')).toMatchObject({
      provider: 'anthropic',
      family: 'claude-3-haiku',
    });
    expect(modelInfo('gemini-2.5-flash-lite')).toMatchObject({
      provider: 'google',
      family: 'gemini-2.5-flash',
    });
  });

  it('an unknown name gets the default window and the closest known name', () => {
    expect(modelInfo('gtp-4o')).toEqual({
      encoding: 'o200k_base',
      exact: false,
      contextWindow: UNKNOWN_MODEL_CONTEXT_WINDOW,
      known: false,
      closest: 'gpt-4o',
    });
    expect(modelInfo('cluade-sonnet-4-5').closest).toBe('claude-sonnet-4-5');
    expect(modelInfo('gemni-2.5-pro').closest).toBe('gemini-2.5-pro');
    expect(modelInfo('lama3.1').closest).toBe('llama3.1');
    expect(modelInfo('x'.repeat(100_000)).known).toBe(false);
  });

  it('every family and alias resolves to itself', () => {
    for (const family of MODEL_FAMILIES) {
      for (const name of [family.family, ...(family.names ?? [])]) {
        expect(modelInfo(name).known, name).toBe(true);
        expect(closestModelName(name), name).toBe(name);
      }
    }
  });

  it('normalizes provider prefixes, tags and versions', () => {
    expect(normalizeModelName(' OpenAI/GPT-4o ')).toBe('gpt-4o');
    expect(normalizeModelName('eu.anthropic.claude-3-haiku-20240307-v1:0')).toBe(
      'claude-3-haiku-20240307-v1',
    );
    expect(normalizeModelName('llama3.1:70b-instruct-q4_K_M')).toBe('llama3.1');
  });

  it('bounded Levenshtein: exact under the bound, bound + 1 beyond', () => {
    expect(boundedLevenshtein('gtp-4o', 'gpt-4o', 5)).toBe(2);
    expect(boundedLevenshtein('kitten', 'sitting', 10)).toBe(3);
    expect(boundedLevenshtein('kitten', 'sitting', 2)).toBe(3);
    expect(boundedLevenshtein('a', 'abcdefgh', 3)).toBe(4);
    expect(boundedLevenshtein('', '', 0)).toBe(0);
  });
});
