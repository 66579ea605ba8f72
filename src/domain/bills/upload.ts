// Owns bill upload: the document is checked and stored, its text read (src/ocr), its vendor matched
// by email or name (or created with origin ocr), and a draft bill with source ocr created from it.
import type { Deps } from '../../deps.js';
import type { Account } from '../../store/store.js';
import type { BlobReservation } from '../../store/blobs.js';
import { decodeDocument, EMPTY_EXTRACTION, extractFields, pdfText, type DocumentType, type ExtractedData } from '../../ocr/ocr.js';
import { createVendor, findVendorByEmailOrName } from '../vendors/vendors.js';
import { bills, createBill, type Actor, type Bill } from './bills.js';

/** Sandbox choice: the vendor of a bill whose document names none (bills always have a vendor). */
export const UNKNOWN_VENDOR_NAME = 'Unknown vendor';

export interface UploadInput {
  content: string;
  content_type: DocumentType;
  filename: string;
}

const FIELD_LABELS: Array<[keyof ExtractedData, string]> = [
  ['invoice_number', 'invoice number'],
  ['issue_date', 'issue date'],
  ['due_date', 'due date'],
  ['total', 'total'],
  ['vendor_name', 'vendor name'],
  ['vendor_email', 'vendor email'],
  ['description', 'description'],
];

/** A name safe in a URL path segment, keeping the extension. */
function safeFilename(filename: string): string {
  const base = filename.split(/[\\/]/).pop() ?? '';
  return base.replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^[._]+/, '').slice(-100) || 'document';
}

export async function uploadBill(deps: Deps, account: Account, input: UploadInput, actor: Actor) {
  const bytes = decodeDocument(input.content, input.content_type);
  // Room for the document is claimed first: an account at its cap gets 422 before anything is created.
  const room = deps.blobs.reserve(account, bytes.length);
  try {
    return await readAndFile(deps, account, input, actor, bytes, room);
  } finally {
    room.cancel(); // a no-op once written
  }
}

async function readAndFile(deps: Deps, account: Account, input: UploadInput, actor: Actor, bytes: Buffer, room: BlobReservation) {
  const warnings: string[] = [];
  let extracted: ExtractedData = { ...EMPTY_EXTRACTION, line_items: [] };
  if (input.content_type === 'application/pdf') {
    const text = await pdfText(bytes);
    if (text) extracted = extractFields(text);
    else warnings.push('The PDF has no readable text layer (a scan or an unreadable file); no fields were extracted.');
  } else {
    warnings.push(`The sandbox does not read text from images (${input.content_type}); no fields were extracted.`);
  }
  if (!warnings.length) {
    for (const [field, label] of FIELD_LABELS) if (extracted[field] === null) warnings.push(`Could not read the ${label}.`);
    if (!extracted.line_items.length) warnings.push('Could not read any line items.');
  }

  // Each step after an await is its own unit of work on the account as it was when the upload began:
  // the document's id, then its bytes (no unit: a file), then the vendor, the bill and the document's
  // size in one unit, so a bill is never seen without its document, and a failure files nothing.
  const blobId = account.transaction(() => account.newId('doc'));
  await room.write(blobId, bytes);
  return deps.blobs.fileOrRelease(account, blobId, () => account.transaction(() => {
    room.keep(blobId, bytes.length);
    return fileBill(deps, account, input, actor, extracted, warnings, { blob_id: blobId, size: bytes.length });
  }));
}

function fileBill(deps: Deps, account: Account, input: UploadInput, actor: Actor, extracted: ExtractedData, warnings: string[], stored: { blob_id: string; size: number }) {
  let vendor = findVendorByEmailOrName(account, extracted.vendor_email, extracted.vendor_name);
  if (!vendor) {
    const name = extracted.vendor_name ?? extracted.vendor_email ?? UNKNOWN_VENDOR_NAME;
    vendor = findVendorByEmailOrName(account, null, name) ?? createVendor(deps, account, { name, ...(extracted.vendor_email ? { email: extracted.vendor_email } : {}) }, { origin: 'ocr' });
    warnings.push(name === UNKNOWN_VENDOR_NAME
      ? `No vendor could be read; the bill was given to the vendor "${UNKNOWN_VENDOR_NAME}" (${vendor.id}).`
      : `Vendor not matched; a vendor was created with origin ocr (${vendor.id}).`);
  }
  if (extracted.total === null) warnings.push('The bill amount is 0 until it is set with PATCH /bills/{id}.');
  else if (!(extracted.total > 0)) warnings.push(`The total read is ${extracted.total}; the bill amount is 0 until it is set with PATCH /bills/{id}.`);

  const issue = extracted.issue_date;
  const due = extracted.due_date && (!issue || extracted.due_date >= issue) ? extracted.due_date : null;
  if (extracted.due_date && !due) warnings.push(`The due date read (${extracted.due_date}) is before the issue date (${issue}); the bill has no due date.`);
  const bill: Bill = createBill(deps, account, {
    vendor_id: vendor.id,
    amount: extracted.total !== null && extracted.total > 0 ? extracted.total : 0,
    ...(extracted.invoice_number ? { number: extracted.invoice_number } : {}),
    ...(extracted.description ? { description: extracted.description } : {}),
    ...(issue ? { issue_date: issue } : {}),
    ...(due ? { due_date: due } : {}),
    line_items: extracted.line_items,
  }, { source: 'ocr', actor, skipChecks: true });

  const path = `bills/${bill.id}/${safeFilename(input.filename)}`;
  bills(account).update(bill.id, { document: { blob_id: stored.blob_id, filename: input.filename, mime_type: input.content_type, path, size: stored.size } });
  return { bill_id: bill.id, bill_number: bill.number, document_path: path, warnings, extracted_data: extracted };
}
