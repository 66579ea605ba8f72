export default async function globalTeardown() {
  await globalThis.__BILLING_SANDBOX__.close();
}
