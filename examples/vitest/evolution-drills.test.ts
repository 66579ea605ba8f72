// Example (quoted in docs/evolution-drills.md): a partner's client proved tolerant of what the API may
// add without a version change, under the shipped api-evolution scenario. Checks follow the quoted part.
import { expect, test } from 'vitest';

// #region drills
import { startSandbox } from 'billing-sandbox';

// Your client's reader: fields by name, the rest ignored, a status it does not know kept as 'unknown'.
const KNOWN = ['UPCOMING', 'OVERDUE', 'RECEIVED', 'PAID', 'ARCHIVED'];
function readInvoice(json: Record<string, unknown>) {
  const status = KNOWN.includes(String(json.status)) ? String(json.status) : 'unknown';
  return { id: String(json.id), status, total: Number(json.total) };
}

// Every answer and delivery drilled (the CLI: billing-sandbox --scenario api-evolution).
const sandbox = await startSandbox({ port: 0, scenarios: ['api-evolution'] });
const token = await sandbox.token();
const call = async (path: string, body?: object) => {
  const res = await fetch(`${sandbox.url}${path}`, {
    method: body ? 'POST' : 'GET',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: body && JSON.stringify(body),
  });
  return { drill: res.headers.get('Sandbox-Drill'), json: (await res.json()) as Record<string, unknown> };
};
const customer = await call('/customers', { name: 'Acme Corp' });
const made = await call('/invoices', { customer_id: customer.json.id, line_items: [{ description: 'Consulting', amount: 1250 }] });
const read = await call(`/invoices/${String(made.json.id)}`);
read.drill;                        // 'new_enum_values, unknown_fields, reordered_fields'
const invoice = readInvoice(read.json);   // { id: 'inv_…', status: 'unknown', total: 1250 }
await sandbox.close();
// #endregion drills

test('the tolerant reader read the drilled invoice: its id and total, and an unknown status', () => {
  expect(read.drill).toBe('new_enum_values, unknown_fields, reordered_fields');
  expect(invoice).toEqual({ id: made.json.id, status: 'unknown', total: 1250 });
  expect(Object.keys(read.json).length).toBeGreaterThan(Object.keys(invoice).length);
});
