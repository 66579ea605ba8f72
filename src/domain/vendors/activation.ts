// Owns vendor deactivation and reactivation: which bills they affect (affected_bill_count), the 422
// cases, and what happens to the vendor's unsent payments (held, then released, also when it submits its data).
import type { Deps } from '../../deps.js';
import { ApiError, Errors } from '../../errors.js';
import type { Account } from '../../store/store.js';
import { bills, type BillStatus } from '../bills/bills.js';
import { replaceVendorPayments, vendorHasPaymentInProcessing } from '../vendor-payments/vendor-payments.js';
import { transition } from '../machine.js';
import {
  getVendor, setVendorStatus, submitDataRequest, upsertBankAccount, vendorMachine, type BankAccountInput, type DataRequestSubmission, type Vendor, type VendorDataRequest,
} from './vendors.js';

/** Sandbox choice: the bills a status change affects are the vendor's open bills, those still to be paid. */
const OPEN_BILL: ReadonlySet<BillStatus> = new Set(['draft', 'needs_approval', 'failed']);

function openBillCount(account: Account, vendorId: string): number {
  let count = 0;
  for (const bill of bills(account).newest({ field: 'vendor_id', value: vendorId })) if (OPEN_BILL.has(bill.status)) count += 1;
  return count;
}

/** Deactivate: unsent payments go to hold; refused (422) while one of its payments is processing. */
export function deactivateVendor(deps: Deps, account: Account, id: string): { vendor_id: string; affected_bill_count: number } {
  const vendor = getVendor(account, id);
  transition(vendorMachine, vendor.status, 'deactivate');
  if (vendorHasPaymentInProcessing(account, id)) {
    throw new ApiError(Errors.vendorInvalidState, { message: `Vendor ${id} has a payment in processing; it can be deactivated once the payment has settled.`, validation_errors: { id: 'has a payment in processing' } });
  }
  setVendorStatus(account, id, 'deactivate');
  replaceVendorPayments(deps, account, id);
  return { vendor_id: id, affected_bill_count: openBillCount(account, id) };
}

/** Reactivate: payments held because the vendor was inactive are released (if it has a bank account). */
export function reactivateVendor(deps: Deps, account: Account, id: string): { vendor_id: string; affected_bill_count: number } {
  setVendorStatus(account, id, 'reactivate');
  replaceVendorPayments(deps, account, id, { onlyHeld: true });
  return { vendor_id: id, affected_bill_count: openBillCount(account, id) };
}

/** Upsert the bank account; payments held for want of one are released. */
export function saveBankAccount(deps: Deps, account: Account, id: string, input: BankAccountInput): Vendor {
  const vendor = upsertBankAccount(account, id, input);
  replaceVendorPayments(deps, account, id, { onlyHeld: true });
  return vendor;
}

/** The vendor answers a data request (control plane); payments held for want of its data are released. */
export function submitVendorData(deps: Deps, account: Account, vendorId: string, requestId: string, input: DataRequestSubmission): { vendor: Vendor; request: VendorDataRequest } {
  const submitted = submitDataRequest(account, vendorId, requestId, input);
  replaceVendorPayments(deps, account, submitted.vendor.id, { onlyHeld: true });
  return submitted;
}
