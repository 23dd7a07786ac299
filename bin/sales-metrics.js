#!/usr/bin/env node
// The operator command (SPEC section 12). Run `npm ci` (or `npm run build`) first.
import { runCli } from '../dist/src/cli/main.js';

process.exitCode = await runCli(process.argv.slice(2));
