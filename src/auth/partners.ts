// Owns partners and their API keys: the default partner, creation, rename and revoke, and the
// check of a client secret. Secrets are stored as SHA-256 digests and shown once, at creation. Every
// write is one unit of work on the store's globals (Store.globalTransaction), and the data file logs
// only the partner or key that changed, never the whole table.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { DefaultCredentials, Environment } from '../config.js';
import { ENVIRONMENTS } from '../config.js';
import { parseBasic } from './authorization-header.js';
import { ApiError, Errors } from '../errors.js';
import { LIMITS } from '../limits.js';
import type { Account, KeyRecord, PartnerRecord, Store, StoreData } from '../store/store.js';

export const DEFAULT_PARTNER_ID = 'ptn_default';

export interface IssuedKey {
  key: KeyRecord;
  client_secret: string;
}

export class Partners {
  /** Keys per partner, for the cap: counted from the data it was made from (a reset or a reload makes new data). */
  private readonly keysByPartner = new Map<string, number>();
  private keysCounted: StoreData | undefined;

  constructor(private readonly store: Store, private readonly nowIso: () => string) {}

  /** Make sure the default partner and its two full-access keys exist (idempotent). */
  ensureDefault(credentials: DefaultCredentials): void {
    this.store.globalTransaction(() => {
      if (!Object.hasOwn(this.store.data.partners, DEFAULT_PARTNER_ID)) {
        this.store.putPartner({ id: DEFAULT_PARTNER_ID, name: 'Default partner', rate_limit: null, created_at: this.nowIso() });
      }
      for (const environment of ENVIRONMENTS) {
        const { client_id, client_secret } = credentials[environment];
        const existing = this.find(client_id);
        if (!existing || existing.secret_sha256 !== digest(client_secret) || existing.revoked_at) {
          this.store.putKey(this.keyRecord(DEFAULT_PARTNER_ID, environment, client_id, client_secret, 'Default key', null));
        }
      }
    });
  }

  /**
   * A partner, seen by a caller speaking for `within` (undefined: any partner, the admin). Another
   * partner's id is the same 404 as an unknown one, so a caller learns nothing about partners not its own.
   */
  partner(id: string, within?: string): PartnerRecord {
    const found = Object.hasOwn(this.store.data.partners, id) ? this.store.data.partners[id] : undefined;
    if (!found || (within !== undefined && found.id !== within)) throw new ApiError(Errors.notFound, { message: `No partner with id ${id}.` });
    return found;
  }

  createPartner(name: string | undefined, rateLimit: number | undefined): { partner: PartnerRecord; keys: Record<Environment, IssuedKey> } {
    return this.store.globalTransaction(() => {
      // Each partner brings two accounts: a server holds a bounded number (a reset empties it).
      if (Object.keys(this.store.data.partners).length >= LIMITS.partnersPerServer) {
        throw new ApiError(Errors.unprocessable, {
          message: `The sandbox holds at most ${LIMITS.partnersPerServer} partners (the default one included); POST /_sandbox/reset without a token removes the others.`,
        });
      }
      const id = `ptn_${randomBytes(8).toString('hex')}`;
      const partner: PartnerRecord = { id, name: name ?? `Partner ${id.slice(4, 10)}`, rate_limit: rateLimit ?? null, created_at: this.nowIso() };
      this.store.putPartner(partner);
      const keys = {
        production: this.createKey(id, 'production', 'Default key', null),
        demo: this.createKey(id, 'demo', 'Default key', null),
      };
      return { partner, keys };
    });
  }

  /** A new key for a partner; 422 limit_reached once the partner holds LIMITS.keysPerPartner keys (revoked ones included: they stay listed). */
  createKey(partnerId: string, environment: Environment, name: string | undefined, scopes: string[] | null, within?: string): IssuedKey {
    return this.store.globalTransaction(() => {
      this.partner(partnerId, within);
      const held = this.keyCount(partnerId);
      if (held >= LIMITS.keysPerPartner) {
        throw new ApiError(Errors.limitReached, {
          message: `The partner holds ${held} API keys, the most it may hold (revoked keys included); a full reset (POST /_sandbox/reset without a token) removes them.`,
          validation_errors: { id: `already holds ${LIMITS.keysPerPartner} keys` },
        });
      }
      const prefix = environment === 'demo' ? 'demo_ck' : 'ck';
      const clientId = `${prefix}_${randomBytes(10).toString('hex')}`;
      const secret = `cs_${randomBytes(24).toString('base64url')}`;
      const key = this.keyRecord(partnerId, environment, clientId, secret, name ?? 'API key', scopes);
      this.store.putKey(key);
      this.keysByPartner.set(partnerId, held + 1);
      this.store.undoableGlobal(() => this.keysByPartner.set(partnerId, held));
      return { key, client_secret: secret };
    });
  }

