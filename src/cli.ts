#!/usr/bin/env node
// The `billing-sandbox` executable: serving (the default) and the commands that drive a running
// sandbox, all defined under src/cli/ (program.ts lists them).
import { run } from './cli/program.js';

void run(process.argv);
