// Owns the parity cases of lists: the pagination envelope of every paginated list, walking a
// filtered list forward with `after` and back with `before`, and the limits of the query.
import type { CaseContext, ParityCase } from '../case.js';
import type { Exchange } from '../client.js';
import { customer } from './fixtures.js';

const ENVELOPE = '| response | object with data (array), start_cursor, end_cursor (strings), has_next_page, has_previous_page (booleans) |';

/** The typed envelope: data, both cursors (strings; an empty page has nothing to point at), both flags. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a page's items, JSON as Exchange.body
function checkEnvelope(t: CaseContext, page: Exchange): any[] {
  const body = page.body ?? {};
  t.check(Array.isArray(body.data), 'the page has a data array', page);
  for (const cursor of ['start_cursor', 'end_cursor']) {
    const ok = body.data?.length ? typeof body[cursor] === 'string' : body[cursor] === undefined || body[cursor] === null || typeof body[cursor] === 'string';
    t.check(ok, `the page has ${cursor} (a string)`, page);
  }
  for (const flag of ['has_next_page', 'has_previous_page']) t.check(typeof body[flag] === 'boolean', `the page has ${flag} (a boolean)`, page);
  return body.data;
}

const LISTS: Array<{ path: string; gaps?: string[] }> = [
  { path: '/customers' },
  { path: '/invoices' },
  { path: '/bills' },
  { path: '/vendors' },
  { path: '/payouts' },
  { path: '/webhooks' },
  { path: '/webhooks/events' },
  { path: '/payments', gaps: ['Payment list'] },
];

const ids = (data: Array<{ id: string }>) => data.map((item) => item.id);

export const listCases: ParityCase[] = [
  ...LISTS.map(({ path, gaps }): ParityCase => ({
    id: `pagination/envelope${path.replace(/\//g, '-')}`,
    area: 'pagination',
    title: `GET ${path} answers the cursor envelope and honours limit`,
    rule: { section: 'Endpoints > Pagination (paginated list endpoints)', quote: ENVELOPE },
    gaps,
    async run(t) {
      const page = t.status(await t.api.get(path, { query: { limit: 1 } }), 200);
      const data = checkEnvelope(t, page);
      t.check(data.length <= 1, `limit=1 gives at most one item (got ${data.length})`, page);
    },
  })),
  {
    id: 'pagination/forward-and-back',
    area: 'pagination',
    title: 'after=end_cursor gives the next page and before=start_cursor gives the previous one back',
    rule: { section: 'Endpoints > Pagination (paginated list endpoints)', quote: '| query before | cursor; for the previous page use start_cursor of the last response |' },
    gaps: ['company_name filter', 'Pagination order'],
    async run(t) {
      for (const n of [1, 2, 3]) await customer(t, `page-${n}`);
      const filter = { company_name: t.name('page-'), limit: 2 };
      const first = t.status(await t.api.get('/customers', { query: filter }), 200);
      const firstIds = ids(checkEnvelope(t, first));
      t.check(firstIds.length === 2, `the first page of three customers with limit=2 holds two (got ${firstIds.length})`, first);
      t.check(first.body.has_next_page === true, 'the first page says has_next_page', first);
      const second = t.status(await t.api.get('/customers', { query: { ...filter, after: first.body.end_cursor } }), 200);
      const secondIds = ids(checkEnvelope(t, second));
      t.check(secondIds.length === 1 && !firstIds.includes(secondIds[0]), 'after=end_cursor gives the one remaining customer', second);
      t.check(second.body.has_previous_page === true && second.body.has_next_page === false, 'the last page says has_previous_page and not has_next_page', second);
      const back = t.status(await t.api.get('/customers', { query: { ...filter, before: second.body.start_cursor } }), 200);
      const backIds = ids(checkEnvelope(t, back));
      t.check(backIds.length === 2 && backIds.every((id) => firstIds.includes(id)), 'before=start_cursor gives the first page again', back);
    },
  },
  {
    id: 'pagination/limit-above-maximum',
    area: 'pagination',
    title: 'a limit above the maximum page size is refused with 400 naming limit',
    rule: { section: 'Limits', quote: 'The maximum value of limit: not shown.' },
    gaps: ['Page size'],
    async run(t) {
      t.error(await t.api.get('/customers', { query: { limit: 501 } }), [400], 'limit');
    },
  },
  {
    id: 'pagination/unknown-query-parameter',
    area: 'pagination',
    title: 'an unknown query parameter is refused with 400 naming it',
    rule: { section: 'Errors', quote: '400 | malformed JSON or missing or invalid field' },
    gaps: ['Unknown query parameters'],
    async run(t) {
      t.error(await t.api.get('/customers', { query: { limit: 1, colour: 'blue' } }), [400], 'colour');
    },
  },
];
