import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/run-cli.js';

/**
 * `summarizer.api_key_env` takes the name of a variable; a key pasted there instead (a Groq
 * `gsk_...` or a Stripe-like `sk_live_...` key is a valid variable name) made the error say
 * "names gsk_..., which is not set", the whole key on stderr (and in a CI log).
 */

// Built at test time: no key is written whole in the repository.
const GROQ = ['gsk_', 'Zq8vN2xR7tL4mW9p', 'K3jH6fD1sA5gB0cE', 'Yt2Uw4Ix6Oz8Pa1Qb3Rc5Sd7'].join('');

async function stderrOf(
  argv: string[],
  env: Record<string, string>,
): Promise<{ code: number; stderr: string }> {
  let stderr = '';
  const code = await runCli(argv, {
    stdin: Readable.from([]),
    stdout: () => {},
    stderr: (text) => {
      stderr += text;
    },
    env,
  });
  return { code, stderr };
}

describe('a key given where its variable name goes', () => {
  it('is not printed in the error', async () => {
    const { code, stderr } = await stderrOf(['compact', '-', '--max-context', '8000', '--force'], {
      COMPACT_SUMMARIZER_PROVIDER: 'openai',
      COMPACT_SUMMARIZER_API_KEY_ENV: GROQ,
    });
    expect(code).toBe(2);
    expect(stderr).toContain('summarizer.api_key_env names');
    expect(stderr).not.toContain(GROQ.slice(4, 16));
    expect(stderr).toContain('name the variable that holds the key');
  });

  it('a variable name that is not set is still named', async () => {
    const { stderr } = await stderrOf(['compact', '-', '--max-context', '8000', '--force'], {
      COMPACT_SUMMARIZER_PROVIDER: 'openai',
      COMPACT_SUMMARIZER_API_KEY_ENV: 'MY_OPENAI_KEY',
    });
    expect(stderr).toContain('summarizer.api_key_env names MY_OPENAI_KEY, which is not set');
  });
});
