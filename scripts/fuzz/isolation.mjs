// Owns the isolation fuzz: randomized attempts to read or change another partner's, the other
// environment's or (on the checkout surface) another customer's objects through every operation
// that takes an id (a path id, a body or query `*_id` field), every hosted page, and the control
// plane with a token. Each attempt is a valid request of the attacker with one id replaced, sent
// twice: once with a made-up id of the same shape, once with the victim's real id. The answers must
// be the same (an object that exists elsewhere is as unknown as one that never existed), must not
// carry anything of the victim's, and the victim's stored data must not change.
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { buildWorld } from './world.mjs';
import { authHeaders, generate, pointers, poolOf, setAt, withRealIds } from './cases.mjs';
import { fieldKind } from './operations.mjs';
import { accountFingerprint, judge, routedOperation, checkerFor } from './checks.mjs';

/** Who attacks whom: attacker account, victim account, and the surfaces tried. */
const PAIRS = [
  { attacker: 'A:production', victim: 'B:production', why: 'another partner' },
  { attacker: 'A:production', victim: 'A:demo', why: 'the other environment' },
  { attacker: 'A:demo', victim: 'A:production', why: 'the other environment' },
  { attacker: 'B:production', victim: 'A:production', why: 'another partner' },
];

const PARTNER_KINDS = new Set(['client', 'partner']);
const ALWAYS = { int: () => 0, chance: () => true };
const accountIdOf = (world, name) => `${world.accounts[name].partner}:${world.accounts[name].env}`;

/** Every place an operation takes an id: its path parameters, body fields and query parameters. */
function slotsOf(op) {
  const slots = [];
  op.pathParams.forEach((p, index) => { if (p.kind !== 'unknown') slots.push({ where: 'path', index, kind: p.kind }); });
  for (const q of op.queryParams) {
    const kind = fieldKind(q.name, op.id);
    if (kind) slots.push({ where: 'query', name: q.name, kind });
  }
  const schema = op.body?.content['application/json'];
  if (schema) {
    const full = generate(schema, 1, op.resolve, { alwaysFakeOptionals: true });
    for (const path of pointers(full).slice(1)) {
      const key = [...path].reverse().find((k) => typeof k === 'string') ?? '';
      const kind = fieldKind(key, op.id);
      if (kind && !slots.some((s) => s.where === 'body' && s.key === key)) slots.push({ where: 'body', path: path.filter((k) => typeof k === 'string' || k === 0), key, kind });
    }
  }
  return slots;
}

/** A made-up id of the same shape as the real one (prefix kept, the rest from a hash). */
function fabricated(id, salt) {
  const cut = id.lastIndexOf('_') + 1;
  const tail = createHash('sha256').update(`${salt}|${id}`).digest('hex').slice(0, Math.max(4, id.length - cut));
  return `${id.slice(0, cut)}${tail}`;
}

/**
 * The first body the operation's own request validation accepts, else the first candidate: an
 * attempt on a path id must reach the handler's lookup, or it proves nothing (a body refused by the
 * schema is refused the same for every id).
 */
function acceptedBody(app, op, candidates) {
  const backend = (op.doc === 'control' ? app.locals.control : app.locals.api).backendFor();
  for (const body of candidates) {
    const result = backend.validateRequest({ method: op.method, path: op.template, headers: { 'content-type': 'application/json' }, body, query: {} }, op.id);
    if (!(result.errors ?? []).some((e) => String(e.instancePath ?? '').startsWith('/requestBody'))) return body;
  }
  return candidates[0];
}

function requestWith(app, op, world, attackerName, slot, value, salt) {
  const account = world.accounts[attackerName];
  const prefix = op.doc === 'control' ? '' : account.env === 'demo' ? '/demo' : '';
  const values = op.pathParams.map((p) => encodeURIComponent(poolOf(account, p.kind)[0] ?? 'none'));
  if (slot.where === 'path') values[slot.index] = encodeURIComponent(value);
  let i = 0;
  let path = `${prefix}${op.template.replace(/\{[^}]+\}/g, () => values[i++])}`;
  if (slot.where === 'query') path += `?${encodeURIComponent(slot.name)}=${encodeURIComponent(value)}`;
  const headers = authHeaders(op, world, attackerName, account);
  // X-Sandbox-Account names the attacker's own account (its token already does); other header
  // parameters (idempotency keys) get a value of their own per request.
  for (const h of op.headerParams) headers[h.name.toLowerCase()] = h.name.toLowerCase() === 'x-sandbox-account' ? `${account.partner}:${account.env}` : `iso-${salt}`;
  let body;
  const schema = op.body?.content['application/json'];
  if (schema) {
    const candidate = (seed, fakeOptionals) => {
      // Seed 0: the document's own example, which its schema accepts where a generator cannot (if/then rules).
      const raw = seed === 0 && op.bodyExample !== undefined ? structuredClone(op.bodyExample) : generate(schema, seed || 7, op.resolve, { alwaysFakeOptionals: fakeOptionals });
      let body0 = withRealIds(raw, account, ALWAYS, op.id);
      if (slot.where === 'body') body0 = setAt(body0, slot.path, (old) => (Array.isArray(old) ? [value] : value));
      // Each request its own idempotency key: the two of an attempt must not replay each other.
      if (body0 && typeof body0 === 'object' && 'idempotency_key' in body0) body0.idempotency_key = `iso-${salt}`;
      return body0;
    };
    // The same seeds for both requests of an attempt, so they differ only in the id.
    const value0 = slot.where === 'path'
      ? acceptedBody(app, op, [0, 7, 8, 9, 10, 11, 12, 13, 14].flatMap((seed) => [candidate(seed, true), candidate(seed, false)]))
      : candidate(7, true);
    body = JSON.stringify(value0);
    headers['content-type'] = 'application/json';
  }
  return { method: op.method, path, headers, body };
}

