// Bill upload (OCR) end to end: three differently laid out text PDFs really read, vendor matching by
// email or name (or a vendor created with origin ocr), images and text-less PDFs with warnings,
// byte-signature and base64 checks, the 10 MB limit, and the signed document link.
import { beforeEach, describe, expect, it } from '@jest/globals';
import { imageOnlyPdf, labelledInvoice, letterheadInvoice, scannedJpeg, scannedPng, textPdf, wordyInvoice } from './fixtures/ocr/invoices.js';
import { Payables } from './payables-helpers.js';

let p: Payables;

beforeEach(async () => {
  p = await Payables.start();
});

const upload = (bytes: Buffer, content_type: string, filename = 'invoice.pdf') =>
  p.api.post('/bills/upload', { content: bytes.toString('base64'), content_type, filename });

interface Expected {
  invoice_number: string; issue_date: string; due_date: string; total: number; vendor_email: string; vendor_name: string; description: string;
  line_items: Array<{ name: string; description: string | null; quantity: number; unit_price: number; total: number }>;
}

const LAYOUTS: Array<[string, () => Promise<Buffer>, Expected]> = [
  ['labelled', labelledInvoice, {
    invoice_number: 'PS-8841', issue_date: '2026-03-01', due_date: '2026-03-31', total: 1350, vendor_email: 'ar@papersupply.test', vendor_name: 'Paper Supply Co', description: 'March office supplies',
    line_items: [
      { name: 'A4 paper', description: '10 boxes', quantity: 10, unit_price: 125.05, total: 1250.5 },
      { name: 'Toner', description: null, quantity: 2, unit_price: 49.75, total: 99.5 },
    ],
  }],
  ['letterhead', letterheadInvoice, {
    invoice_number: 'NW-2026-0042', issue_date: '2026-03-05', due_date: '2026-04-04', total: 174, vendor_email: 'billing@northwind.test', vendor_name: 'Northwind Traders', description: 'Espresso beans',
    line_items: [
      { name: 'Espresso beans', description: null, quantity: 3, unit_price: 18, total: 54 },
      { name: 'Grinder service', description: null, quantity: 1, unit_price: 120, total: 120 },
    ],
  }],
  ['wordy', wordyInvoice, {
    invoice_number: 'CC/7781', issue_date: '2026-03-05', due_date: '2026-03-20', total: 580, vendor_email: 'accounts@contoso-cleaning.test', vendor_name: 'Contoso Cleaning Ltd', description: 'Office cleaning, February',
    line_items: [
      { name: 'Deep clean', description: 'open plan office', quantity: 12, unit_price: 35, total: 420 },
      { name: 'Window cleaning', description: null, quantity: 4, unit_price: 40, total: 160 },
    ],
  }],
];

describe('bill upload from text PDFs', () => {
  it.each(LAYOUTS)('reads the %s layout and creates a draft ocr bill with a new ocr vendor', async (_name, make, expected) => {
    const res = await upload(await make(), 'application/pdf', 'March invoice.pdf');
    expect(res.status).toBe(201);
    expect(res.body.extracted_data).toEqual(expected);
    expect(res.body.bill_number).toBe(expected.invoice_number);
    expect(res.body.warnings).toEqual([expect.stringContaining('a vendor was created with origin ocr')]);
    expect(res.body.document_path).toBe(`bills/${res.body.bill_id}/March_invoice.pdf`);
    const bill = (await p.api.get(`/bills/${res.body.bill_id}`)).body;
    expect(bill).toMatchObject({ source: 'ocr', status: 'draft', number: expected.invoice_number, amount: expected.total, issue_date: expected.issue_date, due_date: expected.due_date, description: expected.description });
    expect(bill.line_items.map((l: Record<string, unknown>) => [l.sequence, l.name, l.quantity, l.unit_price, l.total])).toEqual(expected.line_items.map((l, i) => [i + 1, l.name, l.quantity, l.unit_price, l.total]));
    const vendor = (await p.api.get(`/vendors/${bill.vendor_id}`)).body;
    expect(vendor).toMatchObject({ name: expected.vendor_name, email: expected.vendor_email, origin: 'ocr', is_active: true });
    expect((await p.api.get('/bills?source=ocr')).body.data).toHaveLength(1);
  });

  it('matches an existing vendor by email first, then by name (case-insensitive), creating none', async () => {
    const byEmail = (await p.api.post('/vendors', { name: 'PaperCo (billing)', email: 'AR@papersupply.test' })).body;
    const byName = (await p.api.post('/vendors', { name: 'northwind traders' })).body;
    const first = await upload(await labelledInvoice(), 'application/pdf');
    const second = await upload(await letterheadInvoice(), 'application/pdf');
    expect(first.body.warnings).toEqual([]);
    expect(second.body.warnings).toEqual([]);
    expect((await p.api.get(`/bills/${first.body.bill_id}`)).body.vendor_id).toBe(byEmail.id);
    expect((await p.api.get(`/bills/${second.body.bill_id}`)).body.vendor_id).toBe(byName.id);
    expect((await p.api.get('/vendors')).body.data).toHaveLength(2);
    // The same document again finds the vendor the first upload created.
    await upload(await wordyInvoice(), 'application/pdf').expect(201);
    const again = await upload(await wordyInvoice(), 'application/pdf');
    expect(again.body.warnings).toEqual([]);
    expect((await p.api.get('/vendors?origin=ocr')).body.data).toHaveLength(1);
  });
});

