// A CommonJS TypeScript file: the `require` condition's types.
import sandbox = require('billing-sandbox');
import client = require('billing-sandbox/client');

export async function run(): Promise<string> {
  const started: sandbox.RunningSandbox = await sandbox.startSandbox({ port: 0, rateLimit: 0 });
  const token: string = await started.token('demo');
  const error: sandbox.SandboxRequestError | undefined = await started.reset({ token }).then(() => undefined, (e: unknown) => (e instanceof sandbox.SandboxRequestError ? e : undefined));
  const connection: client.SandboxConnection = await client.connect({ baseUrl: started.url });
  const page = await connection.api.GET('/customers', { params: { query: { limit: 5 } } });
  await started.close();
  return `${started.url} ${error?.status ?? 'ok'} ${page.data.length}`;
}
