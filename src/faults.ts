// Owns the seam between the scenario engine and the code it can fault: webhook delivery asks the
// registered hook (if any) whether an attempt should fail before it is sent.
import type { Deps } from './deps.js';
import type { Account } from './store/store.js';

/** How a webhook attempt should fail: as if the receiver answered `status`, or timed out. */
export type DeliveryFault = { status: number } | { timeout: true };

export type DeliveryFaultHook = (account: Account, attempt: { topic: string; url: string; event_id: string }) => DeliveryFault | undefined;

export const DELIVERY_FAULTS = 'deliveryFaults';

export function deliveryFault(deps: Deps, account: Account, attempt: { topic: string; url: string; event_id: string }): DeliveryFault | undefined {
  const hook = deps.services.get(DELIVERY_FAULTS);
  return hook?.(account, attempt);
}
