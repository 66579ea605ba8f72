// Stops the sandbox started by global-setup.js: in-flight requests finish, then the port is freed.
export default async function globalTeardown() {
  await globalThis.__BILLING_SANDBOX__?.close();
}
