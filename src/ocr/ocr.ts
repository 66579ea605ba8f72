// Owns reading bill documents: base64 decoding, the size limit, byte-signature checks for PDF, PNG
// and JPEG, the text layer of PDFs (pdf-parse), and the documented patterns that pull invoice fields
// out of that text. The sandbox reads no pixels: images and PDFs without text come back with warnings.
import { isCalendarDate } from '../domain/dates.js';
import { withArticle } from '../article.js';
import { ApiError, Errors, invalidFields } from '../errors.js';
import { LIMITS } from '../limits.js';
import { importPackage } from '../packages.js';

/** Sandbox choice: decoded documents above 10 MB are refused with 413 (the same limit as invoice PDFs). */
export const MAX_DOCUMENT_BYTES = LIMITS.billDocumentBytes;

export type DocumentType = 'application/pdf' | 'image/png' | 'image/jpeg';

const SIGNATURES: Record<DocumentType, { bytes: number[]; name: string }> = {
  'application/pdf': { bytes: [...Buffer.from('%PDF-')], name: 'PDF (%PDF-)' },
  'image/png': { bytes: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], name: 'PNG' },
  'image/jpeg': { bytes: [0xff, 0xd8, 0xff], name: 'JPEG (FF D8 FF)' },
};

/**
 * Standard base64 (RFC 4648) with `=` padding only at the end. A plain loop, not a regular
 * expression: on a 14 MB string V8's regexp interpreter can run out of backtrack stack. That is why
 * this is not ajv-formats' `byte` format: its regular expression throws "Maximum call stack size
 * exceeded" on a 10 MB document in base64 (checked with ajv-formats 3.0), the size the spec allows.
 */
function base64Padding(text: string): number | null {
  if (!text.length || text.length % 4 !== 0) return null;
  let padding = 0;
  if (text.charCodeAt(text.length - 1) === 61) padding = text.charCodeAt(text.length - 2) === 61 ? 2 : 1;
  for (let i = 0; i < text.length - padding; i++) {
    const c = text.charCodeAt(i);
    const ok = (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 43 || c === 47;
    if (!ok) return null;
  }
  return padding;
}

/** Strict standard base64, whitespace (line breaks) tolerated; then the size limit and the signature. */
export function decodeDocument(content: string, contentType: DocumentType): Buffer {
  const compact = content.includes('\n') || content.includes('\r') || content.includes(' ') || content.includes('\t') ? content.replace(/[\s]/g, '') : content;
  const padding = base64Padding(compact);
  if (padding === null) throw invalidFields({ content: 'must be standard base64 (RFC 4648)' });
  // Checked before decoding so an oversized body never becomes a second large buffer.
  if ((compact.length / 4) * 3 - padding > MAX_DOCUMENT_BYTES) {
    throw new ApiError(Errors.payloadTooLarge, { message: `The document is larger than ${MAX_DOCUMENT_BYTES / 1024 / 1024} MB.`, validation_errors: { content: 'is larger than 10 MB decoded' } });
  }
  const bytes = Buffer.from(compact, 'base64');
  const signature = SIGNATURES[contentType];
  if (!signature.bytes.every((b, i) => bytes[i] === b)) {
    throw invalidFields({ content: `is not ${withArticle(signature.name)} document although content_type is ${contentType}` });
  }
  return bytes;
}

/**
 * pdf.js's warnings at load about what only rendering uses: the native canvas package (which the
 * container image leaves out, 30 MB) and the ImageData and Path2D it would have supplied. The
 * sandbox reads text and never renders, so these say nothing to its user; any other warning passes.
 */
const RENDERING_ONLY_WARNING = /^Warning: Cannot (load "@napi-rs\/canvas" package|polyfill `(ImageData|Path2D)`)/;

let pdfParse: Promise<typeof import('pdf-parse')> | undefined;

/**
 * pdf-parse, loaded on first use: it brings pdf.js, which costs start-up time and memory no other
 * request needs. pdf.js builds a DOMMatrix while it loads (for rendering) and takes it from
 * globalThis, else from the native canvas package; Node has none, so a maintained pure-JavaScript
 * DOMMatrix (@thednp/dommatrix) is defined first, and text is read the same with or without the canvas.
 */
function loadPdfParse(): Promise<typeof import('pdf-parse')> {
  pdfParse ??= (async () => {
    const scope = globalThis as { DOMMatrix?: unknown };
    scope.DOMMatrix ??= (await import('@thednp/dommatrix')).default;
    const warn = console.warn;
    console.warn = (...args: unknown[]) => {
      if (!RENDERING_ONLY_WARNING.test(String(args[0]))) warn(...args);
    };
    try {
      return await importPackage('pdf-parse');
    } finally {
      console.warn = warn;
    }
  })().catch((error: unknown) => {
    pdfParse = undefined; // the next document tries again
    throw error;
  });
  return pdfParse;
}

/** The PDF's text layer, or null when it has none or cannot be parsed. */
export async function pdfText(bytes: Buffer): Promise<string | null> {
  const { PDFParse } = await loadPdfParse();
  const parser = new PDFParse({ data: new Uint8Array(bytes) });
  try {
    const result = await parser.getText();
    const text = result.text.replace(/^-- \d+ of \d+ --$/gm, '').trim();
    return text.length ? text : null;
  } catch {
    return null;
  } finally {
    await parser.destroy().catch(() => undefined);
  }
}

export interface ExtractedLineItem {
  name: string | null;
  description: string | null;
  quantity: number | null;
  unit_price: number | null;
  total: number | null;
}

export interface ExtractedData {
  description: string | null;
  due_date: string | null;
  invoice_number: string | null;
  issue_date: string | null;
  total: number | null;
  vendor_email: string | null;
  vendor_name: string | null;
  line_items: ExtractedLineItem[];
}

export const EMPTY_EXTRACTION: ExtractedData = {
  description: null, due_date: null, invoice_number: null, issue_date: null, total: null, vendor_email: null, vendor_name: null, line_items: [],
};

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];
const DATE = String.raw`(\d{4}-\d{2}-\d{2}|\d{1,2}\/\d{1,2}\/\d{4}|[A-Za-z]{3,9}\.? \d{1,2},? \d{4}|\d{1,2} [A-Za-z]{3,9}\.? \d{4})`;
const MONEY = String.raw`(?:USD|US\$|\$)?\s*(-?[0-9][0-9,]*(?:\.[0-9]{1,2})?)`;

