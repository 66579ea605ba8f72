// Owns what a parity case is (data: id, area, the spec rule it checks, the gaps-and-choices rows it
// rests on, whether it moves money, and a short run function) and the context a case runs with:
// the client, expectations that fail with the observed and expected status, skips and fixtures.
import type { Exchange, ParityClient } from './client.js';
import type { ShapeChecker } from './shapes.js';

export const AREAS = [
  'tokens', 'auth', 'environments', 'pagination', 'validation', 'customers', 'invoices', 'payment-methods',
  'bills', 'bulk', 'vendors', 'payment-requests', 'webhooks', 'compatibility', 'shapes', 'money',
] as const;
export type Area = (typeof AREAS)[number];

/** Requests per second at most, unless told: the spec's limit per key. */
export const DEFAULT_RATE = 5;

/** A run that cannot start as asked (a missing flag, an unknown area): exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** Where a case's expectation comes from in the service interface (service-interface.md). */
export interface Rule {
  /** The section, e.g. "Errors" or "States and transitions > Bill". */
  section: string;
  /** The words of that section the case checks, quoted. */
  quote: string;
}

export interface ParityCase {
  /** `area/name`, stable: reports and `--only` use it. */
  id: string;
  area: Area;
  /** What the case shows, as a sentence. */
  title: string;
  rule: Rule;
  /**
   * The rows of docs/gaps-and-choices.md (by their first-column text) the expectation rests on,
   * where the sandbox chose what the spec leaves open or knowingly differs: a failure against the
   * real service names the choice to revisit.
   */
  gaps?: string[];
  /** Creates payments or vendor payments when the service misbehaves or by design: runs only with --allow-money-movement. */
  movesMoney?: boolean;
  run(t: CaseContext): Promise<void>;
}

/** A failed expectation: what was expected, what came, and on which request. */
export class CaseFailure extends Error {
  constructor(
    message: string,
    readonly detail: { expected?: string; observed?: number; request?: string; excerpt?: string } = {},
  ) {
    super(message);
    this.name = 'CaseFailure';
  }
}

export class CaseSkipped extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'CaseSkipped';
  }
}

export interface RunSettings {
  /** The run's prefix for everything it creates, e.g. `parity-k3x9q2-`. */
  prefix: string;
  allowMoneyMovement: boolean;
  /** The other environment's base URL, when known. */
  otherBaseUrl?: string;
  /** Why the other environment's base URL is unknown. */
  otherBaseUrlMissing?: string;
  clientId: string;
  clientSecret: string;
}

/** The context of one case: the client plus expectations. */
export class CaseContext {
  constructor(
    readonly api: ParityClient,
    readonly settings: RunSettings,
    /** The run's check against openapi.yaml (the compatibility case uses it directly). */
    readonly shapes: ShapeChecker,
    private readonly sharedValues: Map<string, Promise<unknown>>,
  ) {}

  /** A recognisable name for something this run creates. */
  name(what: string): string {
    return `${this.settings.prefix}${what}`;
  }

  /** An email address with the run's prefix (example.com: reserved, never a real inbox). */
  email(what: string): string {
    return `${this.settings.prefix}${what}@example.com`;
  }

  skip(reason: string): never {
    throw new CaseSkipped(reason);
  }

  fail(message: string, exchange?: Exchange, expected?: string): never {
    throw new CaseFailure(message, exchange ? { expected, observed: exchange.status, request: describe(exchange), excerpt: excerpt(this.api.redact(exchange.text)) } : {});
  }

  /** The answer's status must be one of `statuses`; resolves to the answer. */
  status(exchange: Exchange, ...statuses: number[]): Exchange {
    if (!statuses.includes(exchange.status)) {
      const expected = statuses.join(' or ');
      this.fail(`${describe(exchange)} answered ${exchange.status}, expected ${expected}`, exchange, expected);
    }
    return exchange;
  }

  /** A condition on an answer that must hold; the message says what was expected. */
  check(condition: unknown, message: string, exchange?: Exchange): void {
    if (!condition) this.fail(`expected that ${message}`, exchange);
  }

  /**
   * An HttpError (spec, Errors: code, message, validation_errors) with one of `statuses`; with
   * `field`, validation_errors must name it (a key that mentions the field).
   */
  error(exchange: Exchange, statuses: number[], field?: string): Exchange {
    this.status(exchange, ...statuses);
    const body = exchange.body;
    this.check(body && typeof body === 'object', 'the error body is a JSON object (HttpError)', exchange);
    this.check(typeof body.code === 'string' && body.code.length > 0, 'the error body has a code (HttpError.code)', exchange);
    this.check(typeof body.message === 'string', 'the error body has a message (HttpError.message)', exchange);
    if (body.validation_errors !== undefined) {
      this.check(body.validation_errors !== null && typeof body.validation_errors === 'object' && !Array.isArray(body.validation_errors),
        'validation_errors is an object mapping fields to messages', exchange);
    }
    if (field) {
      const keys = Object.keys(body.validation_errors ?? {});
      this.check(keys.some((key) => key.includes(field)), `validation_errors names the field ${field} (got ${keys.length ? keys.join(', ') : 'none'})`, exchange);
    }
    return exchange;
  }

  /** A setup step: a create that must succeed, or the case fails saying which step broke. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the created object's JSON, as Exchange.body
  async made(what: string, exchange: Promise<Exchange>, ...statuses: number[]): Promise<any> {
    const answer = await exchange;
    const expected = statuses.length ? statuses : [200, 201];
    if (!expected.includes(answer.status) || typeof answer.body?.id !== 'string') {
      this.fail(`setup: ${what} answered ${answer.status}, expected ${expected.join(' or ')} with an id`, answer, expected.join(' or '));
    }
    return answer.body;
  }

  /** A value made once per run and shared by the cases that only read it (a vendor for bills, say). */
  shared<T>(key: string, make: () => Promise<T>): Promise<T> {
    let value = this.sharedValues.get(key) as Promise<T> | undefined;
    if (!value) {
      value = make();
      this.sharedValues.set(key, value);
      // A failed setup is not remembered: the next case tries again and reports its own failure.
      value.catch(() => this.sharedValues.delete(key));
    }
    return value;
  }
}

export function describe(exchange: Exchange): string {
  return `${exchange.method} ${exchange.path}${exchange.foreign ? ' (other environment)' : ''}`;
}

/** The start of a body, on one line, for a report. */
export function excerpt(text: string, max = 300): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}...` : flat;
}
