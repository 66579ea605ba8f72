// Stands for the partner's own integration code, the thing under test: create a customer, retrying
// on 429 and 5xx as the real service asks clients to.
export async function createCustomer({ baseUrl, token }, input, { retries = 3, backoffMs = 50 } = {}) {
  for (let attempt = 0; ; attempt++) {
    const res = await fetch(`${baseUrl}/customers`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(input),
    });
    const retryable = res.status === 429 || res.status >= 500;
    if (!retryable || attempt >= retries) {
      const body = await res.json();
      if (!res.ok) throw Object.assign(new Error(`createCustomer: ${res.status} ${body.code}`), { status: res.status, body });
      return { customer: body, attempts: attempt + 1 };
    }
    await new Promise((resolve) => setTimeout(resolve, backoffMs * 2 ** attempt));
  }
}
