#!/usr/bin/env node
import { failureLine, runCli } from './run-cli.js';
import { terminalText } from './terminal-text.js';

const argv = process.argv.slice(2);
const help = argv.includes('--help') || argv.includes('-h');
/** The proxy's own process flags (src/cli/respawn-with-heap-flags.ts), when it needs them. */
async function proxyFlags(): Promise<string[] | undefined> {
  if (argv[0] !== 'proxy' || help) return undefined;
  return (await import('./respawn-with-heap-flags.js')).heapFlagsToAdd(process.execArgv, process.env);
}
try {
  const flags = await proxyFlags();
  process.exitCode = flags
    ? await (await import('./respawn-with-heap-flags.js')).respawnWithHeapFlags(argv, flags)
    : argv[0] === 'mcp' && !help
      ? await (await import('./mcp-server.js')).runMcpCommand(argv.slice(1), (text) =>
          process.stderr.write(text),
        )
      : await runCli(argv, {
          stdin: process.stdin,
          stdout: (text) => process.stdout.write(text),
          stderr: (text) => process.stderr.write(text),
          env: process.env,
          isTTY: process.stderr.isTTY === true,
        });
} catch (error) {
  // Whatever escaped a command is still one line and exit 2.
  const { line, code } = failureLine(error, process.env);
  process.stderr.write(`error: ${terminalText(line)}\n`);
  process.exitCode = code;
}
