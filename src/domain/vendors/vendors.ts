// Owns vendor records, the vendor state machine (active <-> inactive), the vendor's one bank account
// (stored whole because payment outcomes depend on it, shown only masked) and vendor data requests.
import type { Deps } from '../../deps.js';
import { ApiError, Errors, invalidFields } from '../../errors.js';
import { defineCollection, type Account } from '../../store/store.js';
import { applyTransition, defineMachine, transition } from '../machine.js';
import { pick } from '../customers/customers.js';
import { LIMITS } from '../../limits.js';

export const VENDOR_FIELDS = ['name', 'email', 'phone', 'category', 'tax_id', 'street_address', 'city', 'state', 'postal_code', 'country'] as const;
export type VendorField = (typeof VENDOR_FIELDS)[number];
export type VendorOrigin = 'manual' | 'ocr' | 'accounting_integration';
export type VendorStatus = 'active' | 'inactive';

export interface BankAccountRecord {
  id: string;
  payment_method_id: string;
  /** The full number: kept because test account numbers decide payment failures; never shown. */
  account_number: string;
  routing_number: string;
  account_type: 'checking' | 'savings';
  bank_name: string | null;
  updated_at: string;
}

export interface Vendor {
  id: string;
  created_at: string;
  updated_at: string;
  status: VendorStatus;
  origin: VendorOrigin;
  name: string;
  /** Lower-cased email and name: indexes used by OCR matching and tax_id uniqueness. */
  email_key: string;
  name_key: string;
  tax_id_key: string;
  email?: string;
  phone?: string;
  category?: string;
  tax_id?: string;
  street_address?: string;
  city?: string;
  state?: string;
  postal_code?: string;
  country?: string;
  bank_account: BankAccountRecord | null;
}

export type DataRequestStatus = 'pending' | 'submitted' | 'expired';

export interface VendorDataRequest {
  id: string;
  vendor_id: string;
  status: DataRequestStatus;
  created_at: string;
  expires_at: string;
  submitted_at: string | null;
}

export const vendors = defineCollection<Vendor>('vendors', ['email_key', 'name_key', 'tax_id_key', 'status']);
export const vendorDataRequests = defineCollection<VendorDataRequest>('vendor_data_requests', ['vendor_id']);

// The spec gives deactivate a 422 and no conflict status, so an illegal move answers 422.
export const vendorMachine = defineMachine({
  resource: 'vendor',
  states: ['active', 'inactive'] as const,
  events: ['deactivate', 'reactivate'] as const,
  table: { active: { deactivate: 'inactive' }, inactive: { reactivate: 'active' } },
  refusal: Errors.vendorInvalidState,
});

export const dataRequestMachine = defineMachine({
  resource: 'vendor data request',
  states: ['pending', 'submitted', 'expired'] as const,
  events: ['resend', 'submit', 'expire'] as const,
  internal: ['expire'],
  table: {
    pending: { resend: 'pending', submit: 'submitted', expire: 'expired' },
    // A resend re-opens an expired request with a fresh expiry, as re-sending the email would.
    expired: { resend: 'pending' },
    submitted: {},
  },
});

/** Sandbox choice: a data request stays open this long after it is created or resent. */
export const DATA_REQUEST_TTL_MS = 7 * 24 * 3600 * 1000;
export const DATA_REQUEST_EXPIRE_JOB = 'vendor_data_request.expire';

/** The lower-cased, trimmed form the email, name and tax_id indexes hold. */
export const vendorKey = (value: string | undefined) => (value ?? '').trim().toLowerCase();

export function getVendor(account: Account, id: string): Vendor {
  return vendors(account).require(id, 'vendor');
}

/** The vendor as the API shows it: no bank account, no internal keys. */
export function vendorView(vendor: Vendor) {
  const shown: Record<string, unknown> = { id: vendor.id, name: vendor.name };
  for (const field of VENDOR_FIELDS) if (field !== 'name') shown[field] = vendor[field] ?? null;
  return { ...shown, is_active: vendor.status === 'active', origin: vendor.origin, created_at: vendor.created_at, updated_at: vendor.updated_at };
}

/** The masked bank account: `account_mask` shows only the last four digits. */
export function bankAccountView(bank: BankAccountRecord) {
  return {
    id: bank.id,
    account_mask: `****${bank.account_number.slice(-4)}`,
    account_type: bank.account_type,
    bank_name: bank.bank_name,
    payment_method_id: bank.payment_method_id,
  };
}

