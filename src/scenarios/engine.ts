// Owns the scenarios in force: global ones (--scenario, every account) and each account's own
// (control plane), their per-account counters, and deciding what a request or a webhook attempt gets.
import { createHash } from 'node:crypto';
import type { Deps } from '../deps.js';
import { ApiError, Errors } from '../errors.js';
import { LIMITS } from '../limits.js';
import { settingNames } from '../settings.js';
import type { DeliveryFault } from '../faults.js';
import { createRandom } from '../random.js';
import type { Account } from '../store/store.js';
import { defineStateMap, defineStateValue } from '../store/module-state.js';
import { contentHash, evolutionAction, type RespondAction, type ScenarioDocument, type ScenarioRule } from './document.js';
import type { DrillSet, EvolutionDrill } from './evolve.js';

export interface LoadedScenario {
  id: string;
  name: string;
  description: string | null;
  scope: 'account' | 'global';
  loaded_at: string;
  document: ScenarioDocument;
}

/** Per rule: how many requests (or attempts) matched it, and how many times it acted. */
interface RuleCounter {
  matched: number;
  fired: number;
}

/** What the sandbox sees of a request when matching rules. */
export interface RequestFacts {
  operationId: string;
  method: string;
  /** The path as requested, prefixes included. */
  path: string;
  /** The operation's path template in the OpenAPI document. */
  template: string;
  headers: Record<string, string | string[] | undefined>;
}

export type Terminal = { kind: 'respond'; respond: RespondAction } | { kind: 'drop'; mode: 'reset' | 'empty' };

export interface RequestDecision {
  delayMs: number;
  terminal?: Terminal;
  /** The evolution drills that fired: the answer is sent reshaped (src/scenarios/evolve.ts). */
  drills?: DrillSet;
  /** Scenario ids and rule indexes that acted, for the log. */
  fired: string[];
}

/** The account's own scenarios, oldest first (kept in the account's state, so a reset drops them). */
const ownScenarios = defineStateValue<LoadedScenario[]>('scenarios', () => [], {
  type: 'array',
  items: {
    type: 'object', required: ['id', 'name', 'scope', 'loaded_at', 'document'],
    properties: {
      id: { type: 'string' }, name: { type: 'string' }, description: { type: ['string', 'null'] },
      scope: { enum: ['account', 'global'] }, loaded_at: { type: 'string' }, document: { type: 'object' },
    },
  },
});
/** Each loaded scenario's rule counters on an account, by scenario id (made for every rule at once). */
const ruleCounters = defineStateMap<RuleCounter[]>('scenario_counters', {
  type: 'array',
  items: { type: 'object', required: ['matched', 'fired'], properties: { matched: { type: 'integer', minimum: 0 }, fired: { type: 'integer', minimum: 0 } } },
});

/** Strip the environment and version prefixes and a trailing slash: /demo/v1/bills/ -> /bills. */
export function apiPath(path: string): string {
  const stripped = path.replace(/^\/demo(?=\/|$)/, '').replace(/^\/v1(?=\/|$)/, '');
  return stripped.replace(/\/+$/, '') || '/';
}

/** A template with its parameter names erased, so /bills/{id} and /bills/{bill_id} compare equal. */
export function templateShape(template: string): string {
  return apiPath(template).replace(/\{[^}]*\}/g, '{}');
}

/**
 * Does a `path` (a template, matched by the request's operation, or a concrete path, matched with or
 * without /demo and /v1) name this request? Used by scenario rules and the journal's path filter.
 */
export function pathMatches(rulePath: string, path: string, template: string | null): boolean {
  if (rulePath.includes('{')) return template !== null && templateShape(rulePath) === templateShape(template);
  return apiPath(rulePath) === apiPath(path);
}

