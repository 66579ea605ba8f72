// Owns the fuzzers' starting world: through the public API only, two partners (the default one and
// a second one) with objects of every kind in each account the fuzz touches, so generated requests
// can name real ids, and isolation attempts have another partner's and the other environment's
// objects to aim at. Answers the ids by kind, the tokens and the signed links of each account.

const basic = (id, secret) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

export class WorldError extends Error {}

/** A small typed wrapper over the raw client for the calls the world is built with. */
export function caller(client) {
  async function call(method, path, { token, body, headers = {}, form } = {}) {
    const all = { ...headers };
    if (token) all.authorization = `Bearer ${token}`;
    let payload;
    if (form) {
      all['content-type'] = 'application/x-www-form-urlencoded';
      payload = new URLSearchParams(form).toString();
    } else if (body !== undefined) {
      all['content-type'] = 'application/json';
      payload = JSON.stringify(body);
    }
    return client.send({ method, path, headers: all, body: payload });
  }
  async function must(status, method, path, options) {
    const res = await call(method, path, options);
    if (res.status !== status) throw new WorldError(`${method} ${path} answered ${res.status}, expected ${status}: ${res.text.slice(0, 300)}`);
    return res.json;
  }
  return { call, must };
}

/** A fresh access token for a key, on the given environment's token path. */
export async function tokenFor(api, env, credentials, scope) {
  const form = { grant_type: 'client_credentials' };
  if (scope) form.scope = scope;
  const body = await api.must(200, 'POST', `${env === 'demo' ? '/demo' : ''}/oauth/token`, {
    headers: { authorization: basic(credentials.client_id, credentials.client_secret) },
    form,
  });
  return body.access_token;
}

const BANK = { account_number: '000123456789', routing_number: '011000015', account_type: 'checking', bank_name: 'First Sandbox Bank' };

/**
 * Objects of every kind in one account, made through its API and the control plane with its token.
 * `tag` keeps names apart between accounts (isolation answers must not depend on them).
 */
