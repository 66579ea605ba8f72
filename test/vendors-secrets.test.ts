// The full vendor bank account number never leaves the sandbox: a whole payables flow is driven
// while every response body, the request journal, the event log and every log line are scanned for it.
import { Writable } from 'node:stream';
import { describe, expect, it } from '@jest/globals';
import { pino } from 'pino';
import request from 'supertest';
import { createApp, createDeps } from '../src/app.js';
import { eventLog } from '../src/events/events.js';
import { START } from './helpers.js';

const NUMBERS = ['98765432101234', '55554444333322', '12120000343456'];

describe('bank account numbers', () => {
  it('appear in no response, journal entry, event or log line of a payables flow', async () => {
    const logLines: string[] = [];
    const sink = new Writable({ write(chunk, _enc, done) { logLines.push(String(chunk)); done(); } });
    const time = { now: START };
    const deps = await createDeps({ rateLimit: 0, validateResponses: true, logLevel: 'trace' }, { realNow: () => time.now, logger: pino({ level: 'trace' }, sink) });
    const http = request(createApp(deps));
    const bodies: string[] = [];
    const token = (await http.post('/oauth/token').auth('sandbox_client_id', 'sandbox_client_secret').type('form').send({ grant_type: 'client_credentials' })).body.access_token;
    const call = async (method: 'get' | 'post' | 'patch' | 'delete', path: string, body?: object) => {
      const req = http[method](path).set('Authorization', `Bearer ${token}`);
      const res = await (body ? req.send(body) : req);
      bodies.push(res.text);
      return res;
    };
    const bank = (account_number: string) => ({ account_number, routing_number: '011000015', account_type: 'checking', bank_name: 'Leak Test Bank' });

    const vendor = (await call('post', '/vendors', { name: 'Leak Co', bank_account: bank(NUMBERS[0]) })).body;
    await call('get', `/vendors/${vendor.id}`);
    await call('get', '/vendors');
    await call('get', `/vendors/${vendor.id}/bank-account`);
    await call('post', `/vendors/${vendor.id}/bank-account`, bank(NUMBERS[1]));
    await call('post', `/vendors/${vendor.id}/bank-account`, { ...bank(NUMBERS[1]), routing_number: '011000016' });
    await call('post', '/vendors', { name: 'Bad', bank_account: { ...bank(NUMBERS[1]), account_type: 'brokerage' } });
    const dr = (await call('post', `/vendors/${vendor.id}/data-request`)).body;
    await call('post', `/_sandbox/vendors/${vendor.id}/data-requests/${dr.id}/submit`, { bank_account: bank(NUMBERS[2]) });
    await call('post', '/_sandbox/accounting/sync', { vendors: [{ name: 'Synced', bank_account: bank(NUMBERS[0]) }] });
    const bill = (await call('post', '/bills', { vendor_id: vendor.id, amount: 10, status: 'needs_approval' })).body;
    await call('post', `/bills/${bill.id}/pay-date`, { pay_date: new Date(time.now).toISOString().slice(0, 10) });
    await call('post', '/vendor-payments', { idempotency_key: 'leak', items: [{ bill_id: bill.id, payment_speed: 'instant' }] });
    await call('post', '/_sandbox/clock/advance', { seconds: 700 });
    await call('get', `/bills/${bill.id}`);
    await call('get', `/vendors/${vendor.id}/bank-account`);
    const journal = await call('get', '/_sandbox/requests?limit=500');

    expect(journal.status).toBe(200);
    expect(journal.body.data.length).toBeGreaterThan(10);
    expect(bodies.some((b) => b.includes('****3456'))).toBe(true);
    const account = deps.store.account('ptn_default', 'production');
    const haystacks = { responses: bodies.join('\n'), logs: logLines.join('\n'), events: JSON.stringify([...eventLog(account).values()]) };
    expect(logLines.length).toBeGreaterThan(0);
    for (const number of NUMBERS) {
      for (const [where, text] of Object.entries(haystacks)) expect([where, number, text.includes(number)]).toEqual([where, number, false]);
    }
  });
});
