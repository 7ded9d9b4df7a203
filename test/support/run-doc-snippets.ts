/**
 * Runs the generated doc snippet modules (`tsx test/support/run-doc-snippets.ts DIR NAME...`)
 * in one process, each between `=== snippet NAME` and `=== end NAME (ok|failed)` lines, with
 * every provider SDK pointed at a local test server (no API key, no network): a snippet that
 * calls OpenAI, Anthropic, the AI SDK, the Agents SDK or LangChain gets a scripted reply.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startProviderTestServer } from '../../src/testing/provider-test-server.js';

const [dir, ...names] = process.argv.slice(2);
// Files a snippet reads or writes (compact.yaml, events.jsonl) are in the snippets' folder.
process.chdir(dir!);
const server = await startProviderTestServer();
process.env.OPENAI_BASE_URL = server.openaiBaseURL;
process.env.OPENAI_API_KEY = 'sk-doc-test';
process.env.ANTHROPIC_BASE_URL = server.anthropicBaseURL;
process.env.ANTHROPIC_API_KEY = 'sk-ant-doc-test';
let failed = 0;
for (const name of names) {
  console.log(`=== snippet ${name}`);
  try {
    const module = (await import(pathToFileURL(join(dir!, name)).href)) as {
      __docSnippet: () => Promise<void>;
    };
    await module.__docSnippet();
    console.log(`=== end ${name} (ok)`);
  } catch (error) {
    failed++;
    console.log(error instanceof Error ? (error.stack ?? error.message) : String(error));
    console.log(`=== end ${name} (failed)`);
  }
}
await server.close();
process.exit(failed > 0 ? 1 : 0);
