// Owns loading the packages that are read on first use and that the command line's bundle leaves out
// (scripts/lib/cli-externals.mjs says why): pdf-parse and pdfkit. The bundle runs as a script with a
// code cache (src/cli/code-cache.ts), and a script's import() needs an experimental vm option that
// prints a warning; so the bundle's build (scripts/bundle-cli.mjs) replaces this module with one that
// asks the loader, an ES module, to import. Everywhere else (the compiled modules, the programmatic
// API, the tests) this is import() itself.

const IMPORTS = {
  'pdf-parse': () => import('pdf-parse'),
  pdfkit: () => import('pdfkit'),
};
type Imports = typeof IMPORTS;

export function importPackage<Name extends keyof Imports>(name: Name): ReturnType<Imports[Name]> {
  return IMPORTS[name]() as ReturnType<Imports[Name]>;
}
