// Test helpers over HTTP. Test files run in parallel workers against one sandbox, so each file gets
// an account of its own (a new partner) instead of resetting a shared one.
const base = () => {
  const url = process.env.BILLING_SANDBOX_URL;
  if (!url) throw new Error('BILLING_SANDBOX_URL is not set: run through jest.config.js (globalSetup)');
  return url;
};

async function json(res) {
  const text = await res.text();
  return text ? JSON.parse(text) : undefined;
}

/** A fresh partner with its own production account, and a token for it. */
export async function newAccount(name) {
  const res = await fetch(`${base()}/_sandbox/partners`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ name }),
  });
  if (res.status !== 201) throw new Error(`creating a partner: ${res.status}`);
  const { credentials } = await json(res);
  const account = { baseUrl: base(), ...credentials.production };
  account.token = await getToken(account);
  /** A control-plane call acting on this account (its token says which). */
  account.control = async (method, path, body) => {
    const r = await fetch(`${base()}/_sandbox${path}`, {
      method,
      headers: { Authorization: `Bearer ${account.token}`, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: r.status, body: await json(r) };
  };
  return account;
}

export async function getToken({ baseUrl, client_id, client_secret }) {
  const res = await fetch(`${baseUrl}/oauth/token`, {
    method: 'POST',
    headers: {
      Authorization: `Basic ${Buffer.from(`${client_id}:${client_secret}`).toString('base64')}`,
      'Content-Type': 'application/x-www-form-urlencoded',
    },
    body: 'grant_type=client_credentials',
  });
  if (res.status !== 200) throw new Error(`token: ${res.status}`);
  return (await json(res)).access_token;
}
