import { describe, expect, it } from 'vitest';
import { CompactError } from '../core/errors.js';
import { importPeer, toSummarizerError } from './client-errors.js';

describe('client errors', () => {
  it('a missing peer raises missing_dependency with the install command', async () => {
    await expect(
      importPeer('no-such-peer-package', () => import('no-such-peer-package' as string)),
    ).rejects.toMatchObject({
      code: 'missing_dependency',
      message: 'install no-such-peer-package: npm i no-such-peer-package',
    });
  });

  it('passes CompactErrors through and wraps others with the HTTP status', () => {
    const typed = new CompactError('summarizer_refused', 'no');
    expect(toSummarizerError('x', typed)).toBe(typed);
    expect(toSummarizerError('x', Object.assign(new Error('rate'), { status: 429 }))).toMatchObject({
      code: 'summarizer_failed',
      message: 'x: HTTP 429: rate',
    });
    expect(toSummarizerError('x', 'text')).toMatchObject({ message: 'x: text' });
  });
});
