// billing-sandbox web inspector: plain browser JavaScript, no framework and no build step, served
// from the package (works offline). Every read goes through the control plane (/_sandbox), naming
// the account in X-Sandbox-Account; live updates come from GET /_sandbox/stream read with fetch (an
// EventSource cannot send headers, and the admin token must never ride in a URL). Data from the
// sandbox is only ever put on the page as text (never as HTML).

const TOKEN_KEY = 'billing-sandbox.admin-token';
const ACCOUNT_KEY = 'billing-sandbox.account';
const DEFAULT_ACCOUNT = 'ptn_default:production';
const TOPICS = ['customer_created', 'customer_updated', 'customer_archived', 'invoice_created', 'invoice_updated', 'invoice_paid',
  'invoice_archived', 'payment_succeeded', 'payment_failed', 'payment_refunded', 'payment_chargeback', 'payment_method_added',
  'default_payment_method_changed', 'payment_method_deleted', 'payout_scheduled', 'payout_processing', 'payout_paid', 'payout_failed'];
const DURATION = /^(\d+(?:\.\d+)?)\s*(s|m|h|d)$/i;
const UNIT_SECONDS = { s: 1, m: 60, h: 3600, d: 86400 };

const $ = (id) => document.getElementById(id);

/** An element with attributes and children (strings become text nodes: never parsed as HTML). */
function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on')) el.addEventListener(key.slice(2), value);
    else if (key === 'class') el.className = value;
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

const state = {
  token: sessionStorage.getItem(TOKEN_KEY) || '',
  account: sessionStorage.getItem(ACCOUNT_KEY) || DEFAULT_ACCOUNT,
  accounts: [],
  kind: 'customers',
  /** The account clock as last read: its time and when it was read here (performance.now()). */
  clockRead: null,
  cursor: { after: undefined, before: undefined },
  page: null,
  selected: null,
  stream: null,
  timeline: [],
};

class HttpError extends Error {
  constructor(status, body) {
    super((body && body.message) || `HTTP ${status}`);
    this.status = status;
    this.body = body;
  }
}

/** A control-plane call on the chosen account; a 401 asks for the admin token. */
async function api(path, { method = 'GET', body, contentType } = {}) {
  const headers = { Accept: 'application/json', 'X-Sandbox-Account': state.account };
  if (state.token) headers['X-Sandbox-Admin-Token'] = state.token;
  let payload;
  if (body !== undefined) {
    payload = typeof body === 'string' ? body : JSON.stringify(body);
    headers['Content-Type'] = contentType || 'application/json';
  }
  const res = await fetch(path, { method, headers, body: payload, cache: 'no-store' });
  const text = await res.text();
  let parsed = null;
  try { parsed = text ? JSON.parse(text) : null; } catch { parsed = { message: text }; }
  if (res.status === 401) askForToken(parsed && parsed.message);
  if (!res.ok) throw new HttpError(res.status, parsed);
  return parsed;
}

function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}

let noticeTimer;
/** A line above the tabs: errors stay until the next action; a success fades after a few seconds. */
function notice(message, ok = false) {
  const el = $('notice');
  clearTimeout(noticeTimer);
  if (message && ok) noticeTimer = setTimeout(() => notice(''), 4000);
  el.hidden = !message;
  el.textContent = message || '';
  el.classList.toggle('ok', ok);
}

function fail(error) {
  notice(error instanceof HttpError ? `${error.status} ${error.body?.code ?? ''}: ${error.message}` : String(error.message || error));
}

function badge(status) {
  if (status === null || status === undefined) return h('span', { class: 'muted' }, '—');
  const s = String(status).toLowerCase();
  const tone = /paid|succeeded|active|delivered|^2/.test(s) ? 'good'
    : /overdue|failed|canceled|cancelled|deleted|chargeback|expired|inactive|archived|^[45]/.test(s) ? 'bad'
      : /pending|processing|needs_approval|hold|waiting|scheduled|upcoming|ready|draft|retry/.test(s) ? 'warn' : '';
  return h('span', { class: `badge ${tone}` }, String(status));
}

