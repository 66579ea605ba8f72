// The transition-table helpers (src/domain/machine.ts) on a small table of their own: the next
// state, the refusal (its template, message and validation_errors), the allowed events named
// without the sandbox's internal ones, and a state the table does not know. The resources' own
// tables are walked pair by pair over HTTP in their test files; these pin the helpers themselves.
import { describe, expect, it } from '@jest/globals';
import { allowedEvents, applyTransition, canTransition, defineMachine, transition } from '../src/domain/machine.js';
import { Collection, type CollectionChange } from '../src/store/collection.js';
import { ApiError, Errors } from '../src/errors.js';

const door = defineMachine({
  resource: 'door',
  states: ['open', 'closed', 'locked', 'bricked'] as const,
  events: ['close', 'open', 'lock', 'unlock', 'rot'] as const,
  internal: ['rot'],
  table: {
    open: { close: 'closed' },
    closed: { open: 'open', lock: 'locked', rot: 'bricked' },
    locked: { unlock: 'closed', rot: 'bricked' },
    bricked: {},
  },
});

const strict = defineMachine({ ...door, internal: undefined, refusal: Errors.invalidState400 });

function refusal(run: () => unknown): ApiError {
  try {
    run();
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('transition tables', () => {
  it('moves as the table says, and canTransition agrees with it', () => {
    expect(transition(door, 'open', 'close')).toBe('closed');
    expect(transition(door, 'closed', 'lock')).toBe('locked');
    expect(transition(door, 'locked', 'rot')).toBe('bricked');
    expect(canTransition(door, 'open', 'close')).toBe(true);
    expect(canTransition(door, 'open', 'lock')).toBe(false);
    expect(canTransition(door, 'bricked', 'open')).toBe(false);
  });

  it('refuses an illegal move with 409 invalid_state naming the state and the events a partner may ask for (not the internal ones)', () => {
    const error = refusal(() => transition(door, 'closed', 'close'));
    expect(error.status).toBe(409);
    expect(error.template).toBe(Errors.conflict);
    expect(error.message).toBe('Cannot close a door whose status is closed; allowed: open, lock.');
    expect(error.body.validation_errors).toEqual({ status: 'is closed' });
  });

  it('says "none" when no partner event is allowed, and names internal events when the table marks none internal', () => {
    expect(refusal(() => transition(door, 'bricked', 'open')).message).toBe('Cannot open a door whose status is bricked; allowed: none.');
    expect(refusal(() => transition(door, 'locked', 'open')).message).toBe('Cannot open a door whose status is locked; allowed: unlock.');
    expect(refusal(() => transition(strict, 'locked', 'open')).message).toBe('Cannot open a door whose status is locked; allowed: unlock, rot.');
  });

  it('answers with the table\'s own refusal template when it has one', () => {
    const error = refusal(() => transition(strict, 'open', 'lock'));
    expect(error.status).toBe(400);
    expect(error.template).toBe(Errors.invalidState400);
    expect(error.body.validation_errors).toEqual({ status: 'is open' });
  });

  it('lists the allowed events of a state in table order, internal ones included', () => {
    expect(allowedEvents(door, 'closed')).toEqual(['open', 'lock', 'rot']);
    expect(allowedEvents(door, 'bricked')).toEqual([]);
  });

  it('treats a state missing from the table (an older data file) as allowing nothing, never as a crash', () => {
    const unknown = 'ajar' as unknown as 'open';
    expect(canTransition(door, unknown, 'close')).toBe(false);
    expect(allowedEvents(door, unknown)).toEqual([]);
    const error = refusal(() => transition(door, unknown, 'close'));
    expect(error.status).toBe(409);
    expect(error.message).toBe('Cannot close a door whose status is ajar; allowed: none.');
  });
});

describe('applyTransition', () => {
  type Door = { id: string; status: 'open' | 'closed' | 'locked' | 'bricked'; updated_at: string; note?: string };
  const doors = () => {
    const changes: CollectionChange[] = [];
    const collection = new Collection<Door>('doors', { items: new Map(), order: [] }, (change) => changes.push(change));
    const item = collection.insert({ id: 'door_1', status: 'open', updated_at: 'T0' });
    changes.length = 0;
    return { collection, item, changes };
  };

  it('writes the next status, the changes and the stamp in one update of the collection', () => {
    const { collection, item, changes } = doors();
    const moved = applyTransition(door, collection, item, 'close', 'T1', { note: 'shut' });
    expect(moved).toEqual({ id: 'door_1', status: 'closed', updated_at: 'T1', note: 'shut' });
    expect(collection.get('door_1')).toEqual(moved);
    expect(changes).toEqual([{ kind: 'update', item: moved }]);
  });

  it('writes nothing when the table refuses the move', () => {
    const { collection, item, changes } = doors();
    expect(refusal(() => applyTransition(door, collection, item, 'lock', 'T1', { note: 'never' })).status).toBe(409);
    expect(collection.get('door_1')).toEqual({ id: 'door_1', status: 'open', updated_at: 'T0' });
    expect(changes).toEqual([]);
  });
});
