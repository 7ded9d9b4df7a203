import { describe, expect, it } from 'vitest';
import type { StorageAdapter } from '../core/archive/storage-adapter.js';
import { FORGED_REFS, sampleArtifact } from './sample-artifact.js';

/** An adapter with artifact support, plus a check of where it wrote. */
export interface ArtifactHarness {
  adapter: StorageAdapter;
  /** True when `location` (returned by `saveArtifact`) lies inside the adapter's root. */
  isInsideRoot(location: string): boolean;
  close(): Promise<void>;
}

/** Options of {@link describeArtifactConformance}. */
export interface ArtifactConformanceOptions {
  /** Shown in the test names. */
  name: string;
  create(): Promise<ArtifactHarness>;
}

/**
 * Registers the artifact contract tests (`saveArtifact`, `loadArtifact`, `listArtifacts`) for
 * one adapter: round trips, session isolation, refusal of forged references, order.
 *
 * @example
 * ```ts
 * describeArtifactConformance({ name: 'fs', async create() { ... } });
 * ```
 */
export function describeArtifactConformance(options: ArtifactConformanceOptions): void {
  describe(`artifact conformance: ${options.name}`, () => {
    const withHarness = async (run: (harness: ArtifactHarness) => Promise<void>) => {
      const harness = await options.create();
      const adapter = harness.adapter;
      if (!adapter.saveArtifact || !adapter.loadArtifact || !adapter.listArtifacts)
        throw new Error(`${options.name} does not implement saveArtifact, loadArtifact and listArtifacts`);
      try {
        await run(harness);
      } finally {
        await adapter.close?.();
        await harness.close();
      }
    };

    it('round-trips an artifact, text byte for byte, inside the root', () =>
      withHarness(async ({ adapter, isInsideRoot }) => {
        const text = `ünïcode ✓ \u{1F600}\nline two\n${'x'.repeat(100_000)}\n"quotes" and \\ backslashes`;
        const artifact = sampleArtifact('s-1', 'tool-3kf93jd02kd9', text);
        const location = await adapter.saveArtifact!('s-1', artifact);
        expect(isInsideRoot(location), location).toBe(true);
        expect(await adapter.loadArtifact!('s-1', 'tool-3kf93jd02kd9')).toEqual(artifact);
      }));

    it('answers undefined for a reference that was never saved', () =>
      withHarness(async ({ adapter }) => {
        expect(await adapter.loadArtifact!('nobody', 'tool-0000000')).toBeUndefined();
        await adapter.saveArtifact!('s-1', sampleArtifact('s-1', 'tool-aaa', 'a'));
        expect(await adapter.loadArtifact!('s-1', 'tool-bbb')).toBeUndefined();
        expect(await adapter.listArtifacts!('nobody')).toEqual([]);
      }));

    it('never returns an artifact of another session', () =>
      withHarness(async ({ adapter }) => {
        await adapter.saveArtifact!('alice', sampleArtifact('alice', 'tool-secret1', 'alice only'));
        for (const other of ['bob', 'Alice', 'alice/', '../alice', 'alice/..', '']) {
          expect(await adapter.loadArtifact!(other, 'tool-secret1'), other).toBeUndefined();
          expect(await adapter.listArtifacts!(other), other).toEqual([]);
        }
        expect((await adapter.listArtifacts!('alice')).map((a) => a.ref)).toEqual(['tool-secret1']);
      }));

    it('refuses forged references on load and on save', () =>
      withHarness(async ({ adapter }) => {
        await adapter.saveArtifact!('s-1', sampleArtifact('s-1', 'tool-abc', 'a'));
        for (const ref of FORGED_REFS) {
          await expect(adapter.loadArtifact!('s-1', ref as string), String(ref)).rejects.toThrow(/ref/);
          await expect(
            adapter.saveArtifact!('s-1', sampleArtifact('s-1', ref as string, 'x')),
            String(ref),
          ).rejects.toThrow(/ref/);
        }
        expect((await adapter.listArtifacts!('s-1')).map((a) => a.ref)).toEqual(['tool-abc']);
      }));

    it('refuses an artifact whose sessionId is not the one it is saved under', () =>
      withHarness(async ({ adapter }) => {
        await expect(adapter.saveArtifact!('alice', sampleArtifact('bob', 'tool-abc', 'x'))).rejects.toThrow(
          /sessionId/,
        );
        expect(await adapter.loadArtifact!('alice', 'tool-abc')).toBeUndefined();
        expect(await adapter.loadArtifact!('bob', 'tool-abc')).toBeUndefined();
      }));

    listingTests(withHarness);
  });
}

/** Listing, replacing, unsafe ids and copies. */
function listingTests(
  withHarness: (run: (harness: ArtifactHarness) => Promise<void>) => Promise<void>,
): void {
  it('lists oldest first and replaces an artifact saved again under the same reference', () =>
    withHarness(async ({ adapter }) => {
      const at = (minute: number) => Date.UTC(2025, 0, 1, 0, minute);
      await adapter.saveArtifact!(
        's',
        sampleArtifact('s', 'sum-v2', 'second', { createdAt: at(2), step: 2 }),
      );
      await adapter.saveArtifact!(
        's',
        sampleArtifact('s', 'tool-b', 'first b', { createdAt: at(1), messageIndex: 9 }),
      );
      await adapter.saveArtifact!(
        's',
        sampleArtifact('s', 'tool-a', 'first a', { createdAt: at(1), messageIndex: 4 }),
      );
      await adapter.saveArtifact!(
        's',
        sampleArtifact('s', 'cut-c', 'cut once', { createdAt: at(3), kind: 'message' }),
      );
      await adapter.saveArtifact!(
        's',
        sampleArtifact('s', 'cut-c', 'cut again', { createdAt: at(3), kind: 'message' }),
      );
      const listed = await adapter.listArtifacts!('s');
      expect(listed.map((a) => a.ref)).toEqual(['tool-a', 'tool-b', 'sum-v2', 'cut-c']);
      expect(listed.at(-1)?.text).toBe('cut again');
    }));

  it('keeps unsafe session ids apart', () =>
    withHarness(async ({ adapter, isInsideRoot }) => {
      const ids = ['../../etc', '..', '.', 'a/b', 'a\\b', 'a%2Fb', 'Case', 'case'];
      for (const id of ids) {
        const location = await adapter.saveArtifact!(id, sampleArtifact(id, 'tool-x', `text of ${id}`));
        expect(isInsideRoot(location), `${JSON.stringify(id)} -> ${location}`).toBe(true);
      }
      for (const id of ids) {
        expect((await adapter.loadArtifact!(id, 'tool-x'))?.text, id).toBe(`text of ${id}`);
        expect(await adapter.listArtifacts!(id), id).toHaveLength(1);
      }
    }));

  it('hands out copies: changing what was saved or loaded changes nothing stored', () =>
    withHarness(async ({ adapter }) => {
      const artifact = sampleArtifact('s', 'tool-copy', 'original');
      await adapter.saveArtifact!('s', artifact);
      artifact.text = 'changed after save';
      const loaded = await adapter.loadArtifact!('s', 'tool-copy');
      expect(loaded?.text).toBe('original');
      loaded!.text = 'changed after load';
      expect((await adapter.loadArtifact!('s', 'tool-copy'))?.text).toBe('original');
    }));
}