describe('documents the sandbox cannot read', () => {
  it.each([
    ['PNG', scannedPng, 'image/png', 'scan.png'],
    ['JPEG', scannedJpeg, 'image/jpeg', 'scan.jpg'],
  ])('a %s gives a draft bill with warnings, amount 0 and the "Unknown vendor"', async (_n, bytes, type, filename) => {
    const res = await upload(bytes(), type, filename);
    expect(res.status).toBe(201);
    expect(res.body.extracted_data).toEqual({ description: null, due_date: null, invoice_number: null, issue_date: null, total: null, vendor_email: null, vendor_name: null, line_items: [] });
    expect(res.body.warnings).toEqual([
      expect.stringContaining('does not read text from images'),
      expect.stringContaining('No vendor could be read'),
      expect.stringContaining('amount is 0'),
    ]);
    const bill = (await p.api.get(`/bills/${res.body.bill_id}`)).body;
    expect(bill).toMatchObject({ source: 'ocr', status: 'draft', amount: 0, number: null });
    expect((await p.api.get(`/vendors/${bill.vendor_id}`)).body).toMatchObject({ name: 'Unknown vendor', origin: 'ocr' });
    const second = await upload(bytes(), type, filename);
    expect((await p.api.get(`/bills/${second.body.bill_id}`)).body.vendor_id).toBe(bill.vendor_id);
    const doc = await p.api.get(`/bills/${res.body.bill_id}/document`);
    expect(doc.body).toMatchObject({ filename, mime_type: type });
  });

  it.each([
    ['a PDF with no text layer', imageOnlyPdf],
    ['a damaged PDF', async () => Buffer.from('%PDF-1.7\n%this file is cut short\n1 0 obj <<')],
  ])('%s gives warnings and an empty extraction', async (_n, make) => {
    const res = await upload(await make(), 'application/pdf');
    expect(res.status).toBe(201);
    expect(res.body.warnings[0]).toContain('no readable text layer');
    expect(res.body.extracted_data.invoice_number).toBeNull();
  });

  it('does not read a heading over a name starting with "No" as an invoice number, and warns about what it drops', async () => {
    const res = await upload(await textPdf(['INVOICE', 'Nova Plumbing', 'billing@nova-plumbing.test', 'Issue date: 2026-03-10', 'Due date: 2026-03-01', 'Total: 0.00']), 'application/pdf');
    expect(res.status).toBe(201);
    expect(res.body.extracted_data).toMatchObject({ invoice_number: null, issue_date: '2026-03-10', due_date: '2026-03-01', total: 0 });
    expect(res.body.warnings).toEqual(expect.arrayContaining([
      'Could not read the invoice number.',
      'Could not read the description.',
      'The due date read (2026-03-01) is before the issue date (2026-03-10); the bill has no due date.',
      'The total read is 0; the bill amount is 0 until it is set with PATCH /bills/{id}.',
    ]));
    expect((await p.api.get(`/bills/${res.body.bill_id}`)).body).toMatchObject({ number: null, due_date: null, issue_date: '2026-03-10', amount: 0 });
  });

  it('warns about each field a text PDF does not carry', async () => {
    const res = await upload(await textPdf(['Receipt from the corner shop. Thank you!']), 'application/pdf');
    expect(res.body.warnings).toEqual(expect.arrayContaining([
      'Could not read the invoice number.', 'Could not read the issue date.', 'Could not read the due date.', 'Could not read the total.',
      'Could not read the vendor name.', 'Could not read the vendor email.', 'Could not read the description.', 'Could not read any line items.',
    ]));
  });
});

