// Owns the PDF upload rules 1-7 of an invoice (exactly one of content or url; base64 PDF; a public
// HTTPS url fetched once; 10 MB; last write wins; synced invoices only; an opaque path) and the
// bytes a signed pdf-link serves: the latest upload, else a rendering of the invoice.
import type { Deps } from '../../deps.js';
import { ApiError, Errors, invalidFields } from '../../errors.js';
import { fetchPdf, isPdf, PDF_FETCH_SERVICE, PDF_MAX_BYTES, tooLarge } from '../../pdf/fetch.js';
import { renderInvoicePdf } from '../../pdf/render.js';
import type { Account } from '../../store/store.js';
import { customers } from '../customers/customers.js';
import { getInvoice, invoiceEventData, invoices, type Invoice } from './invoices.js';

export interface PdfUploadInput {
  content?: string;
  url?: string;
}

// A flat character class (no repeated groups): linear on a 14 MB string, no deep regex recursion.
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function decodeContent(content: string): Buffer {
  // Check the size before decoding, so a huge body is refused without allocating it twice.
  const padding = content.endsWith('==') ? 2 : content.endsWith('=') ? 1 : 0;
  if ((content.length / 4) * 3 - padding > PDF_MAX_BYTES) throw new ApiError(Errors.payloadTooLarge, { message: 'The PDF is larger than 10 MB.', validation_errors: { content: 'decodes to more than 10 MB' } });
  if (content.length % 4 !== 0 || !BASE64.test(content)) throw invalidFields({ content: 'must be standard base64 (RFC 4648)' });
  const bytes = Buffer.from(content, 'base64');
  if (!isPdf(bytes)) throw invalidFields({ content: 'is not a PDF (it does not begin with %PDF-)' });
  return bytes;
}

export async function uploadInvoicePdf(deps: Deps, account: Account, id: string, input: PdfUploadInput): Promise<{ path: string }> {
  const invoice = getInvoice(account, id);
  const given = (['content', 'url'] as const).filter((k) => input[k] !== undefined);
  if (given.length !== 1) {
    const why = given.length ? 'give only one of content and url' : 'give one of content and url';
    throw invalidFields({ content: why, url: why }, 'Exactly one of content and url is required.');
  }
  if (invoice.source !== 'accounting_integration') {
    throw new ApiError(Errors.unsupportedInvoice, { message: 'Only invoices synced from an accounting integration accept a PDF; this one was created with POST /invoices.' });
  }
  let bytes: Buffer;
  if (input.content !== undefined) bytes = decodeContent(input.content);
  else {
    const extra = deps.services.get(PDF_FETCH_SERVICE);
    bytes = await fetchPdf(input.url as string, { ...extra, allowPrivate: deps.config.allowPrivateUrls });
  }
  if (bytes.length > PDF_MAX_BYTES) throw tooLarge();
  const room = deps.blobs.reserve(account, bytes.length, input.content !== undefined ? 'content' : 'url');
  try {
    // Each step after an await is its own unit of work on the account as it was when the upload began.
    const blobId = account.transaction(() => account.newId('pdf'));
    await room.write(blobId, bytes);
    // Last write wins: the invoice points at the new copy only once it is stored (one unit of work with
    // its event and the document's size); the copy it replaces gives its room back in the same unit,
    // and its file goes once that is on disk.
    const { path, replaced } = await deps.blobs.fileOrRelease(account, blobId, () => account.transaction(() => {
      const current = getInvoice(account, id);
      const previous = current.pdf?.blob_id;
      const stored = `pdfs/${current.id}/${blobId}.pdf`;
      room.keep(blobId, bytes.length);
      if (previous && previous !== blobId) deps.blobs.forget(account, previous);
      invoices(account).update(current.id, { pdf: { blob_id: blobId, path: stored, size: bytes.length, uploaded_at: account.clock.iso() }, updated_at: account.clock.iso() });
      deps.events.record(account, 'invoice_updated', current.id, invoiceEventData(current));
      return { path: stored, replaced: previous };
    }));
    if (replaced && replaced !== blobId) await deps.blobs.removeWhenDurable(account, replaced);
    return { path };
  } finally {
    room.cancel(); // a no-op once kept
  }
}

export function invoicePdfPath(invoice: Pick<Invoice, 'id'>): string {
  return `/hosted/files/invoices/${invoice.id}.pdf`;
}

/** The latest uploaded PDF, or one rendered now for the invoice. */
export async function invoicePdfBytes(deps: Deps, account: Account, invoice: Invoice): Promise<Buffer> {
  if (invoice.pdf) {
    const stored = await deps.blobs.get(account, invoice.pdf.blob_id);
    if (stored) return stored;
  }
  const customer = customers(account).get(invoice.customer_id);
  const partner = deps.store.data.partners[account.partnerId];
  return renderInvoicePdf(invoice, { name: customer?.name ?? null, email: customer?.email ?? null }, partner?.name ?? 'Sandbox partner');
}