function when(iso) {
  return iso ? h('time', { datetime: iso }, iso.replace('T', ' ').replace(/\.\d+Z$|Z$/, 'Z')) : '';
}

/** A short human summary of an object, whatever its kind. */
function summaryOf(o) {
  const parts = [];
  for (const field of ['name', 'invoice_number', 'number', 'topic', 'type', 'custom_name', 'endpoint_url', 'payment_speed']) {
    if (typeof o[field] === 'string' && o[field]) { parts.push(o[field]); break; }
  }
  if (typeof o.email === 'string' && o.email) parts.push(o.email);
  for (const field of ['total', 'amount']) {
    if (typeof o[field] === 'number') { parts.push(`$${o[field].toFixed(2)}`); break; }
  }
  return parts.join(' · ');
}

// ---------- accounts and clock ----------

async function loadAccounts() {
  const { data } = await api('/_sandbox/accounts');
  state.accounts = data;
  if (!data.some((a) => a.account === state.account)) state.account = data[0] ? data[0].account : DEFAULT_ACCOUNT;
  const select = $('account');
  select.replaceChildren(...data.map((a) => {
    const total = Object.values(a.counts).reduce((x, y) => x + y, 0);
    return h('option', { value: a.account, selected: a.account === state.account }, `${a.partner_name || a.partner_id} · ${a.environment} (${total})`);
  }));
  renderKinds();
}

function currentAccount() {
  return state.accounts.find((a) => a.account === state.account);
}

async function loadClock() {
  const clock = await api('/_sandbox/clock');
  showClock(clock.now);
  return clock;
}

/**
 * The account clock, ticking: the sandbox's time as last read, moved on by the time that passed here
 * since (the account clock runs with real time between advances). Read again on every clock message
 * of the stream, an advance and an account change.
 */
function showClock(iso) {
  state.clockRead = { ms: Date.parse(iso), at: performance.now() };
  renderClock();
}

function renderClock() {
  if (!state.clockRead) return;
  const now = new Date(state.clockRead.ms + (performance.now() - state.clockRead.at)).toISOString().replace(/\.\d+Z$/, 'Z');
  $('clock-now').textContent = now;
  $('clock-big').textContent = now;
}

// ---------- objects ----------

const KINDS = [
  ['customers', 'Customers'], ['invoices', 'Invoices'], ['payment_methods', 'Payment methods'],
  ['payment_requests', 'Payment requests'], ['payments', 'Payments'], ['payouts', 'Payouts'], ['bills', 'Bills'],
  ['vendors', 'Vendors'], ['vendor_payments', 'Vendor payments'], ['webhook_subscriptions', 'Webhook subscriptions'],
];

function renderKinds() {
  const counts = currentAccount()?.counts ?? {};
  $('kinds').replaceChildren(...KINDS.map(([kind, label]) => h('li', {},
    h('button', { type: 'button', 'data-kind': kind, 'aria-current': kind === state.kind ? 'true' : 'false', onclick: () => pickKind(kind) },
      h('span', {}, label), h('span', { class: 'count' }, String(counts[kind] ?? 0))))));
}

function pickKind(kind) {
  state.kind = kind;
  state.cursor = {};
  state.selected = null;
  $('detail').hidden = true;
  renderKinds();
  loadObjects().catch(fail);
}

async function loadObjects() {
  const page = await api(`/_sandbox/objects/${state.kind}${query({ q: $('q').value.trim(), status: $('status').value.trim(), limit: 25, ...state.cursor })}`);
  state.page = page;
  const rows = page.data.map((item) => h('tr', {
    class: 'clickable', 'data-id': item.id, 'aria-selected': item.id === state.selected ? 'true' : 'false', tabindex: 0,
    title: 'Enter or click: show this object',
    onclick: () => showObject(item.id).catch(fail),
    onkeydown: (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); showObject(item.id).catch(fail); } },
  }, h('td', { class: 'id' }, item.id), h('td', {}, badge(item.status)), h('td', {}, summaryOf(item.object)), h('td', {}, when(item.object.created_at))));
  $('rows').replaceChildren(...(rows.length ? rows : [h('tr', {}, h('td', { colspan: 4, class: 'empty' }, 'Nothing here yet.'))]));
  $('prev').disabled = !page.has_previous_page;
  $('next').disabled = !page.has_next_page;
  $('page-info').textContent = page.data.length ? `${page.data.length} shown` : '';
}