describe('upload refusals', () => {
  it.each([
    ['PNG bytes declared as a PDF', 'content', () => ({ content: scannedPng().toString('base64'), content_type: 'application/pdf', filename: 'x.pdf' })],
    ['PDF bytes declared as a JPEG', 'content', () => ({ content: Buffer.from('%PDF-1.4\n').toString('base64'), content_type: 'image/jpeg', filename: 'x.jpg' })],
    ['JPEG bytes declared as a PNG', 'content', () => ({ content: scannedJpeg().toString('base64'), content_type: 'image/png', filename: 'x.png' })],
    ['content that is not base64', 'content', () => ({ content: 'not base64!!', content_type: 'application/pdf', filename: 'x.pdf' })],
    ['an unsupported content_type', 'content_type', () => ({ content: 'JVBERi0=', content_type: 'image/gif', filename: 'x.gif' })],
    ['a missing filename', 'filename', () => ({ content: 'JVBERi0=', content_type: 'application/pdf' })],
  ])('refuses %s with 400 naming %s and creates nothing', async (_n, field, body) => {
    const res = await p.api.post('/bills/upload', body());
    expect(res.status).toBe(400);
    expect(res.body.validation_errors).toHaveProperty([field]);
    expect((await p.api.get('/bills?include_deleted=true')).body.data).toEqual([]);
    expect((await p.api.get('/vendors')).body.data).toEqual([]);
  });

  it('accepts base64 wrapped in lines (MIME style) and refuses misplaced padding', async () => {
    const wrapped = (await labelledInvoice()).toString('base64').replace(/.{76}/g, '$&\r\n');
    const ok = await p.api.post('/bills/upload', { content: wrapped, content_type: 'application/pdf', filename: 'w.pdf' });
    expect(ok.status).toBe(201);
    expect(ok.body.extracted_data.invoice_number).toBe('PS-8841');
    const bad = await p.api.post('/bills/upload', { content: 'JVBE=i0x', content_type: 'application/pdf', filename: 'x.pdf' });
    expect(bad.status).toBe(400);
    expect(bad.body.validation_errors).toHaveProperty('content');
  });

  it('refuses a document over 10 MB with 413', async () => {
    const big = Buffer.alloc(10 * 1024 * 1024 + 1, 0x20);
    big.write('%PDF-1.4\n');
    const logged: unknown[] = [];
    const log = p.sb.deps.log as unknown as { error: (...args: unknown[]) => void };
    const original = log.error;
    log.error = (...args: unknown[]) => { logged.push(args.map((a) => (a as { err?: Error })?.err?.stack ?? a)); };
    const res = await upload(big, 'application/pdf');
    log.error = original;
    expect([res.status, res.body, logged]).toEqual([413, expect.objectContaining({ code: 'payload_too_large' }), []]);
    expect((await p.api.get('/bills')).body.data).toEqual([]);
  });
});

describe('the bill document link', () => {
  it('serves the uploaded bytes through a signed link that expires after an hour', async () => {
    const bytes = await labelledInvoice();
    const { body } = await upload(bytes, 'application/pdf', 'inv 01.pdf');
    const doc = await p.api.get(`/bills/${body.bill_id}/document`);
    expect(doc.status).toBe(200);
    expect(doc.body).toMatchObject({ filename: 'inv 01.pdf', mime_type: 'application/pdf' });
    const url = new URL(doc.body.download_url);
    expect(url.pathname).toBe(`/hosted/files/bills/${body.bill_id}/inv_01.pdf`);
    const file = await p.sb.http.get(url.pathname + url.search).buffer(true).parse((res, cb) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => cb(null, Buffer.concat(parts)));
    });
    expect(file.status).toBe(200);
    expect(file.headers['content-type']).toBe('application/pdf');
    expect(Buffer.compare(file.body as Buffer, bytes)).toBe(0);
    const tampered = url.search.replace(/sig=[^&]+/, 'sig=AAAA');
    expect((await p.sb.http.get(url.pathname + tampered)).status).toBe(403);
    const otherBill = url.pathname.replace(body.bill_id, 'bill_other');
    expect((await p.sb.http.get(otherBill + url.search)).status).toBe(403);
    await p.advance(3601);
    expect((await p.sb.http.get(url.pathname + url.search)).status).toBe(403);
    const fresh = new URL((await p.api.get(`/bills/${body.bill_id}/document`)).body.download_url);
    expect((await p.sb.http.get(fresh.pathname + fresh.search)).status).toBe(200);
  });

  it('answers 404 for a bill without a document and for unknown bills', async () => {
    const v = await p.vendor();
    const bill = await p.bill(v.id);
    expect((await p.api.get(`/bills/${bill.id}/document`)).status).toBe(404);
    expect((await p.api.get('/bills/bill_nope/document')).status).toBe(404);
  });
});

