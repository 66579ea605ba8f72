// Owns the Testcontainers module, `billing-sandbox/testcontainers`: BillingSandboxContainer, a
// GenericContainer of the sandbox's image that takes the sandbox's options (scenarios and fixtures,
// from the image or from files on the host, seed, rate limit, admin token, webhooks to the host),
// waits on GET /_sandbox/health, and starts as a SandboxConnection: the same `api`, `control` and
// `partner()` that startSandbox() and connect() give. `testcontainers` is the partner's own install
// (an optional peer dependency): only this entry loads it.
import { existsSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { AbstractStartedContainer, GenericContainer, Wait, type StartedTestContainer } from 'testcontainers';
import { DEFAULT_KEYS, openConnection, type PartnerOptions, type SandboxConnection, type SandboxPartner } from '../client/index.js';

/** The port the image listens on (its PORT). */
export const SANDBOX_PORT = 4010;
/** What `docker build -t billing-sandbox .` names the image (it is not in a public registry yet). */
export const DEFAULT_IMAGE = 'billing-sandbox:latest';

/** The names a container on the default bridge may reach its host by: Docker's (with host-gateway), then podman's own. */
const HOST_ALIASES = ['host.docker.internal', 'host.containers.internal'];

/** A file on this machine (a path that exists), as opposed to the name of a document the image ships. */
function isHostFile(value: string): boolean {
  return /[\\/]/.test(value) && existsSync(value);
}

export class BillingSandboxContainer extends GenericContainer {
  private readonly flags: string[] = [];
  private adminToken: string | undefined;
  private copied = 0;

  constructor(image: string = DEFAULT_IMAGE) {
    super(image);
    this.withExposedPorts(SANDBOX_PORT);
  }

  /** `--scenario`: a scenario the image ships (`slow-api`) or a JSON/YAML file on this machine, copied in. May be given more than once. */
  withScenario(nameOrFile: string): this {
    this.flags.push('--scenario', this.inContainer(nameOrFile, '/tmp/scenarios'));
    return this;
  }

  /** `--fixtures`: a dataset the image ships (`demo`) or a fixture file on this machine, copied in. */
  withFixtures(nameOrFile: string): this {
    this.flags.push('--fixtures', this.inContainer(nameOrFile, '/tmp/fixtures'));
    return this;
  }

  /** `--seed`: the same seed, the same generated ids and fixture data. */
  withSeed(seed: string | number): this {
    this.flags.push('--seed', String(seed));
    return this;
  }

  /** `--rate-limit`: requests per second per key (default 5, as the real service); 0 switches it off. */
  withRateLimit(perSecond: number): this {
    this.flags.push('--rate-limit', String(perSecond));
    return this;
  }

  /** SANDBOX_ADMIN_TOKEN: the control plane asks for it (the wait and the returned `control` send it). */
  withAdminToken(token: string): this {
    this.adminToken = token;
    this.withEnvironment({ SANDBOX_ADMIN_TOKEN: token });
    return this;
  }

  /**
   * Deliver webhooks to a receiver on this machine: `--allow-http-webhooks` (plain http) and
   * host.docker.internal mapped to the host (host-gateway). Bind the receiver to 0.0.0.0 and
   * subscribe with `await started.webhookUrl(receiver.url)`.
   */
  withWebhooksToHost(): this {
    this.flags.push('--allow-http-webhooks');
    this.withExtraHosts([{ host: 'host.docker.internal', ipAddress: 'host-gateway' }]);
    return this;
  }

  /** Any other command-line flags of the sandbox (`--token-ttl`, `--journal-size`, ...), after those above. */
  withFlags(...flags: string[]): this {
    this.flags.push(...flags);
    return this;
  }

  override async start(): Promise<StartedBillingSandboxContainer> {
    this.withCommand(this.flags);
    const health = Wait.forHttp('/_sandbox/health', SANDBOX_PORT).forStatusCode(200);
    if (this.adminToken) health.withHeaders({ 'X-Sandbox-Admin-Token': this.adminToken });
    this.withWaitStrategy(health);
    return new StartedBillingSandboxContainer(await super.start(), this.adminToken);
  }

  /** A host file is copied into the container (readable by its node user) and named by its path there; a name is passed as it is. */
  private inContainer(nameOrFile: string, directory: string): string {
    if (!isHostFile(nameOrFile)) return nameOrFile;
    const target = `${directory}/${++this.copied}-${basename(nameOrFile)}`;
    this.withCopyFilesToContainer([{ source: resolve(nameOrFile), target, mode: 0o644 }]);
    return target;
  }
}

/** A started sandbox container: the testcontainers handle (stop, logs, exec, ...) and the SandboxConnection of its default partner. */
export class StartedBillingSandboxContainer extends AbstractStartedContainer implements SandboxConnection {
  readonly url: string;
  readonly apiUrl: string;
  readonly environment: SandboxConnection['environment'];
  readonly clientId: string;
  readonly clientSecret: string;
  readonly api: SandboxConnection['api'];
  readonly control: SandboxConnection['control'];
  private hostAlias: Promise<string> | undefined;
  private readonly connection: SandboxConnection;

  constructor(started: StartedTestContainer, adminToken?: string) {
    super(started);
    this.url = `http://${started.getHost()}:${started.getMappedPort(SANDBOX_PORT)}`;
    this.connection = openConnection({
      origin: this.url,
      environment: 'production',
      credentials: DEFAULT_KEYS.production,
      adminToken,
      fetch: (input, init) => fetch(input, init),
      close: async () => {
        await this.stop();
      },
    });
    ({ apiUrl: this.apiUrl, environment: this.environment, clientId: this.clientId, clientSecret: this.clientSecret, api: this.api, control: this.control } = this.connection);
  }

  token(): Promise<string> {
    return this.connection.token();
  }

  partner(options?: PartnerOptions): Promise<SandboxPartner> {
    return this.connection.partner(options);
  }

  /** Stop and remove the container. */
  close(): Promise<void> {
    return this.connection.close();
  }

  /**
   * A URL on this machine (a receiver's, e.g. http://0.0.0.0:53211/hooks) as the container reaches
   * it: its host becomes host.docker.internal, or host.containers.internal where the engine has no
   * host-gateway (podman before 5.3), whichever resolves inside the container.
   */
  async webhookUrl(localUrl: string): Promise<string> {
    const url = new URL(localUrl);
    url.hostname = await (this.hostAlias ??= this.findHostAlias());
    return url.toString();
  }

  private async findHostAlias(): Promise<string> {
    for (const alias of HOST_ALIASES) {
      // The image has node and no shell: node asks the container's resolver (its /etc/hosts).
      const { exitCode } = await this.exec(['node', '-e', `require('node:dns').lookup(${JSON.stringify(alias)}, (error) => process.exit(error ? 1 : 0))`]);
      if (exitCode === 0) return alias;
    }
    throw new Error(`the container resolves none of ${HOST_ALIASES.join(', ')}: start it with .withWebhooksToHost(), or give the receiver an address the container can reach`);
  }
}