async function populate(api, env, credentials, tag) {
  let token = await tokenFor(api, env, credentials);
  const p = env === 'demo' ? '/demo' : '';
  const ids = {};
  const add = (kind, id) => { if (id) (ids[kind] ??= []).push(id); };
  const post = (path, body, status = 201) => api.must(status, 'POST', `${p}${path}`, { token, body });
  const ctl = (path, body, status = 200) => api.must(status, 'POST', `/_sandbox${path}`, { token, body });

  for (const n of [1, 2]) add('customer', (await post('/customers', { name: `${tag} customer ${n}`, email: `c${n}.${tag}@example.test` })).id);
  const [c1, c2] = ids.customer;
  add('card', (await post(`/customers/${c1}/payment-methods/card`, { card_provider_token: 'tok_visa', provider: 'evervault' })).id);
  add('card', (await post(`/customers/${c2}/payment-methods/card`, { card_provider_token: 'tok_mastercard', provider: 'evervault' })).id);
  add('bank', (await post(`/customers/${c1}/payment-methods/bank`, {
    account_data_type: 'us', institution_name: 'First Sandbox Bank', receiver_name: tag, subtype: 'checkings', type: 'depository',
    us_account_data: { account_number: '000123456789', routing_number: '011000015' },
  })).id);
  add('user', (await post(`/customers/${c1}/users`, { email: `user.${tag}@example.test` })).id);
  for (const n of [1, 2, 3]) {
    add('invoice', (await post('/invoices', { customer_id: n === 3 ? c2 : c1, exclude_from_autopay: true, line_items: [{ description: `${tag} work ${n}`, quantity: 1, amount: 100 * n }] })).id);
  }
  const synced = await ctl('/accounting/sync', {
    invoices: [{ customer_id: c1, line_items: [{ description: 'Synced', quantity: 1, amount: 500 }] }],
    vendors: [{ name: `${tag} synced vendor` }],
  }, 201);
  add('invoice', synced.invoices[0].id);
  add('syncedInvoice', synced.invoices[0].id);
  add('vendor', synced.vendors[0].id);
  const paid = await ctl(`/invoices/${ids.invoice[1]}/pay`, {});
  add('payment', paid.id);
  const pr = await post('/payments/request', { amount: 25.5, currency: 'USD', redirect_url: 'https://shop.example/thanks', reference_id: `${tag}-order` });
  add('paymentRequest', pr.id);
  ids.links = [pr.url];

  for (const n of [1, 2]) add('vendor', (await post('/vendors', { name: `${tag} vendor ${n}`, bank_account: BANK })).id);
  const v1 = ids.vendor[1];
  for (const n of [1, 2, 3]) add('bill', (await post('/bills', { vendor_id: v1, amount: 100 * n, number: `${tag}-B-${n}`, status: 'needs_approval' })).id);
  add('bill', (await post('/bills', { vendor_id: ids.vendor[2], amount: 42, number: `${tag}-B-draft` })).id);
  const today = (await api.must(200, 'GET', '/_sandbox/clock', { token })).now.slice(0, 10);
  await post(`/bills/${ids.bill[0]}/pay-date`, { pay_date: today }, 200);
  const pay = await post('/vendor-payments', { idempotency_key: `${tag}-pay-1`, items: [{ bill_id: ids.bill[0], payment_speed: 'instant' }] }, 200);
  add('vendorPayment', pay.results[0].payment_id);
  add('dataRequest', (await post(`/vendors/${v1}/data-request`, undefined)).id);
  add('webhook', (await post('/webhooks', { endpoint_url: `https://hooks.${tag}.example/receive`, topic: 'customer_created' })).id);
  // Settle the card payment and reach the next cut-off, so a payout exists; tokens and links made
  // after this advance are valid for the next hour of the account clock.
  await ctl('/clock/advance', { seconds: 3660 + 15 * 3600 });
  token = await tokenFor(api, env, credentials);
  const payouts = await api.must(200, 'GET', `${p}/payouts`, { token });
  for (const payout of payouts.data) add('payout', payout.id);

  const checkout = await post('/checkout-auth/init', { customer_id: c1, invoice_id: ids.invoice[0] }, 200);
  ids.checkoutToken = checkout.token;
  ids.links.push((await api.must(200, 'GET', `${p}/invoices/${ids.invoice[0]}/payment-link`, { token })).url);
  ids.links.push((await api.must(200, 'GET', `${p}/invoices/${ids.invoice[0]}/pdf-link`, { token })).url);
  const scenario = await api.must(201, 'POST', '/_sandbox/scenarios', { token, body: { name: `${tag} quiet`, rules: [{ match: { path: '/never-called' }, respond: { status: 404, code: 'not_found', message: 'none' } }] } });
  add('scenario', scenario.id);
  return ids;
}

/**
 * Build the world: reset everything, a second partner, tokens for A (default partner) in both
 * environments and for B in production, objects in A production, A demo and B production.
 */
export async function buildWorld(client, { credentials }) {
  const api = caller(client);
  await api.must(200, 'POST', '/_sandbox/reset');
  const b = await api.must(201, 'POST', '/_sandbox/partners', { body: { name: 'Partner B' } });
  const keys = {
    'A:production': credentials.production,
    'A:demo': credentials.demo,
    'B:production': b.credentials.production,
    'B:demo': b.credentials.demo,
  };
  const world = { api, partners: { A: 'ptn_default', B: b.id }, keys, accounts: {} };
  for (const name of ['A:production', 'A:demo', 'B:production']) {
    const [, env] = name.split(':');
    const ids = await populate(api, env, keys[name], name.replace(':', '-').toLowerCase());
    const token = await tokenFor(api, env, keys[name]);
    world.accounts[name] = { env, token, ids, partner: name.startsWith('A') ? 'ptn_default' : b.id };
  }
  // Spare keys, for the key operations to rename and revoke without cutting the fuzz's own.
  for (const name of ['A:production', 'B:production']) {
    const account = world.accounts[name];
    const spare = await api.must(201, 'POST', `/_sandbox/partners/${account.partner}/keys`, { token: account.token, body: { environment: 'production', name: 'spare' } });
    account.ids.client = [spare.client_id];
    account.ids.partner = [account.partner];
  }
  return world;
}

/** A new token for every account of the world (after a clock advance or a key change). */
export async function renewTokens(world) {
  for (const [name, account] of Object.entries(world.accounts)) {
    account.token = await tokenFor(world.api, account.env, world.keys[name]);
  }
}
