// The shape issue 11 left the source in: no module of src/ reaches itself through the imports that
// run when it loads (the circles bills <-> vendor-payments and invoices -> payments -> payouts ->
// invoices were taken apart; a new one would come back unnoticed: ES modules load a circle in an
// order that leaves some bindings undefined while the first module runs). Type-only imports are
// erased by the compiler, and an `await import()` runs later, so neither counts.
import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const SRC = resolve('src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Whether an import declaration brings in values (not only types). */
function importsValues(node: ts.ImportDeclaration): boolean {
  const clause = node.importClause;
  if (!clause) return true; // import './side-effect.js'
  if (clause.isTypeOnly) return false;
  if (clause.name) return true;
  const bindings = clause.namedBindings;
  if (!bindings || ts.isNamespaceImport(bindings)) return true;
  // `import { type A } from` is erased; so is `import {} from` under verbatimModuleSyntax: count it as a value import.
  return bindings.elements.length === 0 || bindings.elements.some((element) => !element.isTypeOnly);
}

/** The relative modules a file imports or re-exports as values, as absolute .ts paths. */
function valueImports(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false);
  const found: string[] = [];
  for (const node of source.statements) {
    let specifier: ts.Expression | undefined;
    if (ts.isImportDeclaration(node) && importsValues(node)) specifier = node.moduleSpecifier;
    if (ts.isExportDeclaration(node) && !node.isTypeOnly) specifier = node.moduleSpecifier;
    if (specifier && ts.isStringLiteral(specifier) && specifier.text.startsWith('.')) {
      found.push(resolve(dirname(file), specifier.text.replace(/\.js$/, '.ts')));
    }
  }
  return found;
}

/** Every import circle, each as the files along it (depth-first: a circle is reported where it closes). */
function circles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (file: string) => {
    state.set(file, 'open');
    path.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'open') found.push([...path.slice(path.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    path.pop();
    state.set(file, 'done');
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  return found;
}

describe('the import graph of src/', () => {
  const files = sourceFiles(SRC);
  const graph = new Map(files.map((file) => [file, valueImports(file)]));

  it('is read whole: every file, and every relative import resolving to a file of src/', () => {
    expect(files.length).toBeGreaterThan(100);
    const edges = [...graph.values()].flat();
    expect(edges.length).toBeGreaterThan(files.length);
    const known = new Set(files);
    expect(edges.filter((target) => !known.has(target)).map((target) => relative(SRC, target))).toEqual([]);
  });

  it('has no circle', () => {
    expect(circles(graph).map((circle) => circle.map((file) => relative(SRC, file)).join(' -> '))).toEqual([]);
  });

  it('would name a circle if one came back', () => {
    const a = join(SRC, 'a.ts');
    const b = join(SRC, 'b.ts');
    const c = join(SRC, 'c.ts');
    expect(circles(new Map([[a, [b]], [b, [c]], [c, [a]]])).map((circle) => circle.map((file) => relative(SRC, file)))).toEqual([['a.ts', 'b.ts', 'c.ts', 'a.ts']]);
  });
});
