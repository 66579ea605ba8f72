// The strict response check the other tests lean on: it must refuse an answer with a field the
// document does not list (also inside pages built with allOf), keep free-form maps open, and refuse
// a status the operation does not document (forced answers included).
import { describe, expect, it } from '@jest/globals';
import { loadDocument } from '../src/http/openapi.js';
import { ResponseChecker } from '../src/http/response-check.js';

const checker = new ResponseChecker(loadDocument('openapi').document);
const never: Record<string, null> = Object.fromEntries(['legal_name', 'ein', 'email', 'external_id', 'street_address', 'sub_premise', 'city', 'state', 'postal_code', 'country', 'customer_integration_id'].map((k) => [k, null]));
const customer: Record<string, unknown> = { id: 'cus_1', created_at: '2026-01-01T00:00:00.000Z', status: 'active', name: 'A', default_payment_method_id: null, ...never };
const page = (data: unknown[]) => ({ data, start_cursor: null, end_cursor: null, has_next_page: false, has_previous_page: false });

describe('the strict response check', () => {
  it('accepts a documented answer', () => {
    expect(checker.check('getCustomer', 200, customer)).toBeNull();
    expect(checker.check('listCustomers', 200, page([customer]))).toBeNull();
  });

  it('refuses a field the document does not list, at the top and inside an allOf page', () => {
    expect(checker.check('getCustomer', 200, { ...customer, updated_at: 'x' })?.errors[0]).toMatchObject({ keyword: 'unevaluatedProperties', params: { unevaluatedProperty: 'updated_at' } });
    expect(checker.check('listCustomers', 200, { ...page([customer]), total: 1 })?.errors[0]).toMatchObject({ params: { unevaluatedProperty: 'total' } });
    expect(checker.check('listCustomers', 200, page([{ ...customer, secret: 's' }]))?.errors[0]).toMatchObject({ instancePath: '/data/0' });
  });

  it('still refuses a missing required field or a wrong type', () => {
    const { status: _status, ...noStatus } = customer;
    expect(checker.check('getCustomer', 200, noStatus)).not.toBeNull();
    // A field never set is null, never absent (one rule for every resource).
    const { ein: _ein, ...noEin } = customer;
    expect(checker.check('getCustomer', 200, noEin)?.errors[0]).toMatchObject({ keyword: 'required', params: { missingProperty: 'ein' } });
    expect(checker.check('getCustomer', 200, { ...customer, status: 'gone' })).not.toBeNull();
  });

  it('types the data of a webhook history record by its topic (oneOf on topic)', () => {
    const record = {
      id: 'whe_1', event_id: 'evt_1', subscription_id: 'wh_1', endpoint_url: 'https://r.test/h', entity_id: 'cus_1', idempotency_key: 'evt_1',
      topic: 'customer_created', timestamp: '2026-01-01T00:00:00.000Z', status: 'sent', attempts: 1, last_error: null,
      last_attempt_at: null, next_attempt_at: null, data: { customer_id: 'cus_1', external_id: null, name: 'A', email: null, status: 'active' },
    };
    expect(checker.check('listWebhookEvents', 200, page([record]))).toBeNull();
    expect(checker.check('listWebhookEvents', 200, page([{ ...record, data: { ...record.data, anything: true } }]))).not.toBeNull();
    // The same data under another topic does not fit that topic's payload.
    expect(checker.check('listWebhookEvents', 200, page([{ ...record, topic: 'invoice_paid' }]))).not.toBeNull();
  });

  it('keeps a free-form map open (validation_errors of an HttpError)', () => {
    const error = { code: 'bad_request', message: 'One or more fields are invalid.', validation_errors: { 'line_items[0].amount': 'is required', anything: 'x' } };
    expect(checker.check('createCustomer', 400, error)).toBeNull();
  });

  it('refuses an undocumented status, and an error body that is not a closed HttpError', () => {
    const error = { code: 'not_found', message: 'The requested object was not found.', validation_errors: {} };
    expect(checker.check('createCustomer', 404, error)?.errors[0].message).toMatch(/not documented/);
    expect(checker.check('getCustomer', 404, error)).toBeNull();
    expect(checker.check('getCustomer', 404, { ...error, stack: 'at x' })).not.toBeNull();
    expect(checker.check('getCustomer', 404, { ...error, code: 'teapot' })).not.toBeNull();
  });
});
