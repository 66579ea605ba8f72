// Owns the parity cases of webhook subscriptions (create, list, delete, the HTTPS and topic rules,
// the secret never shown), of tolerance (answers with fields the document does not know), and the
// reads that feed the shape rows (every list, the card-form credentials).
import type { CaseContext, ParityCase } from '../case.js';
import { customer } from './fixtures.js';

const WEBHOOK_CREATE = '| POST | /webhooks | endpoint_url (required, HTTPS), secret_key (optional), topic (required) | creates a subscription |';
// A topic no case makes happen, so a subscription that lives a few seconds receives nothing.
const QUIET_TOPIC = 'payout_failed';

function subscriptionInput(t: CaseContext, what: string) {
  return { endpoint_url: `https://example.com/${t.name(what)}`, topic: QUIET_TOPIC, secret_key: `${t.name(what)}-secret-k3y9` };
}

export const platformCases: ParityCase[] = [
  {
    id: 'webhooks/create-list-delete',
    area: 'webhooks',
    title: 'a subscription is created, listed by topic, and deleted (answering the subscription); it is then no longer active',
    rule: { section: 'Endpoints > Webhooks', quote: WEBHOOK_CREATE },
    gaps: ['DELETE /webhooks/{id}'],
    async run(t) {
      const input = subscriptionInput(t, 'hook');
      const made = t.status(await t.api.post('/webhooks', input), 200, 201);
      const sub = made.body ?? {};
      t.check(typeof sub.id === 'string' && sub.endpoint_url === input.endpoint_url && sub.topic === QUIET_TOPIC && sub.is_active === true, 'the subscription has an id, its endpoint_url and topic, and is_active true', made);
      const listed = t.status(await t.api.get('/webhooks', { query: { topic: QUIET_TOPIC, is_active: true } }), 200);
      t.check(listed.body?.data?.some((s: { id: string }) => s.id === sub.id), 'GET /webhooks?topic=&is_active=true lists it', listed);
      const deleted = t.status(await t.api.delete(`/webhooks/${sub.id}`), 200);
      t.check(deleted.body?.id === sub.id, 'DELETE answers the deleted subscription', deleted);
      const active = t.status(await t.api.get('/webhooks', { query: { topic: QUIET_TOPIC, is_active: true } }), 200);
      t.check(Array.isArray(active.body?.data) && !active.body.data.some((s: { id: string }) => s.id === sub.id), 'it is no longer listed as active', active);
    },
  },
  {
    id: 'webhooks/secret-never-shown',
    area: 'webhooks',
    title: 'the secret_key is never answered back: only its last four characters (secret_last_4_digits)',
    rule: { section: 'Authentication', quote: 'Webhook deliveries are authenticated by the subscriber\'s secret_key, see Events.' },
    gaps: ['Secrets'],
    async run(t) {
      const input = subscriptionInput(t, 'hook-secret');
      const made = t.status(await t.api.post('/webhooks', input), 200, 201);
      t.check(!made.text.includes(input.secret_key), 'the create answer does not contain the secret', made);
      t.check(made.body?.secret_last_4_digits === input.secret_key.slice(-4), 'secret_last_4_digits is the last four characters', made);
      const listed = t.status(await t.api.get('/webhooks', { query: { topic: QUIET_TOPIC } }), 200);
      t.check(!listed.text.includes(input.secret_key), 'the list does not contain the secret', listed);
    },
  },
  {
    id: 'webhooks/delete-twice-404',
    area: 'webhooks',
    title: 'deleting a subscription a second time is 404',
    rule: { section: 'Errors', quote: '404 | object not found' },
    gaps: ['DELETE /webhooks/{id}'],
    async run(t) {
      const made = await t.made('POST /webhooks', t.api.post('/webhooks', subscriptionInput(t, 'hook-twice')), 200, 201);
      t.status(await t.api.delete(`/webhooks/${made.id}`), 200);
      t.error(await t.api.delete(`/webhooks/${made.id}`), [404]);
    },
  },
  ...([
    ['http-endpoint', 'an endpoint_url that is not HTTPS is refused with 400', { endpoint_url: 'http://example.com/parity-hook' }, 'endpoint_url', ['endpoint_url']],
    ['missing-topic', 'a subscription without a topic is refused with 400', { topic: undefined }, 'topic', undefined],
    ['unknown-topic', 'a topic outside the topic list is refused with 400', { topic: 'parity_unknown_topic' }, 'topic', undefined],
  ] as const).map(([name, title, change, field, gaps]): ParityCase => ({
    id: `webhooks/${name}`,
    area: 'webhooks',
    title,
    rule: { section: 'Endpoints > Webhooks', quote: WEBHOOK_CREATE },
    gaps: gaps ? [...gaps] : undefined,
    async run(t) {
      t.error(await t.api.post('/webhooks', { ...subscriptionInput(t, `hook-${name}`), ...change }), [400], field);
    },
  })),
  {
    id: 'compatibility/unknown-response-fields',
    area: 'compatibility',
    title: 'answers with fields the document does not know still match it (the service may add fields); a documented field of the wrong type does not',
    rule: { section: 'Versioning', quote: 'clients ignore unknown fields' },
    async run(t) {
      const made = await customer(t, 'compatibility');
      const read = t.status(await t.api.get(`/customers/${made.id}`), 200);
      const grown = { ...read.body, parity_new_field: 'added later', parity_new_object: { nested: true } };
      const problems = t.shapes.check('getCustomer', 200, grown, '');
      t.check(problems === null, `a customer with two new fields matches the document (${problems?.join('; ')})`, read);
      const page = t.status(await t.api.get('/customers', { query: { limit: 1 } }), 200);
      const grownPage = { ...page.body, parity_total_count: 1, data: (page.body?.data ?? []).map((c: object) => ({ ...c, parity_new_field: 1 })) };
      const pageProblems = t.shapes.check('listCustomers', 200, grownPage, '');
      t.check(pageProblems === null, `a page with new fields on the envelope and items matches the document (${pageProblems?.join('; ')})`, page);
      t.check(t.shapes.check('getCustomer', 200, { ...read.body, id: 42 }, '') !== null, 'a customer whose id is a number does not match (the check can fail)', read);
    },
  },
  {
    id: 'shapes/reads',
    area: 'shapes',
    title: 'every list and the card-form credentials answer 200 (their bodies are checked in the shape rows)',
    rule: { section: 'Endpoints > Pagination (paginated list endpoints)', quote: '| response | object with data (array), start_cursor, end_cursor (strings), has_next_page, has_previous_page (booleans) |' },
    async run(t) {
      for (const path of ['/customers', '/invoices', '/bills', '/vendors', '/payouts', '/payments', '/webhooks', '/webhooks/events']) {
        t.status(await t.api.get(path, { query: { limit: 5 } }), 200);
      }
      const credentials = t.status(await t.api.get('/card-form/credentials'), 200);
      t.check(typeof credentials.body?.app_id === 'string' && typeof credentials.body?.team_id === 'string', 'the credentials are {app_id, team_id}', credentials);
    },
  },
];
