// The scenario documents shipped in scenarios/: each failure story, exercised end to end the way a
// partner's test suite would meet it.
import { readFileSync, readdirSync } from 'node:fs';
import { afterEach, describe, expect, it } from '@jest/globals';
import { parseScenario, SCENARIOS_DIR } from '../src/scenarios/document.js';
import { SCENARIO_SLEEP } from '../src/scenarios/intercept.js';
import { setup, type TestSandbox } from './helpers.js';
import { webhookSandbox, type WebhookSandbox } from './webhooks-support.js';

function shipped(name: string): string {
  const file = readdirSync(SCENARIOS_DIR).find((f) => f.replace(/\.(json|ya?ml)$/, '') === name);
  if (!file) throw new Error(`no shipped scenario ${name}`);
  return readFileSync(`${SCENARIOS_DIR}${file}`, 'utf8');
}

/** Load a shipped document through the control plane, as its raw JSON or YAML text. */
async function loadShipped(sb: TestSandbox, name: string, bearer?: string): Promise<string> {
  const text = shipped(name);
  const yaml = !text.trimStart().startsWith('{');
  const req = sb.http.post('/_sandbox/scenarios').set('Content-Type', yaml ? 'application/yaml' : 'application/json').send(text);
  if (bearer) req.set('Authorization', `Bearer ${bearer}`);
  const res = await req;
  if (res.status !== 201) throw new Error(`load ${name}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id;
}

describe('shipped scenarios', () => {
  it('ships at least five documents, each valid and described', () => {
    const files = readdirSync(SCENARIOS_DIR).filter((f) => /\.(json|ya?ml)$/.test(f));
    expect(files.length).toBeGreaterThanOrEqual(5);
    for (const file of files) {
      const doc = parseScenario(readFileSync(`${SCENARIOS_DIR}${file}`, 'utf8'));
      expect(doc.description?.length).toBeGreaterThan(40);
    }
  });

  it('rate-limit storm: after two requests, ten answer 429 with Retry-After, writes change nothing, then traffic flows', async () => {
    const sb = await setup();
    const api = sb.as(await sb.token());
    await loadShipped(sb, 'rate-limit-storm');
    const answers = [];
    for (let i = 0; i < 13; i++) answers.push(i % 2 ? await api.post('/customers', { name: `C${i}` }) : await api.get('/customers'));
    expect(answers.map((r) => r.status)).toEqual([200, 201, 429, 429, 429, 429, 429, 429, 429, 429, 429, 429, 200]);
    for (const limited of answers.slice(2, 12)) {
      expect(limited.headers['retry-after']).toBe('1');
      expect(limited.body).toMatchObject({ code: 'rate_limit_exceeded', validation_errors: {} });
    }
    const names = (await api.get('/customers')).body.data.map((c: { name: string }) => c.name);
    expect(names).toEqual(['C1']);
  });

  it('bill approval conflicts: submit, reject and pay-date refuse first with 409, the bill is untouched, then the state machine answers', async () => {
    const sb = await setup();
    const api = sb.as(await sb.token());
    const vendor = (await api.post('/vendors', { name: 'Paper Supply Co' })).body;
    const bill = (await api.post('/bills', { vendor_id: vendor.id, amount: 420, number: 'INV-77' })).body;
    expect(bill.status).toBe('draft');
    await loadShipped(sb, 'bill-approval-conflicts');
    const first = await api.post(`/bills/${bill.id}/submit`);
    expect(first.status).toBe(409);
    expect(first.body).toEqual({ code: 'invalid_state', message: expect.stringMatching(/another approver/), validation_errors: {} });
    expect((await api.post(`/bills/${bill.id}/submit`)).status).toBe(409);
    expect((await api.get(`/bills/${bill.id}`)).body.status).toBe('draft');
    expect((await api.post(`/bills/${bill.id}/submit`)).status).toBe(200);
    expect((await api.get(`/bills/${bill.id}`)).body.status).toBe('needs_approval');
    expect((await api.post(`/bills/${bill.id}/reject`, { reason: 'wrong amount' })).status).toBe(409);
    expect((await api.get(`/bills/${bill.id}`)).body.status).toBe('needs_approval');
    expect((await api.post(`/bills/${bill.id}/reject`, { reason: 'wrong amount' })).status).toBe(200);
    expect((await api.get(`/bills/${bill.id}`)).body.status).toBe('draft');
  });

  describe('receiver outage', () => {
    let w: WebhookSandbox | undefined;
    afterEach(async () => {
      await w?.close();
      w = undefined;
    });

    it('fails the first attempt and all five retries with 503, pauses delivery, then drains every topic in order after POST /webhooks/retry', async () => {
      w = await webhookSandbox();
      await loadShipped(w.sb, 'receiver-outage');
      await w.subscribe('customer_created');
      await w.subscribe('customer_updated');
      const first = (await w.api.post('/customers', { name: 'First' })).body.id;
      await w.api.patch(`/customers/${first}`, { city: 'Austin' }).expect(200);
      const second = (await w.api.post('/customers', { name: 'Second' })).body.id;
      await w.settle();
      await w.sb.advance(4 * 3600).expect(200);
      // Nothing reached the receiver: the outage answered every attempt.
      expect(w.receiver.deliveries).toEqual([]);
      const attempts = (await w.sb.http.get('/_sandbox/webhooks/deliveries')).body.data;
      expect(attempts).toHaveLength(6);
      expect(attempts.map((a: { status_code: number }) => a.status_code)).toEqual([503, 503, 503, 503, 503, 503]);
      expect(attempts[0]).toMatchObject({ attempt: 6, next_attempt_at: null, error: expect.stringMatching(/scenario/) });
      await w.sb.advance(7 * 86_400).expect(200);
      expect(w.receiver.deliveries).toEqual([]);
      await w.fresh();
      expect((await w.api.post('/webhooks/retry')).status).toBe(200);
      await w.settle();
      // The outage is over for every topic: the customer_updated event behind the head gets no fresh
      // outage of its own (one rule, one counter), so the whole queue drains at once, in order.
      expect(w.receiver.deliveries.map((d) => `${d.topic} ${d.entity_id} ${d.status}`))
        .toEqual([`customer_created ${first} 200`, `customer_updated ${first} 200`, `customer_created ${second} 200`]);
      expect((await w.sb.http.get('/_sandbox/webhooks/deliveries')).body.data).toHaveLength(9);
    });
  });

  describe('duplicate deliveries and receiver secret check', () => {
    let w: WebhookSandbox | undefined;
    afterEach(async () => {
      await w?.close();
      w = undefined;
    });

    it('duplicate deliveries: every event comes twice in a row, the second event three times (a time-out after delivery); a deduplicating receiver processes each once', async () => {
      w = await webhookSandbox();
      await loadShipped(w.sb, 'duplicate-deliveries');
      await w.subscribe('customer_created');
      // The partner's receiver: processes an event once, acknowledges every copy with 200.
      const processed: string[] = [];
      w.receiver.respondWith((d) => {
        if (!processed.includes(d.idempotency_key)) processed.push(d.idempotency_key);
        return 200;
      });
      const ids = [];
      for (const name of ['One', 'Two', 'Three']) ids.push((await w.api.post('/customers', { name })).body.id);
      await w.settle();
      expect(w.receiver.deliveries.map((d) => d.entity_id)).toEqual([ids[0], ids[0], ids[1]]);
      await w.sb.advance(90).expect(200);
      expect(w.receiver.deliveries.map((d) => d.entity_id)).toEqual([ids[0], ids[0], ids[1], ids[1], ids[1], ids[2], ids[2]]);
      expect([...w.receiver.countsByKey().values()]).toEqual([2, 3, 2]);
      expect(processed).toHaveLength(3);
      const attempts = (await w.sb.http.get('/_sandbox/webhooks/deliveries')).body.data.reverse();
      expect(attempts.map((a: { drill: string | null }) => a.drill)).toEqual([
        'duplicate_delivery', 'duplicate_delivery', 'timeout_after_delivery', 'duplicate_delivery', 'duplicate_delivery', 'duplicate_delivery', 'duplicate_delivery',
      ]);
      expect((await w.api.get('/webhooks/events')).body.data.map((h: { status: string; attempts: number }) => [h.status, h.attempts])).toEqual([['sent', 2], ['sent', 3], ['sent', 2]]);
    });

    it('receiver secret check: the first attempt carries a wrong bearer, a checking receiver answers 401, the retry 90 s later carries the secret; a trusting receiver is recorded as accepting a wrong secret', async () => {
      w = await webhookSandbox();
      await loadShipped(w.sb, 'receiver-secret-check');
      await w.subscribe('customer_created', '/hooks', 'whsec_shipped_Secret42');
      w.receiver.respondWith((d) => (d.secret === 'whsec_shipped_Secret42' ? 200 : 401));
      const first = (await w.api.post('/customers', { name: 'Checked' })).body.id;
      const second = (await w.api.post('/customers', { name: 'Later' })).body.id;
      await w.settle();
      expect(w.receiver.deliveries.map((d) => [d.entity_id, d.status])).toEqual([[first, 401]]);
      expect(w.receiver.deliveries[0].secret).toMatch(/^[a-z]{5}_[a-z]{7}_[A-Z][a-z]{5}[0-9]{2}$/);
      await w.sb.advance(90).expect(200);
      expect(w.receiver.deliveries.map((d) => [d.entity_id, d.status])).toEqual([[first, 401], [first, 200], [second, 200]]);

      // The same drill against a receiver that does not check: its 200 is a failed attempt, said so.
      const trusting = await webhookSandbox();
      try {
        await loadShipped(trusting.sb, 'receiver-secret-check');
        await trusting.subscribe('customer_created', '/hooks', 'whsec_shipped_Secret42');
        await trusting.api.post('/customers', { name: 'Trusted' });
        await trusting.settle();
        const [attempt] = (await trusting.sb.http.get('/_sandbox/webhooks/deliveries')).body.data;
        expect(attempt).toMatchObject({ status_code: 200, drill: 'wrong_secret', error: expect.stringMatching(/^receiver accepted a wrong secret/) });
      } finally {
        await trusting.close();
      }
    });
  });

  it('flaky network: some connections are reset or closed empty, the same seed replays the same failures, and no dropped write is stored', async () => {
    async function run(seed: string) {
      const sb = await setup({ seed });
      const api = sb.as(await sb.token());
      await loadShipped(sb, 'flaky-network');
      const outcomes: string[] = [];
      for (let i = 0; i < 30; i++) {
        const call = i % 3 === 0 ? api.post('/customers', { name: `N${i}` }) : api.get('/customers');
        outcomes.push(await call.then((r) => String(r.status), (e: NodeJS.ErrnoException) => (e.code === 'ECONNRESET' && /read/.test(e.message) ? 'reset' : 'cut')));
      }
      await sb.http.delete('/_sandbox/scenarios').expect(200);
      const stored = (await api.get('/customers')).body.data.map((c: { name: string }) => c.name).reverse();
      return { outcomes, stored };
    }
    const a = await run('flaky-1');
    const b = await run('flaky-1');
    expect(b.outcomes).toEqual(a.outcomes);
    const failures = a.outcomes.filter((o) => o === 'reset' || o === 'cut').length;
    expect(failures).toBeGreaterThan(0);
    expect(failures).toBeLessThan(20);
    const posted = a.outcomes.map((o, i) => (i % 3 === 0 && o === '201' ? `N${i}` : null)).filter(Boolean);
    expect(a.stored).toEqual(posted);
  });

  it('slow API: every request waits 1.5 s more, invoice and bill lists 4.5 s, and the answers are otherwise normal', async () => {
    const sb = await setup();
    const waits: number[] = [];
    sb.deps.services.set(SCENARIO_SLEEP, async (ms: number) => { waits.push(ms); });
    const api = sb.as(await sb.token());
    await loadShipped(sb, 'slow-api');
    const created = await api.post('/customers', { name: 'Patience Inc' });
    expect(created.status).toBe(201);
    await api.get('/invoices');
    await api.get('/bills');
    expect(waits).toEqual([1500, 4500, 4500]);
    expect((await api.get(`/customers/${created.body.id}`)).body.name).toBe('Patience Inc');
  });
});