export interface BankAccountInput {
  account_number: string;
  routing_number: string;
  account_type?: 'checking' | 'savings';
  bank_name?: string;
}

export type VendorInput = Partial<Record<VendorField, string>> & { bank_account?: BankAccountInput };

/** ABA routing numbers carry a checksum: 3-7-1 weights over the nine digits sum to a multiple of 10. */
export function validRoutingNumber(routing: string): boolean {
  if (!/^[0-9]{9}$/.test(routing)) return false;
  const d = [...routing].map(Number);
  return (3 * (d[0] + d[3] + d[6]) + 7 * (d[1] + d[4] + d[7]) + (d[2] + d[5] + d[8])) % 10 === 0;
}

function checkBankAccount(input: BankAccountInput, prefix: string): void {
  if (!validRoutingNumber(input.routing_number)) {
    throw invalidFields({ [`${prefix}routing_number`]: 'is not a valid ABA routing number (checksum failed)' });
  }
}

function checkTaxIdFree(account: Account, taxId: string | undefined, self?: string): void {
  if (!taxId) return;
  for (const other of vendors(account).newest({ field: 'tax_id_key', value: vendorKey(taxId) })) {
    if (other.id !== self) {
      throw new ApiError(Errors.unprocessable, { message: `A vendor with this tax_id already exists (${other.id}).`, validation_errors: { tax_id: 'is already used by another vendor' } });
    }
  }
}

/** Every rule createVendor applies, without creating (accounting sync checks a whole batch first). */
function checkVendorInput(account: Account, input: VendorInput): void {
  if (input.bank_account) checkBankAccount(input.bank_account, 'bank_account.');
  checkTaxIdFree(account, input.tax_id);
}

export function createVendor(_deps: Deps, account: Account, input: VendorInput, { origin }: { origin: VendorOrigin } = { origin: 'manual' }): Vendor {
  checkVendorInput(account, input);
  const now = account.clock.iso();
  const fields = pick(input, VENDOR_FIELDS) as Partial<Record<VendorField, string>>;
  const vendor: Vendor = {
    id: account.newId('ven'),
    created_at: now,
    updated_at: now,
    status: 'active',
    origin,
    ...fields,
    name: input.name ?? '',
    email_key: vendorKey(input.email),
    name_key: vendorKey(input.name),
    tax_id_key: vendorKey(input.tax_id),
    bank_account: input.bank_account ? newBankAccount(account, input.bank_account) : null,
  };
  return vendors(account).insert(vendor);
}

function newBankAccount(account: Account, input: BankAccountInput, previous?: BankAccountRecord | null): BankAccountRecord {
  return {
    // An upsert keeps the account's ids, so payments that name its payment method stay valid.
    id: previous?.id ?? account.newId('vba'),
    payment_method_id: previous?.payment_method_id ?? account.newId('pm'),
    account_number: input.account_number,
    routing_number: input.routing_number,
    account_type: input.account_type ?? 'checking',
    bank_name: input.bank_name ?? null,
    updated_at: account.clock.iso(),
  };
}

export function updateVendor(account: Account, id: string, patch: VendorInput): Vendor {
  const vendor = getVendor(account, id);
  const changes = pick(patch, VENDOR_FIELDS) as Partial<Vendor>;
  if (!Object.keys(changes).length) return vendor;
  if (changes.tax_id !== undefined) checkTaxIdFree(account, changes.tax_id, id);
  if (changes.email !== undefined) changes.email_key = vendorKey(changes.email);
  if (changes.name !== undefined) changes.name_key = vendorKey(changes.name);
  if (changes.tax_id !== undefined) changes.tax_id_key = vendorKey(changes.tax_id);
  return vendors(account).update(id, { ...changes, updated_at: account.clock.iso() });
}

/** Create or replace the bank account; the caller releases payments held for want of one. */
export function upsertBankAccount(account: Account, id: string, input: BankAccountInput): Vendor {
  const vendor = getVendor(account, id);
  checkBankAccount(input, '');
  return vendors(account).update(id, { bank_account: newBankAccount(account, input, vendor.bank_account), updated_at: account.clock.iso() });
}

export function requireBankAccount(account: Account, id: string): BankAccountRecord {
  const vendor = getVendor(account, id);
  if (!vendor.bank_account) throw new ApiError(Errors.notFound, { message: `Vendor ${id} has no bank account.` });
  return vendor.bank_account;
}

export function setVendorStatus(account: Account, id: string, event: 'deactivate' | 'reactivate'): Vendor {
  return applyTransition(vendorMachine, vendors(account), getVendor(account, id), event, account.clock.iso());
}