async function showObject(id) {
  const detail = await api(`/_sandbox/objects/${state.kind}/${encodeURIComponent(id)}`);
  state.selected = id;
  for (const tr of $('rows').querySelectorAll('tr')) tr.setAttribute('aria-selected', tr.dataset.id === id ? 'true' : 'false');
  const moves = detail.next_moves === null ? h('p', { class: 'muted' }, 'This kind has no status machine.')
    : detail.next_moves.length === 0 ? h('p', { class: 'muted' }, 'Final: no move leads on from here.')
      : h('div', { class: 'moves' }, detail.next_moves.map((m) => h('span', {
        class: `move ${m.by}`, title: m.by === 'sandbox' ? 'made by the sandbox (clock, settlement, simulation)' : 'made by an API call',
      }, `${m.event} → ${m.to}`)));
  const history = detail.status_history
    ? h('table', { class: 'grid' }, h('thead', {}, h('tr', {}, h('th', {}, 'at'), h('th', {}, 'status'), h('th', {}, 'reason'))),
      h('tbody', {}, detail.status_history.map((e) => h('tr', {}, h('td', {}, when(e.at)), h('td', {}, badge(e.status)), h('td', {}, e.reason ?? '')))))
    : null;
  const events = detail.events.length
    ? h('table', { class: 'grid' }, h('tbody', {}, detail.events.map((e) => h('tr', {}, h('td', {}, when(e.timestamp)), h('td', {}, e.topic), h('td', { class: 'id' }, e.id)))))
    : h('p', { class: 'muted' }, 'No events recorded for it.');
  $('detail').replaceChildren(...[
    h('h2', {}, `${detail.kind.replace(/_/g, ' ').replace(/s$/, '')} ${detail.id} `, badge(detail.status)),
    h('h3', {}, 'Allowed next moves'), moves,
    history && h('h3', {}, 'Status history'), history,
    h('h3', {}, 'Events (newest first)'), events,
    h('h3', {}, 'As the API shows it'), h('pre', { class: 'json' }, JSON.stringify(detail.object, null, 2)),
  ].filter(Boolean));
  $('detail').hidden = false;
}

// ---------- timeline ----------

function timelineRow(item) {
  if (item.type === 'event') {
    return h('tr', { 'data-type': 'event' }, h('td', {}, when(item.timestamp)), h('td', {}, 'event'), h('td', {}, item.topic),
      h('td', { class: 'id' }, item.entity_id), h('td', { class: 'id' }, item.id));
  }
  const outcome = item.error ? `${item.error}` : `${item.status_code}`;
  const next = item.next_attempt_at ? ` · next attempt ${item.next_attempt_at}` : '';
  // A delivery drill (a scenario's duplicate_delivery, timeout_after_delivery or wrong_secret) names itself.
  const drill = item.drill ? ` · ${item.duplicate_of ? 'duplicate' : item.drill.replace(/_/g, ' ')}` : '';
  return h('tr', { 'data-type': 'delivery' }, h('td', {}, when(item.at)), h('td', {}, `delivery #${item.attempt}${drill}`), h('td', {}, item.topic),
    h('td', { class: 'id' }, item.entity_id ?? item.event_id ?? ''), h('td', {}, badge(outcome), ` ${item.url}${next}`));
}

function renderTimeline() {
  const rows = state.timeline.slice(0, 200).map(timelineRow);
  $('timeline').replaceChildren(...(rows.length ? rows : [h('tr', {}, h('td', { colspan: 5, class: 'empty' }, 'No events or deliveries yet.'))]));
}

const itemTime = (item) => item.timestamp || item.at || '';

