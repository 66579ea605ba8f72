// Owns the seam between the scenario engine and the code it can fault: webhook delivery asks the
// registered hooks (if any) whether an attempt should fail or be sent as a drill before it is sent,
// how many copies of an event to send after it was delivered, and which evolution drills reshape its body.
import type { Deps } from './deps.js';
import type { Account } from './store/store.js';
import type { DrillSet } from './scenarios/evolve.js';

/** A drill sends the attempt for real and then judges it as production would meet it (src/webhooks/drills.ts). */
export type AttemptDrill = 'timeout_after_delivery' | 'wrong_secret';

/**
 * What a webhook attempt meets: a failure without sending anything (as if the receiver answered
 * `status`, or timed out), or a drill: sent, the receiver answers, and the attempt fails anyway.
 */
export type DeliveryFault = { status: number } | { timeout: true } | { drill: AttemptDrill };

export interface AttemptFacts {
  topic: string;
  url: string;
  event_id: string;
}

export type DeliveryFaultHook = (account: Account, attempt: AttemptFacts) => DeliveryFault | undefined;

/** After an attempt delivered an event: how many copies of it to send before the next event (none: 0 or undefined). */
export type DeliveryDuplicatesHook = (account: Account, delivery: AttemptFacts) => number | undefined;

/** The evolution drills an attempt about to be sent is shaped by (none: undefined). */
export type DeliveryDrillsHook = (account: Account, attempt: AttemptFacts) => DrillSet | undefined;

export const DELIVERY_FAULTS = 'deliveryFaults';
export const DELIVERY_DRILLS = 'deliveryDrills';
export const DELIVERY_DUPLICATES = 'deliveryDuplicates';

export function deliveryFault(deps: Deps, account: Account, attempt: AttemptFacts): DeliveryFault | undefined {
  const hook = deps.services.get(DELIVERY_FAULTS);
  return hook?.(account, attempt);
}

export function deliveryDuplicates(deps: Deps, account: Account, delivery: AttemptFacts): number {
  const hook = deps.services.get(DELIVERY_DUPLICATES);
  return hook?.(account, delivery) ?? 0;
}

export function deliveryDrills(deps: Deps, account: Account, attempt: AttemptFacts): DrillSet | undefined {
  const hook = deps.services.get(DELIVERY_DRILLS);
  return hook?.(account, attempt);
}