describe('what a document says is held to the documented lengths', () => {
  it('clips an endless vendor line and description, and keeps at most 100 line items', async () => {
    const { extractFields } = await import('../src/ocr/ocr.js');
    const { LIMITS } = await import('../src/limits.js');
    const lines = [
      `Vendor: ${'Acme '.repeat(200)}`,
      `Description: ${'supplies '.repeat(1000)}`,
      ...Array.from({ length: 150 }, (_, i) => `Item ${i} 1 x $2.00 $2.00`),
    ];
    const found = extractFields(lines.join('\n'));
    expect(found.vendor_name?.length).toBe(LIMITS.nameChars);
    expect(found.description?.length).toBe(LIMITS.textChars);
    expect(found.line_items.length).toBeLessThanOrEqual(LIMITS.lineItems);
    expect(found.line_items.length).toBeGreaterThan(0);
  });
});

describe('the finer rules of an upload', () => {
  it('files the document under a name safe in a URL: runs of other characters become one _, no leading dots, the last 100 characters, else "document"', async () => {
    const pdf = await textPdf(['INVOICE', 'Total: 10.00']);
    const path = async (filename: string) => (await upload(pdf, 'application/pdf', filename)).body.document_path.split('/').pop();
    expect(await path('..  My  invoice (final)!!.pdf')).toBe('My_invoice_final_.pdf');
    expect(await path('C:\\scans\\march.pdf')).toBe('march.pdf');
    expect(await path(`${'a'.repeat(150)}.pdf`)).toBe(`${'a'.repeat(96)}.pdf`);
    expect(await path('???')).toBe('document');
  });

  it('keeps a due date equal to the issue date, and gives a negative total an amount of 0 with a warning', async () => {
    const res = await upload(await textPdf(['INVOICE', 'Acme Parts', 'Issue date: 2026-03-10', 'Due date: 2026-03-10', 'Total: -50.00']), 'application/pdf');
    expect(res.status).toBe(201);
    const bill = (await p.api.get(`/bills/${res.body.bill_id}`)).body;
    expect(bill).toMatchObject({ issue_date: '2026-03-10', due_date: '2026-03-10', amount: 0 });
    expect(res.body.warnings).toContain(`The total read is ${res.body.extracted_data.total}; the bill amount is 0 until it is set with PATCH /bills/{id}.`);
    expect(res.body.extracted_data.total).toBeLessThan(0);
  });

  it('serves the document inline under its safe name, never cached', async () => {
    const { body } = await upload(await labelledInvoice(), 'application/pdf', 'inv 01.pdf');
    const url = new URL((await p.api.get(`/bills/${body.bill_id}/document`)).body.download_url);
    const file = await p.sb.http.get(url.pathname + url.search);
    expect(file.headers['content-disposition']).toBe('inline; filename="inv_01.pdf"');
    expect(file.headers['cache-control']).toBe('private, no-store');
  });
});

describe('a signed document link that outlived its bill', () => {
  it('answers 404 "No such document." once the account was reset, and when a new bill of the reset account has the same id', async () => {
    const first = (await upload(await labelledInvoice(), 'application/pdf', 'first.pdf')).body;
    const link = new URL((await p.api.get(`/bills/${first.bill_id}/document`)).body.download_url);
    await p.sb.http.post('/_sandbox/reset').set('Authorization', `Bearer ${await p.sb.token()}`).expect(200);
    const gone = await p.sb.http.get(link.pathname + link.search);
    expect(gone.status).toBe(404);
    expect(gone.body.message).toBe('No such document.');
    const again = (await upload(await labelledInvoice(), 'application/pdf', 'second.pdf')).body;
    // Ids are drawn from the seed, so the reset account hands out the same one: the old link names another file.
    expect(again.bill_id).toBe(first.bill_id);
    const other = await p.sb.http.get(link.pathname + link.search);
    expect([other.status, other.body.message]).toEqual([404, 'No such document.']);
  });
});