async function loadTimeline() {
  const [events, deliveries] = await Promise.all([api('/_sandbox/events?limit=100'), api('/_sandbox/webhooks/deliveries?limit=100')]);
  state.timeline = [...events.data.map((e) => ({ ...e, type: 'event' })), ...deliveries.data.map((d) => ({ ...d, type: 'delivery' }))]
    .sort((a, b) => itemTime(b).localeCompare(itemTime(a)));
  renderTimeline();
}

function pushTimeline(item) {
  state.timeline.unshift(item);
  state.timeline.length = Math.min(state.timeline.length, 500);
  renderTimeline();
}

// ---------- journal ----------

async function loadJournal() {
  const status = $('j-status').value;
  const { data } = await api(`/_sandbox/requests${query({ method: $('j-method').value, path: $('j-path').value.trim(), status, limit: 100 })}`);
  $('journal').replaceChildren(...(data.length ? data.map((e) => h('li', {}, h('details', {},
    h('summary', {}, h('span', { class: 'at' }, when(e.at)), h('span', {}, e.method), h('span', {}, badge(e.status)),
      h('span', { class: 'path' }, e.path), h('span', { class: 'ms muted' }, `${e.duration_ms} ms`)),
    h('div', { class: 'bodies' },
      h('div', {}, h('strong', {}, 'Request'), h('pre', { class: 'json' }, JSON.stringify(e.request, null, 2))),
      h('div', {}, h('strong', {}, 'Response'), h('pre', { class: 'json' }, JSON.stringify(e.response, null, 2))))))) : [h('li', { class: 'empty' }, 'No requests journaled for this account yet.')]));
}

// ---------- clock and scenarios ----------

async function loadScenarios() {
  const { data } = await api('/_sandbox/scenarios');
  $('scenarios').replaceChildren(...(data.length ? data.map((s) => h('tr', {},
    h('td', {}, h('strong', {}, s.name), h('br'), h('span', { class: 'muted' }, s.description ?? '')),
    h('td', {}, s.scope),
    h('td', {}, s.counters.map((c, i) => `#${i + 1} ${c.matched}/${c.fired}`).join(', ')),
    h('td', {}, s.scope === 'account' ? h('button', { type: 'button', onclick: () => deleteScenario(s.id) }, 'Delete') : ''))) : [h('tr', {}, h('td', { colspan: 4, class: 'empty' }, 'No scenario loaded.'))]));
}

async function deleteScenario(id) {
  try {
    await api(`/_sandbox/scenarios/${encodeURIComponent(id)}`, { method: 'DELETE' });
    await loadScenarios();
  } catch (error) { fail(error); }
}

async function loadScenarioDocument(event) {
  event.preventDefault();
  const text = $('scenario-text').value;
  const errors = $('scenario-errors');
  errors.replaceChildren();
  let json = false;
  try { JSON.parse(text); json = true; } catch { /* YAML then */ }
  try {
    const { id } = await api('/_sandbox/scenarios', { method: 'POST', body: text, contentType: json ? 'application/json' : 'application/yaml' });
    notice(`Loaded scenario ${id}.`, true);
    $('scenario-text').value = '';
    await loadScenarios();
  } catch (error) {
    const fields = error.body?.validation_errors ?? {};
    const entries = Object.entries(fields);
    errors.replaceChildren(h('li', {}, error.message),
      ...entries.map(([field, message]) => h('li', { 'data-field': field }, h('code', {}, field), `: ${message}`)));
  }
}

/** `30d`, `2h`, `15m`, `90s` (or a bare number of seconds) in seconds; NaN when it is neither. */
function durationSeconds(text) {
  const t = text.trim();
  if (/^\d+$/.test(t)) return Number(t);
  const m = DURATION.exec(t);
  return m ? Number(m[1]) * UNIT_SECONDS[m[2].toLowerCase()] : NaN;
}

