// Owns the PDF the sandbox renders for an invoice that has no uploaded PDF: number, customer, line
// items, totals, due date and status, drawn with pdfkit.
import type { Invoice } from '../domain/invoices/invoices.js';
import { money } from '../domain/payments/money.js';
import { importPackage } from '../packages.js';

export interface RenderParty {
  name: string | null;
  email: string | null;
}

export async function renderInvoicePdf(invoice: Invoice, customer: RenderParty, partnerName: string): Promise<Buffer> {
  // Loaded on first use: pdfkit (and its fonts) is not needed to start or to answer anything else.
  const { default: PDFDocument } = await importPackage('pdfkit');
  return new Promise((resolve, reject) => {
    // Fixed dates keep the bytes of a rendering stable for the same invoice.
    const doc = new PDFDocument({ size: 'LETTER', margin: 56, info: { Title: `Invoice ${invoice.invoice_number}`, Author: partnerName, CreationDate: new Date(invoice.created_at) } });
    const chunks: Buffer[] = [];
    doc.on('data', (chunk: Buffer) => chunks.push(chunk));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);

    doc.fontSize(22).text(`Invoice ${invoice.invoice_number}`);
    doc.moveDown(0.5).fontSize(11).fillColor('#555').text(`From: ${partnerName}`);
    doc.text(`Bill to: ${customer.name ?? invoice.customer_id}${customer.email ? ` <${customer.email}>` : ''}`);
    doc.text(`Issued: ${invoice.created_at.slice(0, 10)}    Due: ${invoice.due_date}    Status: ${invoice.status}`);
    doc.moveDown().fillColor('#000').fontSize(12);
    const top = doc.y;
    const columns = [56, 320, 390, 470];
    ['Description', 'Qty', 'Unit', 'Amount'].forEach((h, i) => doc.font('Helvetica-Bold').text(h, columns[i], top));
    doc.font('Helvetica');
    let y = top + 20;
    for (const line of invoice.line_items) {
      doc.text(line.description ?? '-', columns[0], y, { width: 250 });
      doc.text(String(line.quantity), columns[1], y);
      doc.text(money(line.amount), columns[2], y);
      doc.text(money(line.total), columns[3], y);
      y = Math.max(doc.y, y + 18) + 4;
    }
    doc.moveTo(56, y).lineTo(556, y).stroke();
    doc.text(`Subtotal: ${money(invoice.sub_total)}`, columns[2], y + 10);
    doc.font('Helvetica-Bold').text(`Total: ${money(invoice.total)} ${invoice.currency}`, columns[2], y + 28);
    if (invoice.memo) doc.font('Helvetica').text(`Memo: ${invoice.memo}`, 56, y + 60);
    doc.end();
  });
}
