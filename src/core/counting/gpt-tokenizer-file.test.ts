import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { gptTokenizerFile, requireGptTokenizer } from './gpt-tokenizer-file.js';

const require = createRequire(import.meta.url);

describe('gptTokenizerFile', () => {
  it('finds the files Node resolves through the package exports', () => {
    for (const module of ['GptEncoding', 'utfUtil', 'encodingParams/o200k_base', 'bpeRanks/o200k_base'])
      expect(gptTokenizerFile(module)).toBe(require.resolve(`gpt-tokenizer/${module}`));
  });

  it('requires the same module instance as Node resolution does', () => {
    expect(requireGptTokenizer('GptEncoding')).toBe(require('gpt-tokenizer/GptEncoding'));
  });
});
