#!/usr/bin/env node
import { runCli } from './run-cli.js';

const argv = process.argv.slice(2);
const code =
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
process.exitCode = code;