/** The hosted pages, reached with the attacker's signed link and another id in the path. */
function hostedRequests(world, attackerName, victimName, value, salt) {
  const attacker = world.accounts[attackerName];
  const [prLink, payLink, pdfLink] = attacker.ids.links.map((l) => new URL(l));
  const swap = (url, id) => `${url.pathname.replace(id, encodeURIComponent(value))}${url.search}`;
  const ownInvoice = attacker.ids.invoice[0];
  const ownRequest = attacker.ids.paymentRequest[0];
  return [
    { kind: 'invoice', method: 'GET', path: swap(payLink, ownInvoice) },
    { kind: 'invoice', method: 'POST', path: swap(payLink, ownInvoice), headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'method=card&card_provider_token=tok_visa' },
    { kind: 'invoice', method: 'GET', path: swap(pdfLink, ownInvoice) },
    { kind: 'paymentRequest', method: 'GET', path: swap(prLink, ownRequest) },
    { kind: 'paymentRequest', method: 'POST', path: swap(prLink, ownRequest), headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'method=card&card_provider_token=tok_visa' },
    // The victim's own link with the attacker's account named in it.
    { kind: 'self', method: 'GET', path: (() => { const u = new URL(world.accounts[victimName].ids.links[1]); u.searchParams.set('account', accountIdOf(world, attackerName)); return `${u.pathname}${u.search}`; })() },
  ].map((r) => ({ ...r, headers: r.headers ?? {}, salt }));
}

const normalise = (text, ...ids) => ids.reduce((t, id) => t.split(id).join('<ID>').split(encodeURIComponent(id)).join('<ID>'), text);

/** The objects of the account's second customer: out of reach of a checkout token for the first. */
function otherCustomer(account) {
  const card = [account.ids.card[1]];
  return { card, paymentMethod: card, invoice: [account.ids.invoice[2]], customer: [account.ids.customer[1]] };
}

