// Owns the scenarios feature: the engine service, the --scenario documents loaded at start, the
// control-plane operations on /_sandbox/scenarios, the interceptors and the webhook delivery hooks
// (faults and drills of an attempt, copies of a delivered event, evolution drills of its body).
import type { Deps } from '../deps.js';
import type { Account } from '../store/store.js';
import { DELIVERY_DRILLS, DELIVERY_DUPLICATES, DELIVERY_FAULTS, type DeliveryDrillsHook, type DeliveryDuplicatesHook, type DeliveryFaultHook } from '../faults.js';
import type { Feature } from '../feature.js';
import { created, ok, type Handler } from '../http/context.js';
import { ApiError, Errors } from '../errors.js';
import { parseScenario, readScenarioArgument } from './document.js';
import { ScenarioEngine, type LoadedScenario } from './engine.js';
import { SCENARIO_ENGINE, preferInterceptor, scenarioInterceptor } from './intercept.js';

function engineOf(deps: Deps): ScenarioEngine {
  return deps.services.installed(SCENARIO_ENGINE);
}

function summary(deps: Deps, account: Account, scenario: LoadedScenario) {
  return {
    id: scenario.id,
    name: scenario.name,
    description: scenario.description,
    scope: scenario.scope,
    rules_count: scenario.document.rules.length,
    loaded_at: scenario.loaded_at,
    counters: engineOf(deps).countersOf(account, scenario),
  };
}

const listScenarios: Handler<'sandboxListScenarios'> = ({ deps, account }) => ok({ data: engineOf(deps).list(account).map((s) => summary(deps, account, s)) });

const loadScenario: Handler<'sandboxLoadScenario'> = ({ deps, account, req }) => {
  // The raw body: express parsed JSON into an object and YAML into text; both are checked the same way.
  const document = parseScenario(req.body);
  return created({ id: engineOf(deps).add(account, document).id });
};

const deleteScenarios: Handler<'sandboxDeleteScenarios'> = ({ deps, account }) => ok({ deleted: engineOf(deps).removeOwn(account) });

const deleteScenario: Handler<'sandboxDeleteScenario'> = ({ deps, account, params }) => {
  if (!engineOf(deps).remove(account, params.id)) {
    throw new ApiError(Errors.notFound, { message: `No scenario with id ${params.id} applies to this account.` });
  }
  return ok({ deleted: 1 });
};

export const scenariosFeature: Feature = {
  name: 'scenarios',
  control: {
    sandboxListScenarios: listScenarios,
    sandboxLoadScenario: loadScenario,
    sandboxDeleteScenarios: deleteScenarios,
    sandboxDeleteScenario: deleteScenario,
  },
  install(deps) {
    const engine = new ScenarioEngine(deps);
    // A bad --scenario file stops the start with the reason (readScenarioArgument throws).
    engine.setGlobals((deps.config.scenarios ?? []).map((arg) => readScenarioArgument(arg)));
    deps.services.set(SCENARIO_ENGINE, engine);
    const hook: DeliveryFaultHook = (account, attempt) => engine.deliveryFault(account, attempt);
    deps.services.set(DELIVERY_FAULTS, hook);
    const duplicates: DeliveryDuplicatesHook = (account, delivery) => engine.deliveryDuplicates(account, delivery);
    deps.services.set(DELIVERY_DUPLICATES, duplicates);
    const drills: DeliveryDrillsHook = (account, attempt) => engine.deliveryDrills(account, attempt);
    deps.services.set(DELIVERY_DRILLS, drills);
  },
  // Prefer first: an explicit per-request instruction wins, and the scenario counters do not count it.
  interceptors: [preferInterceptor, scenarioInterceptor],
};
