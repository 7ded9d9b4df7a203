/** The user turns of the vendored SWE-agent trajectories (test/fixtures/swe-agent), for the data scripts. */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Each trajectory's user turns with text content, files in name order. */
export function sweAgentTurns(): string[] {
  const dir = 'test/fixtures/swe-agent';
  const out: string[] = [];
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.traj'))
    .sort()) {
    const { history } = JSON.parse(readFileSync(join(dir, file), 'utf8')) as {
      history: Array<{ role: string; content: unknown }>;
    };
    for (const m of history) if (m.role === 'user' && typeof m.content === 'string') out.push(m.content);
  }
  return out;
}
