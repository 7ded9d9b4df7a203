import { describe, expect, it } from 'vitest';
import { telegraphic } from './real-chat-telegraphic.js';

describe('telegraphic lines (issue 45 candidate)', () => {
  it('drops articles, fillers and hedges by level, never a negated word or a bracketed date', () => {
    const line =
      "I think the trip was really fun but I'm not really into hiking last week (the week before 9 January 2023)";
    expect(telegraphic(line, 1)).toBe(
      "I think trip was really fun but I'm not really into hiking last week (the week before 9 January 2023)",
    );
    expect(telegraphic(line, 2)).toBe(
      "I think trip was fun but I'm not really into hiking last week (the week before 9 January 2023)",
    );
    expect(telegraphic(line, 3)).toBe(
      "trip was fun but I'm not really into hiking last week (the week before 9 January 2023)",
    );
    expect(telegraphic('I read The Night Circus', 3)).toBe('I read The Night Circus');
  });
});
