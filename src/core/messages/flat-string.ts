/**
 * `parts` joined into one flat string. A `+` or template of two strings of 13 characters or
 * more makes a cons string (a pair pointing at both parts), flattened in place the first time it
 * is hashed or compared: a message id kept so was two or three objects for every scavenge of a
 * cold index to copy (issue 47); `Array.prototype.join` writes one sequential string.
 */
export function flatString(...parts: string[]): string {
  return parts.join('');
}
