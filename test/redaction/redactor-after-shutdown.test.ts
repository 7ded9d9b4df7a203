import { describe, expect, it } from 'vitest';
import { CompactManager } from '../../src/core/manager/compact-manager.js';

/**
 * A manager's redactor drops its compiled rules at shutdown and builds them again when the
 * manager is called later (issue 47): from the patterns it was configured with, not from
 * what the caller's option arrays hold by then (a config object reused and edited).
 */
describe('the redactor of a manager called after shutdown', () => {
  it('redacts with the patterns it was configured with', async () => {
    const extraPatterns = ['\\bproj-[0-9]{4}\\b'];
    const patterns = ['\\bcustomer-[0-9]{4}\\b'];
    const manager = new CompactManager({
      model: 'gpt-4o',
      maxContextTokens: 16_000,
      redaction: { patterns, extraPatterns },
    });
    const seen: string[] = [];
    manager.on('compact.warning', (event) => seen.push(event.properties.message));
    const text = 'ids proj-1234 and customer-5678';
    manager.emit('s', 'compact.warning', { code: 'usage_mismatch', message: text });
    await manager.shutdown();
    // The caller edits the arrays it configured the manager with.
    extraPatterns.length = 0;
    patterns.splice(0, 1, '(unclosed');
    expect(() =>
      manager.emit('s', 'compact.warning', { code: 'usage_mismatch', message: text }),
    ).not.toThrow();
    expect(seen).toHaveLength(2);
    expect(seen[1]).toBe(seen[0]);
    expect(seen[1]).not.toContain('proj-1234');
    expect(seen[1]).not.toContain('customer-5678');
  });
});

describe('redaction options of the wrong type', () => {
  it('fail in the constructor with a typed error naming the field', () => {
    const cases: [unknown, string][] = [
      [{ patterns: 5 }, 'redaction.patterns'],
      [{ extraPatterns: 'abc' }, 'redaction.extraPatterns'],
      [{ patterns: ['ok', 5] }, 'redaction.patterns.1'],
      [{ custom: 3 }, 'redaction.custom'],
    ];
    for (const [redaction, field] of cases)
      expect(() => new CompactManager({ redaction } as never), field).toThrow(
        expect.objectContaining({ code: 'invalid_config', message: expect.stringContaining(field) }),
      );
  });
});