/** Run `attempts` isolation attempts; answers the figures and samples of any leak. */
export async function runIsolation({ client, deps, app, operations, seed, attempts, credentials, checkers }) {
  const world = await buildWorld(client, { credentials });
  const targets = [];
  for (const op of operations) for (const slot of slotsOf(op)) targets.push({ op, slot });
  const picks = fc.sample(fc.record({ pair: fc.nat(PAIRS.length - 1), victimPick: fc.nat(), other: fc.boolean() }), { seed, numRuns: attempts * 3 });
  const report = { attempts: 0, leaks: 0, failures: 0, byStatus: {}, bySurface: {}, pathIds: { attempts: 0, notFound: 0, asUnknown: 0 }, samples: [], targets: targets.length };
  const victimTags = (name) => [name.replace(':', '-').toLowerCase()];

  for (let n = 0; report.attempts < attempts && n < picks.length; n++) {
    const { pair: pairIndex, victimPick, other } = picks[n];
    const pair = PAIRS[pairIndex];
    const hosted = n % 12 === 11;
    const salt = `${seed}-${n}`;
    let tries;
    let surface;
    let sameAccount = false;
    if (hosted) {
      const victim = world.accounts[pair.victim];
      const kinds = { invoice: victim.ids.invoice, paymentRequest: victim.ids.paymentRequest, self: ['-'] };
      const all = hostedRequests(world, pair.attacker, pair.victim, 'PLACEHOLDER', salt);
      const req = all[victimPick % all.length];
      const pool = kinds[req.kind];
      const victimId = pool[victimPick % pool.length];
      const build = (value) => ({ ...hostedRequests(world, pair.attacker, pair.victim, value, salt)[victimPick % all.length] });
      tries = { victimId, fake: req.kind === 'self' ? '-' : fabricated(victimId, salt), build, self: req.kind === 'self' };
      surface = `hosted ${req.method} ${req.kind}`;
    } else {
      const { op, slot } = targets[n % targets.length];
      // Keys and partners belong to a partner, not to one environment: only another partner's are out of reach.
      if (PARTNER_KINDS.has(slot.kind) && world.accounts[pair.attacker].partner === world.accounts[pair.victim].partner) continue;
      // The checkout surface: half the attempts aim at another customer of the same account.
      sameAccount = op.auth === 'checkout' && other;
      const pool = sameAccount ? otherCustomer(world.accounts[pair.attacker])[slot.kind] ?? [] : poolOf(world.accounts[pair.victim], slot.kind);
      if (!pool.length) continue;
      const victimId = pool[victimPick % pool.length];
      tries = { victimId, fake: fabricated(victimId, salt), build: (value) => requestWith(app, op, world, pair.attacker, slot, value, `${salt}-${value}`) };
      surface = `${op.id} ${slot.where}:${slot.kind}`;
    }
    const victimAccountId = accountIdOf(world, sameAccount ? pair.attacker : pair.victim);
    const why = sameAccount ? 'another customer of the checkout token\'s account' : pair.why;
    await deps.scheduler.idle();
    const before = accountFingerprint(deps, victimAccountId);
    const fakeReq = tries.build(tries.fake);
    const fake = await client.send(fakeReq);
    const realReq = tries.build(tries.victimId);
    const real = await client.send(realReq);
    await deps.scheduler.idle();
    const after = accountFingerprint(deps, victimAccountId);
    report.attempts += 1;
    report.byStatus[real.status] = (report.byStatus[real.status] ?? 0) + 1;
    const bucket = (report.bySurface[surface.replace(/:.*/, '')] ??= {});
    if (surface.includes(' path:')) {
      report.pathIds.attempts += 1;
      if (real.status === 404) report.pathIds.notFound += 1;
      // Refused exactly as a made-up id is: 404, or the 400 of a body checked before the id is looked up.
      if (real.status >= 400 && `${real.status} ${real.json?.code ?? ''}` === `${fake.status} ${fake.json?.code ?? ''}`) report.pathIds.asUnknown += 1;
    }
    bucket[real.status] = (bucket[real.status] ?? 0) + 1;

    const leaks = [];
    if (after !== before) leaks.push('the victim account changed');
    const fakeAnswer = `${fake.status} ${fake.json?.code ?? ''}`;
    const realAnswer = `${real.status} ${real.json?.code ?? ''}`;
    if (!(fake.status >= 200 && fake.status < 300) && fakeAnswer !== realAnswer) leaks.push(`answers differ: made-up id ${fakeAnswer}, real id ${realAnswer}`);
    if (real.status >= 200 && real.status < 300 && (surface.includes('path:') || hosted)) leaks.push(`a path id of ${why} answered ${real.status}`);
    if (tries.self && real.status !== 403) leaks.push(`a signed link moved to another account answered ${real.status}`);
    if (!sameAccount) {
      const text = normalise(real.text, tries.victimId);
      for (const tag of victimTags(pair.victim)) if (text.includes(tag)) leaks.push(`the answer names ${tag}`);
      const victimIds = Object.values(world.accounts[pair.victim].ids).flat().filter((v) => typeof v === 'string' && v !== tries.victimId && /^[a-z]+_/.test(v));
      for (const id of victimIds) if (text.includes(id)) leaks.push(`the answer carries the victim's ${id}`);
    }
    if (leaks.length) {
      report.leaks += 1;
      if (report.samples.length < 20) report.samples.push(`${surface} (${why}): ${realReq.method} ${realReq.path.slice(0, 140)} -> ${real.status} ${real.text.slice(0, 200)}: ${leaks.join('; ')}`);
    }
    // The answers are judged like any other (5xx, HttpError body, documented status).
    if (!hosted) {
      for (const [res, req] of [[fake, fakeReq], [real, realReq]]) {
        const problems = judge({ res, operationId: routedOperation(app, req.method, req.path), checker: checkerFor(checkers, req.path), forced: false });
        if (problems.length) {
          report.failures += 1;
          if (report.samples.length < 20) report.samples.push(`${surface}: ${req.method} ${req.path.slice(0, 140)} -> ${problems.map(([k, d]) => `${k} ${d}`).join('; ').slice(0, 300)}`);
        }
      }
    } else if (real.status >= 500 || fake.status >= 500) {
      report.failures += 1;
      report.samples.push(`${surface}: ${real.status} ${real.text.slice(0, 200)}`);
    }
  }
  return report;
}
