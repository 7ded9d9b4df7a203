#!/usr/bin/env node
import { failureLine, runCli } from './run-cli.js';
import { terminalText } from './terminal-text.js';

const argv = process.argv.slice(2);
try {
  process.exitCode =
    argv[0] === 'mcp' && !argv.includes('--help') && !argv.includes('-h')
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
