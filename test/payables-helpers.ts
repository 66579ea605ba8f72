// Shared set-up for the payables tests: vendors with test bank accounts, bills in a given state,
// and clock advances (the token keeps working: tokens live in real time, not on the account clock).
import { setup, type Api, type TestSandbox } from './helpers.js';

export const GOOD_ACCOUNT = '000123456789';
export const bankAccount = (account_number = GOOD_ACCOUNT) => ({ account_number, routing_number: '011000015', account_type: 'checking', bank_name: 'First Sandbox Bank' });

export class Payables {
  api!: Api;
  private constructor(readonly sb: TestSandbox) {}

  static async start(): Promise<Payables> {
    const p = new Payables(await setup());
    p.api = p.sb.as(await p.sb.token());
    return p;
  }

  today(): string {
    return new Date(this.sb.time.now).toISOString().slice(0, 10);
  }

  async clockToday(): Promise<string> {
    return (await this.sb.http.get('/_sandbox/clock')).body.now.slice(0, 10);
  }

  async advance(seconds: number): Promise<void> {
    const res = await this.sb.advance(seconds);
    if (res.status !== 200) throw new Error(`advance failed: ${res.status} ${JSON.stringify(res.body)}`);
  }

  async vendor(accountNumber: string | null = GOOD_ACCOUNT, extra: object = {}): Promise<{ id: string }> {
    const res = await this.api.post('/vendors', { name: `Vendor ${Math.random().toString(36).slice(2, 8)}`, ...(accountNumber ? { bank_account: bankAccount(accountNumber) } : {}), ...extra });
    if (res.status !== 201) throw new Error(`vendor: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }

  async bill(vendorId: string, extra: object = {}): Promise<{ id: string; status: string }> {
    const res = await this.api.post('/bills', { vendor_id: vendorId, amount: 100, number: 'B-1', ...extra });
    if (res.status !== 201) throw new Error(`bill: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }

  async status(billId: string): Promise<string> {
    return (await this.api.get(`/bills/${billId}`)).body.status;
  }

  /** A needs_approval bill with today's pay date, paid at `speed`; answers the payment id. */
  async pay(billId: string, speed = 'instant', key = `k-${billId}`): Promise<string> {
    const today = await this.clockToday();
    const date = await this.api.post(`/bills/${billId}/pay-date`, { pay_date: today });
    if (date.status !== 200) throw new Error(`pay-date: ${date.status} ${JSON.stringify(date.body)}`);
    const res = await this.api.post('/vendor-payments', { idempotency_key: key, items: [{ bill_id: billId, payment_speed: speed }] });
    if (res.status !== 200 || !res.body.results[0].success) throw new Error(`pay: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.results[0].payment_id;
  }

  /** A bill in the given status, reached through the API and the clock. */
  async billIn(state: string): Promise<{ id: string; vendor_id: string }> {
    const failing = state === 'failed';
    const vendor = await this.vendor(failing ? '000000000002' : GOOD_ACCOUNT);
    const bill = await this.bill(vendor.id, state === 'draft' ? {} : { status: 'needs_approval' });
    if (state === 'deleted') await this.api.delete(`/bills/${bill.id}`);
    if (['processing', 'paid', 'failed'].includes(state)) {
      await this.pay(bill.id);
      await this.advance(600);
      if (state !== 'processing') await this.advance(60);
    }
    const status = await this.status(bill.id);
    if (status !== state) throw new Error(`wanted a ${state} bill, got ${status}`);
    return { id: bill.id, vendor_id: vendor.id };
  }
}
