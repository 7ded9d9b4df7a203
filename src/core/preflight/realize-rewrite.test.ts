import { describe, expect, it } from 'vitest';
import { rewriteRef } from './realize-rewrite.js';

describe('rewriteRef', () => {
  it('gives the refs it gave before it built one flat string (stored states and archives name them)', () => {
    // Values of `${prefix}-${hashString(`${kind}\u0000${id}`)}`, the former code.
    expect(rewriteRef('cleared', 'h:k4n83c07h0j2b')).toBe('tool-pqpqr1hjyr6p');
    expect(rewriteRef('shortened', 'h:k4n83c07h0j2b')).toBe('args-jyjsf70h37sjh');
    expect(rewriteRef('cut', 'h:k4n83c07h0j2b')).toBe('cut-1hsmhcu0mcpzqx');
    expect(rewriteRef('cleared', 'call:call_0#3')).toBe('tool-1mup06e1gk22hm');
  });
});
