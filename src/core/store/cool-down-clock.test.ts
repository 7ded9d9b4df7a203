/**
 * The fail-open store leaves a store alone for a second after a fault. The cool-down was timed
 * on the wall clock: a clock stepped back after the fault (NTP, a VM resumed) kept the store
 * left alone for as long as the step, here an hour, every call of the process going on from
 * its own copies meanwhile. Now it is timed on the monotonic clock.
 */
import { afterEach, expect, it, vi } from 'vitest';
import { HostileStore, JsonTextStore } from '../../../test/support/hostile-store.js';
import { FailOpenStore } from './fail-open-store.js';

afterEach(() => {
  vi.restoreAllMocks();
});

it('a wall clock stepped back after a fault does not stretch the cool-down', async () => {
  const store = new HostileStore(new JsonTextStore());
  const recoveries: string[] = [];
  const failOpen = new FailOpenStore(store, {
    timeoutMs: 500,
    onOutage: () => {},
    onRecovery: (key) => recoveries.push(key),
  });
  await store.inner.set('s', { sessionId: 's', version: 1, coveredIds: [], updatedAt: 1 });
  store.faults.reads = 1;
  await failOpen.within('s', () => failOpen.get('s'));
  expect(failOpen.down).toBe(true);
  // The wall clock steps back an hour; the cool-down's second has passed on the monotonic one.
  const wall = Date.now.bind(Date);
  const monotonic = performance.now.bind(performance);
  vi.spyOn(Date, 'now').mockImplementation(() => wall() - 3_600_000);
  vi.spyOn(performance, 'now').mockImplementation(() => monotonic() + 2_000);
  expect(await failOpen.within('s', () => failOpen.get('s'))).toMatchObject({ version: 1 });
  expect(recoveries).toEqual(['s']);
  expect(failOpen.down).toBe(false);
});
