// The modules the command line's bundle (scripts/bundle-cli.mjs) evaluates only when first used,
// although a package it starts with requires them at load: each such require gets a stand-in, an
// object with the module's export names whose first read loads the module and forwards to it.
// Every start used to pay for their code (and the young-generation collections their objects cause)
// before the first answer, which needs none of them. (Not lodash, which openapi-backend requires at
// load: its router's list of operations, which the start builds, runs on it.) Measured on 2026-11-26 (Node 22.23, 2 cores,
// 11 starts each, interleaved): the stand-ins took the median cold start from 331 ms to 316 ms.
//
// A stand-in has the names the module exports when the build runs (read by loading it here); the
// bundle carries that same installed version of a package. Built-ins too are taken from the build's
// Node, which has at least the names the packages that use them read.
import { createRequire } from 'node:module';

/** What requires each module at load, and when it is first used. */
export const ON_FIRST_USE = {
  // express, send, type-is and accepts require it; its database of 2,500 types is read into maps
  // at load. Used when an answer's type is set by name (express's res.type, res.json) or a static
  // file is sent; the API's answers set their header themselves.
  'mime-types': 'the first answer typed by name',
  // openapi-backend checks a document against OpenAPI's own JSON Schemas (three of them, read at
  // load) only outside quick mode, which the sandbox never uses.
  'openapi-schema-validator': 'never, in the sandbox',
  // commander spawns executable subcommands (this command line has none).
  'node:child_process': 'never, in the sandbox',
  // body-parser decompresses request bodies sent with a Content-Encoding.
  'node:zlib': 'the first compressed request body',
  // body-parser decodes bodies in a charset other than UTF-8 (scripts/lib/cli-externals.mjs).
  'iconv-lite': 'the first body to decode',
};

const NAMESPACE = 'on-first-use';

/** The esbuild plugin: `externals` are the packages the bundle leaves out (a stand-in requires them from node_modules). */
export function onFirstUse(externals) {
  const names = Object.keys(ON_FIRST_USE);
  const filter = new RegExp(`^(${names.map((name) => name.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('|')})$`);
  return {
    name: NAMESPACE,
    setup(build) {
      build.onResolve({ filter }, async (args) => {
        // The stand-in's own require: the module itself, as esbuild would have resolved it.
        if (args.namespace === NAMESPACE || args.pluginData === NAMESPACE) {
          return args.path.startsWith('node:') || externals.includes(args.path) ? { path: args.path, external: true } : undefined;
        }
        if (args.path.startsWith('node:') || externals.includes(args.path)) return { path: args.path, namespace: NAMESPACE, pluginData: { specifier: args.path } };
        const real = await build.resolve(args.path, { resolveDir: args.resolveDir, kind: args.kind, pluginData: NAMESPACE });
        if (real.errors.length) return { errors: real.errors };
        return { path: real.path, namespace: NAMESPACE, pluginData: { specifier: real.path } };
      });
      build.onLoad({ filter: /.*/, namespace: NAMESPACE }, (args) => {
        const specifier = args.pluginData?.specifier ?? args.path;
        return { contents: standIn(specifier, exportsOf(specifier, build.initialOptions.absWorkingDir)), loader: 'js', resolveDir: build.initialOptions.absWorkingDir };
      });
    },
  };
}

function exportsOf(specifier, root) {
  const real = specifier.startsWith('node:') ? process.getBuiltinModule(specifier) : createRequire(`${root}/`)(specifier);
  return { names: Object.keys(real).filter((name) => name !== '__esModule'), esModule: real.__esModule === true };
}

/**
 * The stand-in's source: each export a getter (and setter) over the module, loaded on first use.
 * `__esModule` is a plain value, since the interop helpers read it as they require the module.
 */
function standIn(specifier, { names, esModule }) {
  return [
    'let loaded;',
    `const load = () => (loaded ??= require(${JSON.stringify(specifier)}));`,
    esModule ? 'Object.defineProperty(module.exports, "__esModule", { value: true });' : '',
    `for (const name of ${JSON.stringify(names)}) {`,
    '  Object.defineProperty(module.exports, name, { enumerable: true, get: () => load()[name], set: (value) => { load()[name] = value; } });',
    '}',
  ].join('\n');
}
