#!/usr/bin/env node
// The `billing-sandbox` executable: serving (the default) and the commands that drive a running
// sandbox, all defined under src/cli/ (program.ts lists them). It runs the build's bundle
// of them (scripts/bundle-cli.mjs: start-up reads a few files rather than hundreds of modules), else the
// compiled modules (a build without the bundle).
import * as nodeModule from 'node:module';

type Program = typeof import('./cli/program.js');

// Node 22's on-disk cache of compiled code (NODE_COMPILE_CACHE names its folder; default: the system's
// temporary folder): a later start skips compiling the bundle again. Absent in Node 20: skipped.
(nodeModule as { enableCompileCache?: () => unknown }).enableCompileCache?.();

async function program(): Promise<Program> {
  // A variable, so TypeScript does not look for the bundle (only the build writes it, in dist/cli/).
  const bundle = './cli/bundle.mjs';
  try {
    return (await import(bundle)) as Program;
  } catch (error) {
    if ((error as { code?: string }).code !== 'ERR_MODULE_NOT_FOUND' || !String((error as Error).message).includes('bundle.mjs')) throw error;
    return import('./cli/program.js');
  }
}

void program().then(({ run }) => run(process.argv));
