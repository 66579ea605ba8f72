// Reading a PDF's text where the native canvas (@napi-rs/canvas) cannot load, as in the container
// image, which leaves it out: src/ocr/ocr.ts defines DOMMatrix before pdf.js loads, so the text and
// the fields pulled from it are the same as with the canvas, and pdf.js's warnings about rendering are
// not printed. The reader runs in a child node (esbuild bundles the sources and a fixture invoice for
// it) whose module resolution refuses the canvas package, and is compared with this process's answer.
import { describe, expect, it } from '@jest/globals';
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { extractFields, pdfText } from '../src/ocr/ocr.js';
import { labelledInvoice } from './fixtures/ocr/invoices.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

// Synchronous module hooks (node:module registerHooks) apply to require() too, which is how pdf.js
// asks for the canvas. Every refusal is counted, so the test knows pdf.js really asked.
const REFUSE_CANVAS = `
import { registerHooks } from 'node:module';
globalThis.canvasRefusals = 0;
registerHooks({
  resolve(specifier, context, next) {
    if (specifier === '@napi-rs/canvas' || specifier.startsWith('@napi-rs/canvas/')) {
      globalThis.canvasRefusals += 1;
      throw Object.assign(new Error("Cannot find module '" + specifier + "'"), { code: 'MODULE_NOT_FOUND' });
    }
    return next(specifier, context);
  },
});
`;

const READ_INVOICE = `
import { extractFields, pdfText } from './src/ocr/ocr.js';
import { labelledInvoice } from './test/fixtures/ocr/invoices.js';
const text = await pdfText(await labelledInvoice());
console.log(JSON.stringify({ text, fields: text === null ? null : extractFields(text), domMatrix: typeof globalThis.DOMMatrix, canvasRefusals: globalThis.canvasRefusals }));
`;

describe('PDF text without the native canvas', () => {
  it('reads the same text and fields, and prints no warning', async () => {
    // Inside the project, so the bundle's bare imports (pdf-parse, pdfkit...) resolve from its node_modules.
    mkdirSync(join(ROOT, 'node_modules', '.cache'), { recursive: true });
    const dir = mkdtempSync(join(ROOT, 'node_modules', '.cache', 'pdf-without-canvas-'));
    try {
      await build({
        stdin: { contents: READ_INVOICE, resolveDir: ROOT, loader: 'ts' },
        bundle: true, platform: 'node', format: 'esm', target: 'node22', packages: 'external',
        outfile: join(dir, 'read-invoice.mjs'), logLevel: 'silent',
      });
      writeFileSync(join(dir, 'refuse-canvas.mjs'), REFUSE_CANVAS);
      const child = spawnSync(process.execPath, ['--import', join(dir, 'refuse-canvas.mjs'), join(dir, 'read-invoice.mjs')], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
      expect(child.stderr).toBe('');
      expect(child.status).toBe(0);
      const answer = JSON.parse(child.stdout) as { text: string; fields: unknown; domMatrix: string; canvasRefusals: number };
      expect(answer.canvasRefusals).toBeGreaterThan(0);
      expect(answer.domMatrix).toBe('function');

      const text = await pdfText(await labelledInvoice());
      expect(text).toContain('PS-8841');
      expect(answer.text).toBe(text);
      expect(answer.fields).toEqual(extractFields(text!));
      expect(answer.fields).toMatchObject({ invoice_number: 'PS-8841', total: 1350, due_date: '2026-03-31' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