  /** A key, seen by a caller speaking for `within` (undefined: any partner): another partner's key is a 404. */
  key(clientId: string, within?: string): KeyRecord {
    const found = this.find(clientId);
    if (!found || (within !== undefined && found.partner_id !== within)) throw new ApiError(Errors.notFound, { message: `No key with client_id ${clientId}.` });
    return found;
  }

  rename(clientId: string, name: string, within?: string): KeyRecord {
    return this.store.globalTransaction(() => {
      const key = { ...this.key(clientId, within), name };
      this.store.putKey(key);
      return key;
    });
  }

  revoke(clientId: string, within?: string): KeyRecord {
    return this.store.globalTransaction(() => {
      const found = this.key(clientId, within);
      if (found.revoked_at) throw new ApiError(Errors.conflict, { message: `The key ${clientId} was already revoked.`, validation_errors: { client_id: 'is revoked' } });
      const key = { ...found, revoked_at: this.nowIso() };
      this.store.putKey(key);
      return key;
    });
  }

  /** Keys a partner holds (revoked ones included), counted once per store data and kept up to date by createKey. */
  private keyCount(partnerId: string): number {
    if (this.keysCounted !== this.store.data) {
      this.keysByPartner.clear();
      for (const key of Object.values(this.store.data.keys)) this.keysByPartner.set(key.partner_id, (this.keysByPartner.get(key.partner_id) ?? 0) + 1);
      this.keysCounted = this.store.data;
    }
    return this.keysByPartner.get(partnerId) ?? 0;
  }

  /** The key these credentials name, if the secret matches and the key is live; else undefined. */
  authenticate(clientId: string, secret: string): KeyRecord | undefined {
    const key = this.find(clientId);
    if (!key || key.revoked_at) return undefined;
    const expected = Buffer.from(key.secret_sha256, 'hex');
    const given = Buffer.from(digest(secret), 'hex');
    return timingSafeEqual(expected, given) ? key : undefined;
  }

  /** A known key, or undefined (never a 404: callers decide what an unknown key means). */
  find(clientId: string): KeyRecord | undefined {
    return Object.hasOwn(this.store.data.keys, clientId) ? this.store.data.keys[clientId] : undefined;
  }

  /**
   * The account of the key a Basic header names, in this environment, without checking its secret:
   * the journal and scenario rules file a token request under its would-be account.
   */
  accountNamedByBasic(header: string | undefined, environment: string): Account | undefined {
    const credentials = parseBasic(header);
    const key = credentials && this.find(credentials.clientId);
    return key && key.environment === environment ? this.store.account(key.partner_id, key.environment) : undefined;
  }

  /** The key is known and not revoked (checked on every request a token makes). */
  isLive(clientId: string): boolean {
    const key = this.find(clientId);
    return Boolean(key && !key.revoked_at);
  }

  /** Requests per second allowed for a key's partner: the partner's own limit, else the server's. */
  rateLimitFor(partnerId: string, serverDefault: number): number {
    return this.store.data.partners[partnerId]?.rate_limit ?? serverDefault;
  }

  private keyRecord(partnerId: string, environment: Environment, clientId: string, secret: string, name: string, scopes: string[] | null): KeyRecord {
    return { client_id: clientId, secret_sha256: digest(secret), partner_id: partnerId, environment, name, scopes, created_at: this.nowIso(), revoked_at: null };
  }
}

/** The key as the control plane shows it: everything but the secret. */
export function publicKey(key: KeyRecord) {
  const { secret_sha256: _secret, ...shown } = key;
  return shown;
}

function digest(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}