/**
 * The documented patterns (docs/api-coverage.md "Bill upload"): labels are matched case-insensitively at the
 * start of a line or after a run of spaces, so two-column layouts read as well as stacked ones.
 */
const PATTERNS = {
  // Label and number on one line ([ \t], not \s), and "no"/"num" as whole words: otherwise a heading
  // "INVOICE" over "Northwind Traders" would read as invoice number "rthwind".
  invoiceNumber: /\b(?:invoice|bill)[ \t]*(?:number|no(?![a-z])\.?|num(?![a-z])\.?|#)[ \t]*[:#]?[ \t]*#?[ \t]*([A-Z0-9][A-Z0-9\-/.]*[A-Z0-9])/i,
  issueDate: new RegExp(String.raw`(?:invoice date|issue date|date of issue|issued(?: on)?|bill date|date)\s*:?\s*${DATE}`, 'i'),
  dueDate: new RegExp(String.raw`(?:due date|payment due|due by|due on|due)\s*:?\s*${DATE}`, 'i'),
  total: [
    new RegExp(String.raw`(?:amount due|total due|balance due|grand total|invoice total)\s*:?\s*${MONEY}`, 'i'),
    new RegExp(String.raw`(?:^|\s)total\s*(?:\(USD\))?\s*:?\s*${MONEY}`, 'im'),
  ],
  vendorLabel: /^(?:vendor|from|supplier|seller|remit to|bill from|issued by)\s*:\s*(.+)$/im,
  email: /[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/,
  description: /^(?:description|memo|subject|re|for)\s*:\s*(.+)$/im,
  // name, quantity, unit price, line total: "A4 paper 10 125.05 1250.50" (prices may carry $ and commas)
  lineNameFirst: /^(.+?)\s+(\d+(?:\.\d+)?)\s*(?:x\s+)?\$?([0-9][0-9,]*\.\d{2})\s+\$?([0-9][0-9,]*\.\d{2})$/,
  // quantity first: "10 x A4 paper @ 125.05 = 1250.50" or "10 A4 paper 125.05 1250.50"
  lineQuantityFirst: /^(\d+(?:\.\d+)?)\s*x?\s+(.+?)\s+@?\s*\$?([0-9][0-9,]*\.\d{2})\s+=?\s*\$?([0-9][0-9,]*\.\d{2})$/,
};

const HEADINGS = /^(?:tax\s+)?(?:invoice|bill|receipt|statement)\b/i;

function parseDate(text: string): string | null {
  const t = text.trim().replace(/\./g, '');
  let m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(t);
  if (m) return valid(+m[1], +m[2], +m[3]);
  m = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/.exec(t);
  if (m) return valid(+m[3], +m[1], +m[2]); // US order: MM/DD/YYYY
  m = /^([A-Za-z]{3,9}) (\d{1,2}),? (\d{4})$/.exec(t);
  if (m) return valid(+m[3], month(m[1]), +m[2]);
  m = /^(\d{1,2}) ([A-Za-z]{3,9}) (\d{4})$/.exec(t);
  if (m) return valid(+m[3], month(m[2]), +m[1]);
  return null;
}

function month(name: string): number {
  const lower = name.toLowerCase();
  return MONTHS.findIndex((m) => lower.length >= 3 && m.startsWith(lower)) + 1;
}

function valid(y: number, m: number, d: number): string | null {
  const iso = `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
  return isCalendarDate(iso) ? iso : null;
}

const money = (s: string) => Number(s.replace(/,/g, ''));

/** Pull invoice fields out of a document's text with PATTERNS. */
export function extractFields(text: string): ExtractedData {
  const lines = text.split(/\r?\n/).map((l) => l.replace(/[\t ]+/g, ' ').trim()).filter(Boolean);
  const joined = lines.join('\n');
  // Dates: the due date first, so "Due date: ..." is not read as the issue date's "date".
  const dueMatch = PATTERNS.dueDate.exec(joined);
  const withoutDue = dueMatch ? joined.replace(dueMatch[0], ' ') : joined;
  const issueMatch = PATTERNS.issueDate.exec(withoutDue);
  let total: number | null = null;
  for (const pattern of PATTERNS.total) {
    const found = [...joined.matchAll(new RegExp(pattern.source, pattern.flags.includes('g') ? pattern.flags : `${pattern.flags}g`))];
    if (found.length) {
      total = money(found[found.length - 1][1]);
      break;
    }
  }
  const line_items = extractLineItems(lines).slice(0, LIMITS.lineItems);
  const labelled = PATTERNS.vendorLabel.exec(joined)?.[1]?.trim() ?? null;
  const vendor_name = labelled ? labelled.replace(PATTERNS.email, '').replace(/[,;|]\s*$/, '').trim() || null : firstNameLine(lines);
  const email = PATTERNS.email.exec(joined)?.[0].toLowerCase() ?? null;
  // What a document says is clipped to the documented lengths, as a request's fields would be refused.
  return {
    invoice_number: clip(PATTERNS.invoiceNumber.exec(joined)?.[1] ?? null, LIMITS.nameChars),
    issue_date: issueMatch ? parseDate(issueMatch[1]) : null,
    due_date: dueMatch ? parseDate(dueMatch[1]) : null,
    total,
    vendor_email: email && email.length <= LIMITS.emailChars ? email : null,
    vendor_name: clip(vendor_name, LIMITS.nameChars),
    description: clip(PATTERNS.description.exec(joined)?.[1]?.trim() ?? line_items[0]?.name ?? null, LIMITS.textChars),
    line_items,
  };
}

function clip(value: string | null, chars: number): string | null {
  return value === null ? null : value.slice(0, chars);
}

/** The first line that reads like a company name: letters, no label, no digits, not a heading. */
function firstNameLine(lines: string[]): string | null {
  for (const line of lines.slice(0, 8)) {
    if (HEADINGS.test(line) || line.includes(':') || /\d/.test(line) || PATTERNS.email.test(line)) continue;
    if (/[A-Za-z]{2,}/.test(line)) return line;
  }
  return null;
}

function extractLineItems(lines: string[]): ExtractedLineItem[] {
  const items: ExtractedLineItem[] = [];
  for (const line of lines) {
    if (/\b(?:sub)?total\b|amount due|balance due/i.test(line)) continue;
    let name: string;
    let quantity: number;
    let unit: number;
    let total: number;
    const first = PATTERNS.lineNameFirst.exec(line);
    const qtyFirst = first ? null : PATTERNS.lineQuantityFirst.exec(line);
    if (first) [name, quantity, unit, total] = [first[1], Number(first[2]), money(first[3]), money(first[4])];
    else if (qtyFirst) [quantity, name, unit, total] = [Number(qtyFirst[1]), qtyFirst[2], money(qtyFirst[3]), money(qtyFirst[4])];
    else continue;
    // Only rows whose arithmetic holds are line items (quantity x unit price = total, to the cent).
    if (Math.abs(quantity * unit - total) > 0.011) continue;
    // A hyphen or an en dash (escaped: see scripts/bundle-cli.mjs on why the bundle stays ASCII).
    const [itemName, ...rest] = name.split(/\s+[-\u2013]\s+/);
    items.push({ name: clip(itemName.trim(), LIMITS.nameChars), description: clip(rest.length ? rest.join(' - ').trim() : null, LIMITS.textChars), quantity, unit_price: unit, total });
  }
  return items;
}
