// The webhook delivery state table, every (state, event) pair: a sent delivery never changes again.
import { describe, expect, it } from '@jest/globals';
import { canTransition, transition } from '../src/domain/machine.js';
import { deliveryMachine } from '../src/webhooks/history.js';

const expected: Record<string, Record<string, string | null>> = {
  pending: { delivered: 'sent', attempt_failed: 'failed', dropped: 'failed' },
  failed: { delivered: 'sent', attempt_failed: 'failed', dropped: 'failed' },
  sent: { delivered: null, attempt_failed: null, dropped: null },
};

describe('webhook delivery state table', () => {
  for (const state of deliveryMachine.states) {
    for (const event of deliveryMachine.events) {
      const next = expected[state][event];
      it(`${state} + ${event} -> ${next ?? 'refused'}`, () => {
        expect(canTransition(deliveryMachine, state, event)).toBe(next !== null);
        if (next) expect(transition(deliveryMachine, state, event)).toBe(next);
        else expect(() => transition(deliveryMachine, state, event)).toThrow(/sent/);
      });
    }
  }
});
