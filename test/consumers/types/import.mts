// An ES module TypeScript file: the `import` condition's types.
import { startSandbox, SandboxRequestError, type RunningSandbox, type ScenarioDocument } from 'billing-sandbox';
import { connect, type SandboxConnection } from 'billing-sandbox/client';

const scenario: ScenarioDocument = { name: 'typed', rules: [{ match: { operation: 'listCustomers' }, nth: 2, respond: { status: 429 } }] };
const sandbox: RunningSandbox = await startSandbox({ port: 0, seed: '1', rateLimit: 0 });
const token: string = await sandbox.token('demo');
const now: string = await sandbox.advanceClock(60, { token });
const { id }: { id: string } = await sandbox.loadScenario(scenario);
await sandbox.reset().catch((e: unknown) => (e instanceof SandboxRequestError ? e.status : 0));
const connection: SandboxConnection = await connect({ baseUrl: sandbox.url });
const customer = await connection.api.POST('/customers', { body: { name: 'Typed' } });
const customerId: string = customer.id;
const partner: SandboxConnection = await sandbox.partner({ rateLimit: 0 });
console.log(sandbox.url, now, id, customerId, partner.apiUrl);
await sandbox.close();
