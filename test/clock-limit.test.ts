// The account clock's limits: one advance moves at most 100 years and the clock never passes
// 9999-12-31T23:59:59Z; a refused advance is a 400 naming the field and changes nothing.
import { beforeEach, describe, expect, it } from '@jest/globals';
import { setup, type TestSandbox } from './helpers.js';
import { LIMITS } from '../src/limits.js';

let sb: TestSandbox;
let token: string;

beforeEach(async () => {
  sb = await setup({ seed: 'clock-limit' });
  token = await sb.token();
});

const clock = async () => (await sb.http.get('/_sandbox/clock')).body as { now: string; offset_seconds: number };

async function expectNothingChanged(before: { now: string; offset_seconds: number }) {
  expect(await clock()).toEqual(before);
  const later = await sb.as(token).post('/customers', { name: 'Still here' });
  expect(later.status).toBe(201);
  expect(later.body.created_at).toBe(before.now);
}

describe('clock limits', () => {
  it('refuses an absurd advance by seconds with 400 naming seconds, and the account keeps working', async () => {
    const before = await clock();
    for (const seconds of [1e13, LIMITS.clockAdvanceMaxSeconds + 1]) {
      const res = await sb.advance(seconds);
      expect(res.status).toBe(400);
      // Only the field at fault is named (not the other form's `to`).
      expect(res.body).toEqual({ code: 'bad_request', message: expect.any(String), validation_errors: { seconds: expect.stringContaining(String(LIMITS.clockAdvanceMaxSeconds)) } });
    }
    await expectNothingChanged(before);
  });

  it('refuses a `to` more than 100 years ahead or past 9999-12-31T23:59:59Z with 400 naming to', async () => {
    const before = await clock();
    const farAhead = new Date(Date.parse(before.now) + (LIMITS.clockAdvanceMaxSeconds + 1) * 1000).toISOString();
    for (const to of [farAhead, '9999-12-31T23:59:59-05:00', '+275760-09-13T00:00:00Z']) {
      const res = await sb.http.post('/_sandbox/clock/advance').send({ to });
      expect({ to, status: res.status }).toEqual({ to, status: 400 });
      expect(res.body).toEqual({ code: 'bad_request', message: expect.any(String), validation_errors: { to: expect.any(String) } });
    }
    await expectNothingChanged(before);
  });

  it('moves a full 100 years in one advance, and stops at the last second of 9999', async () => {
    const start = Date.parse((await clock()).now);
    const res = await sb.advance(LIMITS.clockAdvanceMaxSeconds);
    expect(res.status).toBe(200);
    expect(res.body.now).toBe(new Date(start + LIMITS.clockAdvanceMaxSeconds * 1000).toISOString());
    // Walk to the end of 9999 by whole-century steps, then one second more is refused.
    let now = Date.parse(res.body.now);
    const last = Date.parse(LIMITS.clockLatest);
    while (now < last) {
      const step = Math.min(LIMITS.clockAdvanceMaxSeconds * 1000, last - now);
      const moved = await sb.advance(step / 1000);
      expect(moved.status).toBe(200);
      now = Date.parse(moved.body.now);
    }
    expect((await clock()).now).toBe('9999-12-31T23:59:59.000Z');
    const past = await sb.advance(1);
    expect(past.status).toBe(400);
    expect(past.body.validation_errors.seconds).toContain('9999-12-31T23:59:59Z');
    expect((await clock()).now).toBe('9999-12-31T23:59:59.000Z');
  });
});
