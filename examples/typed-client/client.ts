// A typed client for the billing API: paths, bodies and answers come from `api.d.ts`, generated from
// the OpenAPI document the package ships (`npm run generate`, openapi-typescript), and openapi-fetch.
import createClient, { type Middleware } from 'openapi-fetch';
import type { paths } from './api.js';

export interface Credentials {
  client_id: string;
  client_secret: string;
}

export async function accessToken(baseUrl: string, { client_id, client_secret }: Credentials): Promise<string> {
  const res = await fetch(`${baseUrl}/oauth/token`, {
    method: 'POST',
    headers: {
      Authorization: `Basic ${Buffer.from(`${client_id}:${client_secret}`).toString('base64')}`,
      'Content-Type': 'application/x-www-form-urlencoded',
    },
    body: 'grant_type=client_credentials',
  });
  if (!res.ok) throw new Error(`token request answered ${res.status}`);
  return ((await res.json()) as { access_token: string }).access_token;
}

/** A client that gets a token first and sends it on every request. */
export async function billingClient(baseUrl: string, credentials: Credentials) {
  const token = await accessToken(baseUrl, credentials);
  const auth: Middleware = {
    onRequest({ request }) {
      request.headers.set('Authorization', `Bearer ${token}`);
      return request;
    },
  };
  const client = createClient<paths>({ baseUrl });
  client.use(auth);
  return client;
}
