import { describe, expect, it } from 'vitest';
import { heapFlagsToAdd, PROXY_SEMI_SPACE_MB, RESPAWN_ENV } from './respawn-with-heap-flags.js';

describe('heapFlagsToAdd (the proxy process young generation)', () => {
  it('caps the semi-space when nothing set it', () => {
    expect(heapFlagsToAdd(['--import', 'tsx'], {})).toEqual([`--max-semi-space-size=${PROXY_SEMI_SPACE_MB}`]);
  });

  it('leaves a size given on the command line or in NODE_OPTIONS, in either spelling', () => {
    expect(heapFlagsToAdd(['--max-semi-space-size=32'], {})).toBeUndefined();
    expect(
      heapFlagsToAdd([], { NODE_OPTIONS: '--enable-source-maps --max_semi_space_size=2' }),
    ).toBeUndefined();
  });

  it('does not start a child from the child, nor when told not to', () => {
    expect(heapFlagsToAdd([], { [RESPAWN_ENV]: 'child' })).toBeUndefined();
    expect(heapFlagsToAdd([], { [RESPAWN_ENV]: '0' })).toBeUndefined();
  });
});