/** Exact (case-insensitive) match on email first, then on name. */
export function findVendorByEmailOrName(account: Account, email: string | null, name: string | null): Vendor | undefined {
  if (email) for (const v of vendors(account).newest({ field: 'email_key', value: vendorKey(email) })) return v;
  if (name) for (const v of vendors(account).newest({ field: 'name_key', value: vendorKey(name) })) return v;
  return undefined;
}

// ---- data requests -------------------------------------------------------------------------------

export function dataRequestView(request: VendorDataRequest) {
  return {
    id: request.id,
    vendor_id: request.vendor_id,
    status: request.status,
    created_at: request.created_at,
    expires_at: request.expires_at,
    submitted_at: request.submitted_at,
  };
}

function scheduleExpiry(deps: Deps, account: Account, request: VendorDataRequest): void {
  deps.scheduler.schedule(account, DATA_REQUEST_EXPIRE_JOB, Date.parse(request.expires_at), { request_id: request.id, expires_at: request.expires_at });
}

export function createDataRequest(deps: Deps, account: Account, vendorId: string): VendorDataRequest {
  getVendor(account, vendorId);
  const now = account.clock.iso();
  const request: VendorDataRequest = {
    id: account.newId('vdr'),
    vendor_id: vendorId,
    status: 'pending',
    created_at: now,
    expires_at: new Date(Date.parse(now) + DATA_REQUEST_TTL_MS).toISOString(),
    submitted_at: null,
  };
  vendorDataRequests(account).insert(request);
  scheduleExpiry(deps, account, request);
  return request;
}

function getDataRequest(account: Account, vendorId: string, requestId: string): VendorDataRequest {
  getVendor(account, vendorId);
  const request = vendorDataRequests(account).get(requestId);
  if (!request || request.vendor_id !== vendorId) throw new ApiError(Errors.notFound, { message: `No data request with id ${requestId} for vendor ${vendorId}.` });
  return request;
}

/** The vendor's data requests, newest first: at most LIMITS.vendorDataRequestsShown. */
export function listDataRequests(account: Account, vendorId: string): VendorDataRequest[] {
  getVendor(account, vendorId);
  const shown: VendorDataRequest[] = [];
  for (const request of vendorDataRequests(account).newest({ field: 'vendor_id', value: vendorId })) {
    if (shown.length >= LIMITS.vendorDataRequestsShown) break;
    shown.push(request);
  }
  return shown;
}

/** Resend: the vendor gets the email again and the request is open for another full period. */
export function resendDataRequest(deps: Deps, account: Account, vendorId: string, requestId: string): VendorDataRequest {
  const request = getDataRequest(account, vendorId, requestId);
  const status = transition(dataRequestMachine, request.status, 'resend');
  const expires_at = new Date(account.clock.nowMs() + DATA_REQUEST_TTL_MS).toISOString();
  vendorDataRequests(account).update(request.id, { status, expires_at });
  scheduleExpiry(deps, account, request);
  return request;
}

/** Due job: a request still pending at its (latest) expiry becomes expired. */
export function expireDataRequest(account: Account, payload: { request_id?: unknown; expires_at?: unknown }): void {
  const request = vendorDataRequests(account).get(String(payload.request_id));
  // A resend moved the expiry: this job is stale.
  if (!request || request.status !== 'pending' || request.expires_at !== payload.expires_at) return;
  vendorDataRequests(account).update(request.id, { status: transition(dataRequestMachine, request.status, 'expire') });
}

export interface DataRequestSubmission {
  email?: string;
  phone?: string;
  tax_id?: string;
  bank_account?: BankAccountInput;
}

/** The vendor answers: fields saved, bank account upserted, request submitted (checks first, then writes). */
export function submitDataRequest(account: Account, vendorId: string, requestId: string, input: DataRequestSubmission): { vendor: Vendor; request: VendorDataRequest } {
  const request = getDataRequest(account, vendorId, requestId);
  const status = transition(dataRequestMachine, request.status, 'submit');
  if (input.bank_account) checkBankAccount(input.bank_account, 'bank_account.');
  if (input.tax_id !== undefined) checkTaxIdFree(account, input.tax_id, vendorId);
  updateVendor(account, vendorId, pick(input, ['email', 'phone', 'tax_id']));
  if (input.bank_account) upsertBankAccount(account, vendorId, input.bank_account);
  vendorDataRequests(account).update(request.id, { status, submitted_at: account.clock.iso() });
  return { vendor: getVendor(account, vendorId), request };
}
