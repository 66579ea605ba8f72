// Webhook delivery history filters (GET /webhooks/events): from_date and to_date as ISO 8601, a
// date-time or a bare date covering its whole UTC day.
import { afterEach, describe, expect, it } from '@jest/globals';
import { webhookSandbox, type WebhookSandbox } from './webhooks-support.js';

let w: WebhookSandbox | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

describe('history date filters', () => {
  it('accepts YYYY-MM-DD: from_date from the start of that UTC day, to_date to its end', async () => {
    w = await webhookSandbox();
    const sandbox = w;
    await sandbox.subscribe('customer_created');
    // START is 2026-03-02T09:00Z: one customer that day, one the next day at 09:00, one at 23:59:30.
    const created = async (name: string) => (await sandbox.api.post('/customers', { name }).expect(201)).body.id as string;
    const monday = await created('Monday');
    await sandbox.sb.advance(86_400).expect(200);
    const tuesday = await created('Tuesday');
    await sandbox.sb.advance(14 * 3600 + 59 * 60 + 30).expect(200);
    const late = await created('Late Tuesday');
    await sandbox.settle();
    const ids = async (query: string) => {
      const res = await sandbox.api.get(`/webhooks/events${query}`);
      expect(res.status).toBe(200);
      return res.body.data.map((r: { entity_id: string }) => r.entity_id);
    };
    expect(await ids('')).toEqual([late, tuesday, monday]);
    expect(await ids('?from_date=2026-03-03')).toEqual([late, tuesday]);
    expect(await ids('?to_date=2026-03-02')).toEqual([monday]);
    expect(await ids('?from_date=2026-03-03&to_date=2026-03-03')).toEqual([late, tuesday]);
    expect(await ids('?from_date=2026-03-01&to_date=2026-03-01')).toEqual([]);
    // Date-times still work, and mix with dates.
    expect(await ids(`?from_date=${encodeURIComponent('2026-03-03T09:00:00Z')}&to_date=2026-03-03`)).toEqual([late, tuesday]);
    expect(await ids(`?to_date=${encodeURIComponent('2026-03-03T23:59:00Z')}`)).toEqual([tuesday, monday]);
    for (const bad of ['?from_date=2026-13-01', '?to_date=2026-03-32', '?from_date=03/03/2026']) {
      const res = await sandbox.api.get(`/webhooks/events${bad}`);
      expect(res.status).toBe(400);
      expect(Object.keys(res.body.validation_errors)).toEqual([bad.slice(1, bad.indexOf('='))]);
    }
  });
});

describe('history date filters without an offset', () => {
  it('reads 2026-03-02T10:00:00 as UTC whatever the process time zone, and refuses times that do not exist', async () => {
    const zone = process.env.TZ;
    // A zone far from UTC: a server that read offset-less times as local time would be off by hours.
    process.env.TZ = 'America/New_York';
    try {
      w = await webhookSandbox();
      const sandbox = w;
      await sandbox.subscribe('customer_created');
      const created = async (name: string) => (await sandbox.api.post('/customers', { name }).expect(201)).body.id as string;
      const nine = await created('At nine'); // START is 2026-03-02T09:00:00Z
      await sandbox.sb.advance(3600).expect(200);
      await sandbox.fresh();
      const ten = await created('At ten');
      await sandbox.settle();
      const ids = async (query: string) => {
        const res = await sandbox.api.get(`/webhooks/events?${query}`);
        expect(res.status).toBe(200);
        return res.body.data.map((r: { entity_id: string }) => r.entity_id);
      };
      expect(await ids('from_date=2026-03-02T10:00:00')).toEqual([ten]);
      expect(await ids('from_date=2026-03-02T10:00:01')).toEqual([]);
      expect(await ids('to_date=2026-03-02T09:30')).toEqual([nine]);
      expect(await ids('from_date=2026-03-02T09:00&to_date=2026-03-02T09:59:59.999')).toEqual([nine]);
      expect(await ids(`from_date=${encodeURIComponent('2026-03-02T11:00:00+01:00')}`)).toEqual([ten]);
      expect(await ids(`to_date=${encodeURIComponent('2026-03-02T05:00:00-04:00')}`)).toEqual([nine]);
      for (const [field, bad] of [['from_date', '2026-02-30T10:00:00'], ['to_date', '2026-03-02T25:00:00'], ['from_date', '2026-03-02T10:61'], ['to_date', '2026-03-02T10']]) {
        const res = await sandbox.api.get(`/webhooks/events?${field}=${bad}`);
        expect(res.status).toBe(400);
        expect(Object.keys(res.body.validation_errors)).toEqual([field]);
      }
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
  });
});
