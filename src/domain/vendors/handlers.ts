// Owns the vendor operations: each a short story over vendors.ts and activation.ts.
import { created, ok, type ApiHandlers, type Handler } from '../../http/context.js';
import { pageParams } from '../../http/pagination.js';
import { deactivateVendor, reactivateVendor, saveBankAccount } from './activation.js';
import {
  bankAccountView, createDataRequest, createVendor, dataRequestView, getVendor, listDataRequests, requireBankAccount,
  resendDataRequest, updateVendor, vendorView, vendors, type Vendor,
} from './vendors.js';

const listVendors: Handler<'listVendors'> = ({ account, query }) => {
  const name = query.name?.toLowerCase();
  const filter = (v: Vendor) =>
    (query.is_active === undefined || (v.status === 'active') === query.is_active) &&
    (!query.origin || v.origin === query.origin) &&
    (!name || v.name.toLowerCase().includes(name));
  const where = query.is_active === undefined ? undefined : { field: 'status', value: query.is_active ? 'active' : 'inactive' };
  const page = vendors(account).page({ ...pageParams(query), filter, where });
  return ok({ ...page, data: page.data.map(vendorView) });
};

export const vendorHandlers = {
  listVendors,
  createVendor: ({ deps, account, body }) => created(vendorView(createVendor(deps, account, body, { origin: 'manual' }))),
  getVendor: ({ account, params }) => ok(vendorView(getVendor(account, params.id))),
  updateVendor: ({ account, params, body }) => ok(vendorView(updateVendor(account, params.id, body ?? {}))),
  getVendorBankAccount: ({ account, params }) => ok(bankAccountView(requireBankAccount(account, params.id))),
  upsertVendorBankAccount: ({ deps, account, params, body }) => {
    const vendor = saveBankAccount(deps, account, params.id, body);
    return ok(bankAccountView(vendor.bank_account!));
  },
  createVendorDataRequest: ({ deps, account, params }) => created({ id: createDataRequest(deps, account, params.id).id }),
  listVendorDataRequests: ({ account, params }) => ok({ data: listDataRequests(account, params.id).map(dataRequestView) }),
  resendVendorDataRequest: ({ deps, account, params }) => {
    resendDataRequest(deps, account, params.id, params.request_id);
    return ok({ success: true });
  },
  deactivateVendor: ({ deps, account, params }) => ok(deactivateVendor(deps, account, params.id)),
  reactivateVendor: ({ deps, account, params }) => ok(reactivateVendor(deps, account, params.id)),
} satisfies ApiHandlers;
