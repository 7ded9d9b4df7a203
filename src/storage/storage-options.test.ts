/**
 * The archive factories' options are checked where they are given, as `s3Storage` checks its
 * bucket: `fsStorage({ path: 42 })` and `fsStorage(null)` threw a bare TypeError (`The
 * "paths[0]" argument must be of type string`, `Cannot read properties of null`), and
 * `s3Storage({ bucket, prefix: 5 })` one from `String.prototype.replace`; an empty path made
 * the current directory the archive root (a config file refuses it: `storage.path` min 1).
 */
import { describe, expect, it } from 'vitest';
import { isCompactError } from '../core/errors.js';
import { fsStorage } from './fs/fs-storage.js';
import { s3Storage } from './s3/s3-storage.js';

function issuePath(make: () => unknown): unknown {
  try {
    make();
  } catch (error) {
    if (!isCompactError(error, 'invalid_config')) throw error;
    return error.issues?.[0]?.path;
  }
  throw new Error('no error');
}

describe('archive factory options', () => {
  it('fsStorage: options and path name the field', () => {
    expect(issuePath(() => fsStorage({ path: 42 as unknown as string }))).toEqual(['storage', 'path']);
    expect(issuePath(() => fsStorage({ path: '' }))).toEqual(['storage', 'path']);
    expect(issuePath(() => fsStorage(null as unknown as object))).toEqual(['storage']);
    expect(issuePath(() => fsStorage({ hashSessionIds: 'yes' as unknown as boolean }))).toEqual([
      'storage',
      'hashSessionIds',
    ]);
  });

  it('s3Storage: a prefix that is no string names it', () => {
    expect(issuePath(() => s3Storage({ bucket: 'b', prefix: 5 as unknown as string }))).toEqual([
      'storage',
      'prefix',
    ]);
  });

  it('good options are taken', () => {
    expect(fsStorage({ path: '/tmp/never-written', hashSessionIds: false }).name).toBe('fs');
    expect(fsStorage().name).toBe('fs');
    expect(s3Storage({ bucket: 'b', prefix: 'p/' }).name).toBe('s3');
  });
});
