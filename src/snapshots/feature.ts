// Owns account snapshots on the control plane (/_sandbox/snapshots): save the caller's account,
// import an exported document, list, export, restore into the caller's account or the partner's
// other one, delete. Snapshots belong to the partner of the account the call names; another
// partner's answer 404. A restore replaces the account in one unit of work, as a reset does
// (Store.replaceAccount): work still under way on the old one writes nothing (409 account_replaced).
import type { Deps } from '../deps.js';
import type { Feature } from '../feature.js';
import { invalidFields } from '../errors.js';
import { created, ok, type Handler } from '../http/context.js';
import { capture, checkDocument, exportDocument, fromDocument, materialise, type SavedSnapshot } from './document.js';
import { SnapshotTable } from './table.js';

export const SNAPSHOTS = 'snapshots';

export function snapshotTable(deps: Deps): SnapshotTable {
  return deps.services.installed(SNAPSHOTS);
}

const listSnapshots: Handler<'sandboxListSnapshots'> = ({ deps, account }) => ok({ data: snapshotTable(deps).list(account.partnerId) });

/**
 * Save (`name`) or import (`document`). The account is read in one synchronous step as the request
 * runs; with --data the answer waits for the snapshot's file.
 */
const saveSnapshot: Handler<'sandboxSaveSnapshot'> = async ({ deps, account, body }) => {
  const input = body ?? {};
  const now = new Date(deps.realNow()).toISOString();
  let saved: SavedSnapshot;
  if (input.document !== undefined) {
    const doc = checkDocument(input.document);
    saved = fromDocument(doc, account.partnerId, input.name ?? doc.name, now);
  } else {
    if (input.name === undefined) throw invalidFields({ name: 'is required: the name to save the account under (or send document to import an export)' });
    // An account a reset replaced as this request began would be read as it was before the reset.
    account.assertCurrent();
    saved = capture(account, input.name, now);
  }
  await snapshotTable(deps).put(saved, input.replace === true);
  return created(saved.summary);
};

const exportSnapshot: Handler<'sandboxExportSnapshot'> = ({ deps, account, params }) => ok(exportDocument(snapshotTable(deps).require(account.partnerId, params.name)));

/** Into the caller's account, or the partner's account in `environment`: one unit of work, answered once it is in place. */
const restoreSnapshot: Handler<'sandboxRestoreSnapshot'> = ({ deps, account, params, body }) => {
  const saved = snapshotTable(deps).require(account.partnerId, params.name);
  const environment = body?.environment ?? account.environment;
  const target = environment === account.environment ? account : deps.store.account(account.partnerId, environment);
  const restored = deps.store.replaceAccount(target, materialise(saved.body, target));
  return ok({ name: saved.summary.name, account: restored.id, counts: saved.summary.counts });
};

const deleteSnapshot: Handler<'sandboxDeleteSnapshot'> = async ({ deps, account, params }) => {
  await snapshotTable(deps).remove(account.partnerId, params.name);
  return ok({ deleted: 1 });
};

export const snapshotsFeature: Feature = {
  name: 'snapshots',
  control: {
    sandboxListSnapshots: listSnapshots,
    sandboxSaveSnapshot: saveSnapshot,
    sandboxExportSnapshot: exportSnapshot,
    sandboxRestoreSnapshot: restoreSnapshot,
    sandboxDeleteSnapshot: deleteSnapshot,
  },
  install(deps) {
    const table = new SnapshotTable(deps.config.dataFile ? `${deps.config.dataFile}.snapshots` : undefined, deps.log);
    table.load();
    deps.services.set(SNAPSHOTS, table);
    // A full reset is everything back to the start state: no partner keeps a snapshot.
    deps.store.onResetAll(() => table.clear());
  },
};