async function advance(event) {
  event.preventDefault();
  const by = $('advance-by').value;
  const to = $('advance-to').value;
  const out = $('advance-result');
  let body;
  if (to) body = { to: new Date(`${to}Z`).toISOString() };
  else {
    const seconds = durationSeconds(by);
    if (!(seconds > 0)) {
      out.replaceChildren(h('p', { class: 'errors' }, 'Give a duration such as 30d, 2h, 15m or 90s, or a date.'));
      return;
    }
    body = { seconds };
  }
  try {
    const before = (await loadClock()).now;
    out.replaceChildren(h('p', { class: 'muted' }, 'Advancing…'));
    const result = await api('/_sandbox/clock/advance', { method: 'POST', body });
    showClock(result.now);
    const fell = (await api('/_sandbox/events?limit=100')).data.filter((e) => e.timestamp > before);
    out.replaceChildren(...[
      h('p', {}, `Now ${result.now}: ${result.ran} due job${result.ran === 1 ? '' : 's'} ran.`),
      fell.length ? h('ul', { class: 'fell-due' }, fell.reverse().map((e) => h('li', {}, `${e.topic} `, h('code', {}, e.entity_id), ` at ${e.timestamp}`)))
        : h('p', { class: 'muted' }, 'No event fell due.'),
      result.failed_jobs.length ? h('p', { class: 'errors' }, `${result.failed_jobs.length} due job(s) failed: ${result.failed_jobs.map((j) => `${j.kind}: ${j.error}`).join('; ')}`) : null,
    ].filter(Boolean));
    $('advance-by').value = '';
    $('advance-to').value = '';
  } catch (error) {
    const fields = Object.entries(error.body?.validation_errors ?? {}).map(([f, m]) => `${f} ${m}`).join('; ');
    out.replaceChildren(h('p', { class: 'errors' }, `${error.message}${fields ? ` (${fields})` : ''}`));
  }
}

async function resetAccount() {
  if (!confirm(`Reset ${state.account}? Its objects, events, deliveries, journal and scenarios are removed.`)) return;
  try {
    await api('/_sandbox/reset', { method: 'POST' });
    notice(`${state.account} is empty again.`, true);
    await refreshAll();
  } catch (error) { fail(error); }
}

// ---------- snapshots ----------

const sizeText = (bytes) => (bytes >= 1048576 ? `${(bytes / 1048576).toFixed(1)} MB` : `${Math.max(1, Math.round(bytes / 1024))} kB`);

async function loadSnapshots() {
  const { data } = await api('/_sandbox/snapshots');
  const other = state.account.endsWith(':production') ? 'demo' : 'production';
  $('snapshots').replaceChildren(...(data.length ? data.map((s) => {
    const objects = Object.values(s.counts).reduce((x, y) => x + y, 0);
    return h('tr', { 'data-name': s.name },
      h('td', {}, h('strong', {}, s.name), s.redacted ? h('span', { class: 'muted' }, ' (imported)') : ''),
      h('td', { class: 'id' }, s.account),
      h('td', {}, when(s.created_at)),
      h('td', { title: Object.entries(s.counts).map(([k, n]) => `${k}: ${n}`).join('\n') }, String(objects)),
      h('td', {}, sizeText(s.bytes)),
      h('td', { class: 'actions' },
        h('button', { type: 'button', 'data-action': 'restore', onclick: () => restoreSnapshot(s.name) }, 'Restore here'),
        h('button', { type: 'button', class: 'link', onclick: () => restoreSnapshot(s.name, other) }, `into ${other}`),
        h('button', { type: 'button', class: 'link', onclick: () => exportSnapshot(s.name) }, 'Export'),
        h('button', { type: 'button', class: 'link', onclick: () => deleteSnapshot(s.name) }, 'Delete')));
  }) : [h('tr', {}, h('td', { colspan: 6, class: 'empty' }, 'No snapshot saved yet.'))]));
}

function snapshotErrors(error) {
  const fields = Object.entries(error?.body?.validation_errors ?? {});
  $('snapshot-errors').replaceChildren(...(error ? [h('li', {}, error.message), ...fields.map(([field, message]) => h('li', { 'data-field': field }, h('code', {}, field), `: ${message}`))] : []));
}