function headerValue(headers: RequestFacts['headers'], name: string): string | undefined {
  const lower = name.toLowerCase();
  // Own headers only: a rule naming `constructor` or `__proto__` must not meet Object.prototype's.
  if (!Object.hasOwn(headers, lower)) return undefined;
  const value = headers[lower];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** Does a topic rule (a topic, '*' or a list) match a delivery attempt of `topic`? */
function topicMatches(rule: ScenarioRule, topic: string): boolean {
  const wanted = rule.match.topic;
  // A request rule (no topic) matches no attempt: undefined is neither a list, '*' nor a topic.
  if (Array.isArray(wanted)) return wanted.includes(topic);
  return wanted === '*' || wanted === topic;
}

function requestMatches(rule: ScenarioRule, facts: RequestFacts): boolean {
  const { match } = rule;
  if (match.topic !== undefined) return false;
  if (match.operation !== undefined && (Array.isArray(match.operation) ? !match.operation.includes(facts.operationId) : match.operation !== facts.operationId)) return false;
  if (match.method !== undefined && match.method.toUpperCase() !== facts.method.toUpperCase()) return false;
  if (match.path !== undefined && !pathMatches(match.path, facts.path, facts.template)) return false;
  for (const [name, value] of Object.entries(match.header ?? {})) {
    if (headerValue(facts.headers, name) !== value) return false;
  }
  return true;
}

export class ScenarioEngine {
  /** The documents given at start, kept so that a full reset brings them back with fresh counters. */
  private startGlobals: LoadedScenario[] = [];
  private globals: LoadedScenario[] = [];

  constructor(private readonly deps: Deps) {
    deps.store.events.on('storeReset', () => {
      this.globals = [...this.startGlobals];
    });
  }

  /**
   * Documents loaded with --scenario: they apply to every account. The id (which seeds the draws) comes
   * from the seed, the position and the document's content, never its path: a repo clone, an npx
   * install and the Docker image replay the same run for the same seed.
   */
  setGlobals(documents: Array<{ document: ScenarioDocument }>): void {
    if (documents.length > LIMITS.globalScenarios) throw new Error(`At most ${LIMITS.globalScenarios} documents of ${settingNames('scenarios')} can be loaded at start (got ${documents.length}).`);
    const loadedAt = new Date(this.deps.realNow()).toISOString();
    this.startGlobals = documents.map(({ document }, i) => ({
      id: `scn_${createHash('sha256').update(`${this.deps.store.seed}|global|${i}|${contentHash(document)}`).digest('hex').slice(0, 20)}`,
      name: document.name,
      description: document.description ?? null,
      scope: 'global',
      loaded_at: loadedAt,
      document,
    }));
    this.globals = [...this.startGlobals];
    // Counters start when a document is loaded: a restart on a --data file loads the globals anew.
    for (const account of this.deps.store.allAccounts()) {
      const counters = ruleCounters(account);
      account.transaction(() => {
        for (const scenario of this.startGlobals) counters.delete(scenario.id);
      });
    }
  }

  private own(account: Account): readonly LoadedScenario[] {
    return ownScenarios.read(account);
  }

  /** Each rule's counters on this account, read without creating them (zeros for a rule not yet matched). */
  countersOf(account: Account, scenario: LoadedScenario): RuleCounter[] {
    const stored = ruleCounters(account).get(scenario.id);
    // Counters are made for every rule at once, and a loaded document never changes; one per rule all
    // the same, so that counters an imported snapshot brought for a document of another length never
    // leave a rule without one.
    return scenario.document.rules.map((_, i) => (stored?.[i] ? { matched: stored[i].matched, fired: stored[i].fired } : { matched: 0, fired: 0 }));
  }

  /** Global scenarios first (loaded at start), then the account's own, oldest first. */
  list(account: Account): LoadedScenario[] {
    return [...this.globals, ...this.own(account)];
  }

  add(account: Account, document: ScenarioDocument): LoadedScenario {
    const cap = LIMITS.scenariosPerAccount;
    if (this.own(account).length >= cap) {
      throw new ApiError(Errors.limitReached, {
        message: `The account has ${cap} scenarios loaded, the most it may have; remove some (DELETE /_sandbox/scenarios or /_sandbox/scenarios/{id}) before loading another.`,
        validation_errors: { body: `this account already holds ${cap} scenario documents` },
      });
    }
    const n = account.next('scenarios');
    const scenario: LoadedScenario = {
      id: `scn_${createHash('sha256').update(`${this.deps.store.seed}|${account.id}|scenario|${n}`).digest('hex').slice(0, 20)}`,
      name: document.name,
      description: document.description ?? null,
      scope: 'account',
      loaded_at: account.clock.iso(),
      document,
    };
    // Undone by taking it off again: never a copy of every loaded document (up to 100 of 1 MB each).
    ownScenarios.update(account, (list) => list.push(scenario), (list) => { list.pop(); });
    return scenario;
  }

  /** Remove one scenario the account sees; a global one stops applying to every account. */
  remove(account: Account, id: string): boolean {
    const index = this.own(account).findIndex((s) => s.id === id);
    if (index >= 0) {
      const [removed] = ownScenarios.read(account).slice(index, index + 1);
      ownScenarios.update(account, (list) => list.splice(index, 1), (list) => { list.splice(index, 0, removed); });
      ruleCounters(account).delete(id);
      return true;
    }
    const before = this.globals.length;
    this.globals = this.globals.filter((s) => s.id !== id);
    return this.globals.length < before;
  }

  /** Remove the account's own scenarios (globals stay); answers how many. */
  removeOwn(account: Account): number {
    const own = this.own(account);
    const count = own.length;
    if (!count) return 0;
    const counters = ruleCounters(account);
    for (const scenario of own) counters.delete(scenario.id);
    const all = [...own];
    ownScenarios.update(account, (list) => { list.length = 0; }, (list) => { list.push(...all); });
    return count;
  }

  /**
   * Count the request against every rule it matches, and collect what fires: delays add up, the
   * first respond or drop ends the request. A rule whose counters let it fire after the request was
   * already ended does not use up its `times`.
   */
  decide(account: Account, facts: RequestFacts): RequestDecision {
    const decision: RequestDecision = { delayMs: 0, fired: [] };
    this.walk(account, (rule) => requestMatches(rule, facts), (rule, label, scenario) => {
      if (decision.terminal) return false;
      decision.fired.push(label);
      if (rule.delay_ms !== undefined) decision.delayMs += rule.delay_ms;
      else if (rule.respond) decision.terminal = { kind: 'respond', respond: rule.respond };
      else if (rule.drop) decision.terminal = { kind: 'drop', mode: rule.drop };
      else {
        const drill = evolutionAction(rule);
        if (drill) decision.drills = this.addDrill(decision.drills, drill, scenario);
      }
      return true;
    });
    return decision;
  }

  /**
   * The evolution drills a webhook attempt of `topic` is sent under, if topic rules carrying one fire
   * (each fires on its own: all three can shape one body). Asked only for an attempt that is sent:
   * a fault answers for the receiver first, and copies of a duplicate drill meet no rule.
   */
  deliveryDrills(account: Account, attempt: { topic: string }): DrillSet | undefined {
    if (this.none(account)) return undefined;
    let drills: DrillSet | undefined;
    this.walk(account, (rule) => evolutionAction(rule) !== undefined && topicMatches(rule, attempt.topic), (rule, _label, scenario) => {
      drills = this.addDrill(drills, evolutionAction(rule)!, scenario);
      return true;
    });
    return drills;
  }

  /**
   * A drill joins the set; the draws come from the seed of the first scenario whose drill fired (its
   * document's seed, else the server's), never from the account: the same seed gives a partner's CI
   * the same names, statuses and orders on every run.
   */
  private addDrill(set: DrillSet | undefined, drill: EvolutionDrill, scenario: LoadedScenario): DrillSet {
    const seed = set?.seed ?? String(scenario.document.seed ?? this.deps.store.seed);
    const names = set?.names.includes(drill) ? set.names : [...(set?.names ?? []), drill];
    return { names, seed };
  }

  /**
   * What a webhook attempt of `topic` meets, if a topic rule acting on attempts fires for it
   * (fail_delivery, timeout_after_delivery, wrong_secret; the first that fires decides). A rule
   * matching several topics has one set of counters: `times: 6` is six attempts in all, whatever
   * their topics. Copies sent by a duplicate drill are not attempts of the queue: never asked here.
   */
  deliveryFault(account: Account, attempt: { topic: string }): DeliveryFault | undefined {
    if (this.none(account)) return undefined;
    let fault: DeliveryFault | undefined;
    this.walk(account, (rule) => rule.duplicate_delivery === undefined && evolutionAction(rule) === undefined && topicMatches(rule, attempt.topic), (rule) => {
      if (fault) return false;
      if (rule.fail_delivery) fault = 'timeout' in rule.fail_delivery ? { timeout: true } : { status: rule.fail_delivery.status };
      else if (rule.timeout_after_delivery) fault = { drill: 'timeout_after_delivery' };
      else if (rule.wrong_secret) fault = { drill: 'wrong_secret' };
      return fault !== undefined;
    });
    return fault;
  }

  /**
   * How many copies of an event to send after an attempt of `topic` delivered it: the count of the
   * first duplicate_delivery rule that fires. These rules count deliveries (events delivered), not
   * attempts, so `nth: 2` duplicates the second event delivered, however many attempts each took.
   */
  deliveryDuplicates(account: Account, delivery: { topic: string }): number | undefined {
    if (this.none(account)) return undefined;
    let count: number | undefined;
    this.walk(account, (rule) => rule.duplicate_delivery !== undefined && topicMatches(rule, delivery.topic), (rule) => {
      if (count !== undefined || !rule.duplicate_delivery) return false;
      count = rule.duplicate_delivery.count;
      return true;
    });
    return count;
  }

  /** No scenario applies to the account: every delivery attempt asks, and then opens no unit of work. */
  private none(account: Account): boolean {
    return !this.globals.length && !this.own(account).length;
  }

  /** Visit every matching rule in order, counting the match; `act` says whether an eligible rule acted. */
  private walk(account: Account, matches: (rule: ScenarioRule) => boolean, act: (rule: ScenarioRule, label: string, scenario: LoadedScenario) => boolean): void {
    // One unit of work for the counters a request (or an attempt) moves: it runs before the handler's
    // own, so a handler that throws still counts as a match. A refused write (the data file cannot be
    // written, the account was replaced) is the request's answer: a rule must not fire uncounted.
    account.transaction(() => this.count(account, matches, act));
  }

  private count(account: Account, matches: (rule: ScenarioRule) => boolean, act: (rule: ScenarioRule, label: string, scenario: LoadedScenario) => boolean): void {
    for (const scenario of this.list(account)) {
      const rules = scenario.document.rules;
      // A copy (countersOf), stored back once counted: the stored counters only change through the map.
      let counters: RuleCounter[] | undefined;
      for (let i = 0; i < rules.length; i++) {
        const rule = rules[i];
        if (!matches(rule)) continue;
        counters ??= this.countersOf(account, scenario);
        const counter = counters[i];
        counter.matched += 1;
        if (!this.eligible(account, scenario, i, rule, counter)) continue;
        if (act(rule, `${scenario.id}#${i}`, scenario)) counter.fired += 1;
      }
      if (counters) ruleCounters(account).set(scenario.id, counters);
    }
  }

  private eligible(account: Account, scenario: LoadedScenario, index: number, rule: ScenarioRule, counter: RuleCounter): boolean {
    if (rule.nth !== undefined && counter.matched !== rule.nth) return false;
    if (rule.from !== undefined && counter.matched < rule.from) return false;
    if (rule.times !== undefined && counter.fired >= rule.times) return false;
    if (rule.probability !== undefined) {
      // One draw per match, from a generator seeded by (seed, account, scenario, rule, match number):
      // the same seed replays the same run, whatever else the account did in between.
      const seed = scenario.document.seed ?? this.deps.store.seed;
      const draw = createRandom(`${seed}|${account.id}|${scenario.id}|${index}|${counter.matched}`).next();
      if (draw >= rule.probability) return false;
    }
    return true;
  }
}
