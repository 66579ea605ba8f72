// Owns what the fuzzers know of the OpenAPI documents: every operation with its path template,
// parameters, request body schemas and security, $refs resolved against its own document, and which
// kind of object each path id and each body or query `*_id` field names (so a generated request can
// carry a real id of the right kind).

/** The kind of object a path parameter names, from the segment before it. */
const SEGMENT_KIND = {
  customers: 'customer', invoices: 'invoice', bills: 'bill', vendors: 'vendor', payouts: 'payout',
  request: 'paymentRequest', 'payment-requests': 'paymentRequest', webhooks: 'webhook', partners: 'partner',
  keys: 'client', payments: 'payment', scenarios: 'scenario', 'data-requests': 'dataRequest',
  'vendor-payments': 'vendorPayment',
};

export function pathParamKind(template, name) {
  if (name === 'method_id') return 'paymentMethod';
  if (name === 'card_id') return 'card';
  if (name === 'request_id') return 'dataRequest';
  if (name === 'subscription_id') return 'webhook';
  if (name === 'client_id') return 'client';
  if (name === 'bill_id') return 'bill';
  if (name === 'payment_id') return template.includes('vendor-payments') ? 'vendorPayment' : 'payment';
  if (template.startsWith('/checkout/payment-methods/')) return 'card';
  const parts = template.split('/');
  const at = parts.indexOf(`{${name}}`);
  // /_sandbox/vendor-payments/{payment_id} and /vendor-payments/{bill_id}: the names above decide.
  return SEGMENT_KIND[parts[at - 1]] ?? 'unknown';
}

/** The kind a body or query field names (null: not an id). */
export function fieldKind(field, operationId) {
  const key = field.replace(/\[\d*\]$/, '');
  switch (key) {
    case 'customer_id': return 'customer';
    case 'invoice_id': return 'invoice';
    case 'product_id': return 'invoice';
    case 'vendor_id': return 'vendor';
    case 'bill_id': case 'bill_ids': return 'bill';
    case 'payment_method_id': return operationId.includes('Vendor') ? null : 'paymentMethod';
    case 'payment_id': return operationId.includes('Vendor') ? 'vendorPayment' : 'payment';
    case 'event_id': return null;
    default: return null;
  }
}

export function resolver(document) {
  return (ref) => {
    if (!ref.startsWith('#/')) throw new Error(`only local $refs: ${ref}`);
    let target = document;
    for (const part of ref.slice(2).split('/')) target = target?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
    if (target === undefined) throw new Error(`unresolvable $ref ${ref}`);
    return target;
  };
}

function deref(node, resolve) {
  let current = node;
  for (let hops = 0; current && typeof current.$ref === 'string' && hops < 20; hops++) current = resolve(current.$ref);
  return current;
}

/** Every operation of one document, in a form the case generator reads. */
export function operationsOf(document, doc) {
  const resolve = resolver(document);
  const out = [];
  for (const [template, item] of Object.entries(document.paths ?? {})) {
    const shared = (item.parameters ?? []).map((p) => deref(p, resolve));
    for (const [method, op] of Object.entries(item)) {
      if (!op || typeof op.operationId !== 'string') continue;
      const parameters = [...shared, ...(op.parameters ?? []).map((p) => deref(p, resolve))];
      const body = op.requestBody ? deref(op.requestBody, resolve) : undefined;
      const security = (op.security ?? document.security ?? []).flatMap((s) => Object.keys(s));
      out.push({
        doc,
        id: op.operationId,
        method: method.toUpperCase(),
        template,
        pathParams: parameters.filter((p) => p.in === 'path').map((p) => ({ name: p.name, kind: pathParamKind(template, p.name), schema: p.schema })),
        queryParams: parameters.filter((p) => p.in === 'query').map((p) => ({ name: p.name, required: Boolean(p.required), schema: p.schema ?? {} })),
        headerParams: parameters.filter((p) => p.in === 'header').map((p) => ({ name: p.name, required: Boolean(p.required), schema: p.schema ?? {} })),
        body: body ? { required: Boolean(body.required), content: Object.fromEntries(Object.entries(body.content ?? {}).map(([type, c]) => [type, c.schema ?? {}])) } : undefined,
        /** The document's example of a JSON body, when it gives one. */
        bodyExample: body?.content?.['application/json']?.example,
        auth: doc === 'control' ? 'control' : security.includes('checkoutToken') ? 'checkout' : security.includes('clientBasic') ? 'basic' : 'oauth2',
        write: method.toUpperCase() !== 'GET',
        resolve,
      });
    }
  }
  return out;
}