async function saveSnapshot(event) {
  event.preventDefault();
  notice('');
  snapshotErrors(null);
  try {
    const saved = await api('/_sandbox/snapshots', { method: 'POST', body: { name: $('snapshot-name').value.trim(), replace: $('snapshot-replace').checked } });
    notice(`Saved ${saved.name}: ${Object.values(saved.counts).reduce((x, y) => x + y, 0)} objects, ${sizeText(saved.bytes)}.`, true);
    $('snapshot-name').value = '';
    await loadSnapshots();
  } catch (error) { snapshotErrors(error); }
}

async function importSnapshot() {
  const file = $('snapshot-file').files[0];
  if (!file) return;
  snapshotErrors(null);
  try {
    let exported;
    try { exported = JSON.parse(await file.text()); } catch { throw new Error(`${file.name} is not JSON`); }
    const saved = await api('/_sandbox/snapshots', { method: 'POST', body: { document: exported, replace: $('snapshot-replace').checked } });
    notice(`Imported ${saved.name}.`, true);
    await loadSnapshots();
  } catch (error) { snapshotErrors(error); }
  $('snapshot-file').value = '';
}

async function restoreSnapshot(name, environment) {
  const target = environment ? `${state.account.split(':')[0]}:${environment}` : state.account;
  if (!confirm(`Replace ${target} with the snapshot ${name}? What the account holds now is gone.`)) return;
  try {
    const result = await api(`/_sandbox/snapshots/${encodeURIComponent(name)}/restore`, { method: 'POST', body: environment ? { environment } : {} });
    notice(`Restored ${name} into ${result.account}.`, true);
    await loadAccounts();
    await loadClock();
  } catch (error) { fail(error); }
}

async function exportSnapshot(name) {
  try {
    const exported = await api(`/_sandbox/snapshots/${encodeURIComponent(name)}`);
    const url = URL.createObjectURL(new Blob([JSON.stringify(exported)], { type: 'application/json' }));
    const link = h('a', { href: url, download: `${name}.snapshot.json` });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  } catch (error) { fail(error); }
}

async function deleteSnapshot(name) {
  if (!confirm(`Delete the snapshot ${name}?`)) return;
  try {
    await api(`/_sandbox/snapshots/${encodeURIComponent(name)}`, { method: 'DELETE' });
    await loadSnapshots();
  } catch (error) { fail(error); }
}

// ---------- live stream ----------

let refreshTimer;
/** Many changes arrive together (a bulk call, an advance): refresh once they settle. */
function refreshSoon() {
  clearTimeout(refreshTimer);
  refreshTimer = setTimeout(() => {
    loadAccounts().then(() => loadObjects()).then(() => (state.selected ? showObject(state.selected) : undefined)).catch(() => undefined);
    if (!$('tab-journal').hidden) loadJournal().catch(() => undefined);
    if (!$('tab-clock').hidden) loadScenarios().catch(() => undefined);
  }, 250);
}

function onMessage(type, data) {
  if (type === 'event') { pushTimeline({ ...data, type: 'event' }); refreshSoon(); }
  else if (type === 'delivery') pushTimeline({ ...data, type: 'delivery' });
  else if (type === 'request') refreshSoon();
  else if (type === 'clock') { loadClock().catch(() => undefined); refreshSoon(); }
}

async function openStream() {
  state.stream?.abort();
  const controller = new AbortController();
  state.stream = controller;
  const live = $('live');
  const headers = { Accept: 'text/event-stream', 'X-Sandbox-Account': state.account };
  if (state.token) headers['X-Sandbox-Admin-Token'] = state.token;
  try {
    const res = await fetch('/_sandbox/stream', { headers, signal: controller.signal, cache: 'no-store' });
    if (!res.ok || !res.body) throw new Error(`stream answered ${res.status}`);
    live.textContent = 'live';
    live.classList.remove('off');
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let type = 'message';
        const data = [];
        for (const line of block.split('\n')) {
          if (line.startsWith('event:')) type = line.slice(6).trim();
          else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
        }
        if (data.length) {
          try { onMessage(type, JSON.parse(data.join('\n'))); } catch { /* a message we cannot read is skipped */ }
        }
      }
    }
  } catch (error) {
    if (controller.signal.aborted) return;
  }
  if (state.stream !== controller) return;
  live.textContent = 'offline';
  live.classList.add('off');
  setTimeout(() => { if (state.stream === controller) openStream(); }, 3000);
}

// ---------- token, tabs, start ----------

function askForToken(message) {
  const dialog = $('token-dialog');
  if (dialog.open) return;
  if (message) notice(message);
  $('token-input').value = '';
  dialog.showModal();
}

function showTab(name) {
  notice('');
  for (const button of document.querySelectorAll('.tabs button')) button.setAttribute('aria-selected', String(button.dataset.tab === name));
  for (const section of document.querySelectorAll('.tab')) section.hidden = section.id !== `tab-${name}`;
  const load = { objects: loadObjects, timeline: loadTimeline, journal: loadJournal, clock: () => Promise.all([loadClock(), loadScenarios()]), snapshots: loadSnapshots }[name];
  load().catch(fail);
}

async function refreshAll() {
  notice('');
  await loadAccounts();
  await loadClock();
  const tab = document.querySelector('.tabs button[aria-selected="true"]').dataset.tab;
  showTab(tab);
  if (tab !== 'timeline') loadTimeline().catch(() => undefined);
}

function start() {
  $('fire-topic').replaceChildren(...TOPICS.map((t) => h('option', { value: t }, t)));
  for (const button of document.querySelectorAll('.tabs button')) button.addEventListener('click', () => showTab(button.dataset.tab));
  $('account').addEventListener('change', () => {
    state.account = $('account').value;
    sessionStorage.setItem(ACCOUNT_KEY, state.account);
    state.cursor = {};
    state.selected = null;
    $('detail').hidden = true;
    refreshAll().then(openStream).catch(fail);
  });
  $('search').addEventListener('submit', (e) => { e.preventDefault(); state.cursor = {}; loadObjects().catch(fail); });
  $('prev').addEventListener('click', () => { state.cursor = { before: state.page.start_cursor }; loadObjects().catch(fail); });
  $('next').addEventListener('click', () => { state.cursor = { after: state.page.end_cursor }; loadObjects().catch(fail); });
  $('journal-filter').addEventListener('submit', (e) => { e.preventDefault(); loadJournal().catch(fail); });
  $('advance').addEventListener('submit', advance);
  $('load-scenario').addEventListener('submit', loadScenarioDocument);
  $('reset').addEventListener('click', resetAccount);
  $('save-snapshot').addEventListener('submit', saveSnapshot);
  $('snapshot-file').addEventListener('change', () => importSnapshot().catch(fail));
  $('resume').addEventListener('click', async () => {
    try {
      const result = await api('/_sandbox/webhooks/retry', { method: 'POST' });
      $('timeline-result').textContent = result.resumed ? `Resumed: ${result.resumed} queued event(s) are being delivered again.` : 'The queue was not paused: nothing to resume.';
    } catch (error) { fail(error); }
  });
  $('fire').addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      const event = await api('/_sandbox/events', { method: 'POST', body: { topic: $('fire-topic').value, ...($('fire-entity').value.trim() ? { entity_id: $('fire-entity').value.trim() } : {}) } });
      const made = (event.made ?? []).map((m) => `${m.object.replace('_', ' ')} ${m.id}`).join(', ');
      $('timeline-result').textContent = `Fired ${event.topic} on ${event.entity_id}${made ? `; made ${made}` : ''}.`;
    } catch (error) { fail(error); }
  });
  $('token-button').addEventListener('click', () => askForToken());
  $('token-form').addEventListener('submit', (e) => {
    const action = e.submitter?.value;
    if (action === 'clear') { state.token = ''; sessionStorage.removeItem(TOKEN_KEY); }
    else { state.token = $('token-input').value.trim(); sessionStorage.setItem(TOKEN_KEY, state.token); }
    refreshAll().then(openStream).catch(fail);
  });
  refreshAll().then(openStream).catch(fail);
  setInterval(renderClock, 1000);
}

start();
