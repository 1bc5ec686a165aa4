// movegate admin page: plain JS, no dependencies, served from the binary.
// The admin token lives in this tab's sessionStorage (and memory) and only
// ever leaves as an `Authorization: Bearer` header of same-origin fetches:
// never in a URL, never in a log line, never in the DOM after sign-in.
// Actions (approve, reject, cancel, resume, retry, manual complete) are /v3
// calls signed in the tab with the operator's API key (signing.js, memory
// only) and sent through the admin listener's same-origin /relay: the
// server checks signature, scopes and four-eyes exactly as on /v3.
'use strict';

(() => {
  const TOKEN_KEY = 'movegate.admin.token';
  const POLL_MS = 1500;
  const LEASE_SECONDS = 8; // MG_CLUSTER_LEASE_SECONDS default
  const STALE_HEARTBEAT_SECONDS = 10;

  const REQUEST_STATES = ['PENDING_APPROVAL', 'APPROVED', 'EXECUTING', 'WAITING_MANUAL_ACTION',
    'MANUAL_INTERVENTION', 'COMPLETED', 'FAILED', 'REJECTED', 'EXPIRED', 'CANCELLED'];
  const NODE_STATES = ['BLOCKED', 'READY', 'PREPARING', 'AWAITING_SIGNATURE', 'SUBMITTING',
    'SUBMITTED', 'OBSERVING', 'COMPLETED', 'FAILED', 'UNKNOWN', 'SKIPPED', 'CANCELLED'];
  const IN_FLIGHT = new Set(['PREPARING', 'AWAITING_SIGNATURE', 'SUBMITTING', 'SUBMITTED', 'OBSERVING']);
  const LIGHT_FILLS = new Set(['SKIPPED']);

  let token = sessionStorage.getItem(TOKEN_KEY) || '';
  let timer = null;
  let generation = 0; // bumps on every navigation: stale loads are dropped
  let lastUpdate = 0;
  let serverOffsetMs = 0; // server clock − ours, from the Date header
  let view = null;
  const ui = { selectedNode: null, openDetails: new Set(), dlqFlash: null, actionFlash: null };

  // --- small DOM helpers ------------------------------------------------------

  const $ = (id) => document.getElementById(id);

  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    setAttrs(el, attrs);
    append(el, children);
    return el;
  }

  const SVG_NS = 'http://www.w3.org/2000/svg';
  function s(tag, attrs, ...children) {
    const el = document.createElementNS(SVG_NS, tag);
    setAttrs(el, attrs);
    append(el, children);
    return el;
  }

  function setAttrs(el, attrs) {
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
      else if (k === 'text') el.textContent = v;
      else if (k === 'class') el.setAttribute('class', v);
      else el.setAttribute(k, v === true ? '' : String(v));
    }
  }

  function append(el, children) {
    for (const c of children.flat()) {
      if (c === null || c === undefined || c === false) continue;
      el.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
  }

  function replace(el, ...children) {
    el.replaceChildren();
    append(el, children);
  }

  // --- formatting ---------------------------------------------------------------

  function parseTime(ts) {
    // PostgreSQL gives microseconds; Date.parse wants at most milliseconds.
    return Date.parse(String(ts).replace(/(\.\d{3})\d+/, '$1'));
  }

  function fmtAge(seconds) {
    const sec = Math.max(0, seconds);
    if (sec < 1) return 'just now';
    if (sec < 60) return `${Math.round(sec)} s ago`;
    if (sec < 3600) return `${Math.floor(sec / 60)} min ago`;
    if (sec < 86400) return `${Math.floor(sec / 3600)} h ago`;
    return `${Math.floor(sec / 86400)} d ago`;
  }

  function secondsSince(ts) {
    return (Date.now() + serverOffsetMs - parseTime(ts)) / 1000;
  }

  function ago(ts) {
    if (!ts) return h('span', { class: 'muted', text: '—' });
    return h('span', { title: new Date(parseTime(ts)).toISOString(), text: fmtAge(secondsSince(ts)) });
  }

  function badge(state, extraClass) {
    if (!state) return h('span', { class: 'muted', text: '—' });
    return h('span', { class: `badge s-${state} ${extraClass || ''}`, text: state });
  }

  function compact(value, max = 120) {
    const text = JSON.stringify(value);
    if (text === undefined || text === '{}' || text === 'null') return '';
    return text.length > max ? text.slice(0, max - 1) + '…' : text;
  }

  function jsonBlock(value) {
    return h('pre', { class: 'json', text: JSON.stringify(value, null, 2) });
  }

  function shortId(id) {
    return String(id).slice(0, 8);
  }

  function legend(states) {
    return h('div', { class: 'legend' },
      states.map((st) => h('span', { class: `s-${st}` }, h('i', { class: 'swatch' }), st)));
  }

  function empty(text) {
    return h('div', { class: 'empty', text });
  }

  // Keeps <details> open across refreshes (keyed by the caller).
  function details(key, summary, ...body) {
    const d = h('details', { open: ui.openDetails.has(key) }, h('summary', { text: summary }), ...body);
    d.addEventListener('toggle', () => {
      if (d.open) ui.openDetails.add(key); else ui.openDetails.delete(key);
    });
    return d;
  }

  // --- the API -------------------------------------------------------------------

  class ApiError extends Error {
    constructor(status, code, message, details, bearer) {
      super(message);
      this.status = status;
      this.code = code;
      this.details = details || [];
      this.bearer = bearer; // the admin listener refused the token itself
    }
  }

  function api(method, path) {
    return request(method, path, {}, undefined);
  }

  /// A /v3 call signed with the operator's API key, through the relay.
  async function v3(method, path, bodyObject) {
    const body = bodyObject === undefined ? '' : JSON.stringify(bodyObject);
    const now = Math.floor((Date.now() + serverOffsetMs) / 1000);
    const signed = await mgSigning.headers(method, path, body, now);
    return request(method, '/relay' + path, { ...signed, 'Content-Type': 'application/json' }, body);
  }

  async function request(method, path, extraHeaders, payload) {
    let res;
    try {
      res = await fetch(path, {
        method,
        headers: { Authorization: `Bearer ${token}`, Accept: 'application/json', ...extraHeaders },
        body: payload || undefined,
        cache: 'no-store',
        credentials: 'omit',
        referrerPolicy: 'no-referrer',
      });
    } catch (e) {
      throw new ApiError(0, 'network', 'the admin listener is unreachable');
    }
    const date = res.headers.get('Date');
    if (date && !Number.isNaN(Date.parse(date))) serverOffsetMs = Date.parse(date) - Date.now();
    let body = null;
    try {
      body = await res.json();
    } catch (e) {
      body = null;
    }
    if (!res.ok) {
      const err = (body && body.error) || {};
      const bearer = /^Bearer/i.test(res.headers.get('WWW-Authenticate') || '');
      throw new ApiError(res.status, err.code || 'http_' + res.status, err.message || res.statusText,
        err.details, bearer);
    }
    return body;
  }

  // A signed call's own 401 (bad signature, unknown key) is the action's
  // answer, not a reason to sign out: only the listener's Bearer refusal is.
  function isAuthError(e) {
    return e instanceof ApiError && ((e.status === 401 && e.bearer) || (e.status === 403 && e.code === 'admin_disabled'));
  }

  function describe(e) {
    if (e instanceof ApiError) {
      if (e.status === 0) return 'The admin listener is unreachable.';
      if (e.status === 503) return `Service unavailable (503): ${e.message}`;
      const details = e.details.map((d) => `${d.field}: ${d.message}`).join('; ');
      return `${e.status} ${e.code}: ${e.message}${details ? ` (${details})` : ''}`;
    }
    return String(e && e.message ? e.message : e);
  }

  // --- session ------------------------------------------------------------------------

  function showLogin(message) {
    token = '';
    mgSigning.forget();
    sessionStorage.removeItem(TOKEN_KEY);
    clearTimeout(timer);
    generation++;
    $('login').hidden = false;
    $('nav').hidden = true;
    $('logout').hidden = true;
    $('live').hidden = true;
    $('error').hidden = true;
    replace($('view'));
    const err = $('login-error');
    err.hidden = !message;
    err.textContent = message || '';
    $('token').focus();
  }

  async function signIn(event) {
    event.preventDefault(); // never a form submission: the token must not reach a URL
    const input = $('token');
    const candidate = input.value.trim();
    if (!candidate) return;
    const button = $('login-submit');
    button.disabled = true;
    token = candidate;
    try {
      await api('GET', '/admin/workers');
      input.value = '';
      sessionStorage.setItem(TOKEN_KEY, token);
      $('login').hidden = true;
      startSession();
    } catch (e) {
      const message = e instanceof ApiError && e.status === 401 ? 'That token was refused (401).'
        : e instanceof ApiError && e.code === 'admin_disabled'
          ? 'Admin routes are disabled: MG_ADMIN_TOKEN is not set on the server.'
          : describe(e);
      showLogin(message);
    } finally {
      button.disabled = false;
    }
  }

  function startSession() {
    $('login').hidden = true;
    $('nav').hidden = false;
    $('logout').hidden = false;
    $('live').hidden = false;
    if (!location.hash || location.hash === '#') location.hash = '#/movements';
    else navigate();
  }

  // --- routing and the refresh loop --------------------------------------------------

  function route() {
    const hash = location.hash.replace(/^#/, '') || '/movements';
    const [path, query] = hash.split('?');
    const params = new URLSearchParams(query || '');
    const parts = path.split('/').filter(Boolean);
    if (parts[0] === 'movements' && parts[1]) return { name: 'movement', id: decodeURIComponent(parts[1]), params };
    if (['workers', 'cluster', 'movements', 'dlq'].includes(parts[0])) return { name: parts[0], params };
    return { name: 'movements', params };
  }

  const VIEWS = {};

  function navigate() {
    if (!token) return;
    generation++;
    clearTimeout(timer);
    const r = route();
    for (const a of document.querySelectorAll('#nav a')) {
      const current = a.dataset.view === (r.name === 'movement' ? 'movements' : r.name);
      a.classList.toggle('active', current);
    }
    view = VIEWS[r.name](r);
    replace($('view'), view.root);
    $('error').hidden = true;
    tick();
  }

  async function tick() {
    clearTimeout(timer);
    const gen = generation;
    if (!token || !view) return;
    if (document.visibilityState !== 'visible') {
      setLive('paused', 'paused');
      return; // resumed by visibilitychange
    }
    try {
      await view.load(() => gen === generation);
      if (gen !== generation) return;
      lastUpdate = Date.now();
      $('error').hidden = true;
      setLive('', 'live');
    } catch (e) {
      if (gen !== generation) return;
      if (isAuthError(e)) {
        showLogin(e.status === 401 ? 'The token was refused (401); sign in again.' : describe(e));
        return;
      }
      const banner = $('error');
      banner.textContent = describe(e);
      banner.hidden = false;
      setLive('down', 'connection problem');
    }
    if (gen === generation) timer = setTimeout(tick, POLL_MS);
  }

  function setLive(cls, text) {
    const live = $('live');
    live.className = `live ${cls}`;
    $('live-text').textContent = text;
    live.title = lastUpdate ? `last update ${new Date(lastUpdate).toLocaleTimeString()}` : '';
  }

  // --- workers ---------------------------------------------------------------------------

  VIEWS.workers = () => {
    const tree = h('div');
    const table = h('div');
    const charts = h('div', { id: 'worker-charts' });
    const root = h('div', {},
      h('h1', { text: 'Workers' }),
      h('div', { class: 'card' }, h('h2', { text: 'Items processed, last 5 minutes' }),
        h('p', { class: 'muted small', text: `Per worker and process, in ${CHART_BUCKET_S} s buckets, from the heartbeats this tab has read since it opened.` }), charts),
      h('div', { class: 'card' }, h('h2', { text: 'Supervision tree' }), tree),
      h('div', { class: 'card' }, h('h2', { text: 'Heartbeats' }), table));
    return {
      root,
      async load(current) {
        const data = await api('GET', '/admin/workers');
        recordHeartbeats(data.heartbeats);
        if (!current()) return;
        renderCharts(charts);
        renderTree(tree, data.supervision || [], data.heartbeats);
        renderHeartbeats(table, data.heartbeats);
      },
      samplesWorkers: true,
    };
  };

  // --- live charts: items processed per worker -------------------------------------------------

  const CHART_WINDOW_MS = 5 * 60 * 1000;
  const CHART_BUCKET_S = 15;
  const SAMPLE_EVERY_MS = 10000; // background sampling while another view shows
  const workerHistory = new Map(); // "worker@node/class" → [{t, items}]
  let lastSample = 0;

  function recordHeartbeats(heartbeats) {
    if (!Array.isArray(heartbeats)) return;
    const t = Date.now();
    lastSample = t;
    for (const hb of heartbeats) {
      const key = `${hb.worker_name}@${hb.runtime_node}/${hb.network_class}`;
      if (!workerHistory.has(key)) workerHistory.set(key, { worker: hb.worker_name, node: hb.runtime_node, samples: [] });
      const samples = workerHistory.get(key).samples;
      samples.push({ t, items: Number(hb.items_processed) || 0 });
      while (samples.length > 2 && samples[1].t < t - CHART_WINDOW_MS) samples.shift();
    }
  }

  /// Items per bucket over the window: each rise of the counter between two
  /// samples counts in the later sample's bucket (a restart's reset is 0).
  function bucketed(samples, now) {
    const n = Math.round(CHART_WINDOW_MS / (CHART_BUCKET_S * 1000));
    const buckets = new Array(n).fill(0);
    for (let i = 1; i < samples.length; i++) {
      const age = now - samples[i].t;
      const b = n - 1 - Math.floor(age / (CHART_BUCKET_S * 1000));
      if (b < 0 || b >= n) continue;
      buckets[b] += Math.max(0, samples[i].items - samples[i - 1].items);
    }
    return buckets;
  }

  function renderCharts(el) {
    if (!workerHistory.size) {
      replace(el, empty('No heartbeats read yet.'));
      return;
    }
    const now = Date.now();
    const rows = [...workerHistory.entries()].map(([key, w]) => {
      const buckets = bucketed(w.samples, now);
      return { key, w, buckets, total: buckets.reduce((a, b) => a + b, 0) };
    }).sort((a, b) => b.total - a.total || a.key.localeCompare(b.key));
    const CW = 200, CH = 44, BAR = CW / rows[0].buckets.length;
    replace(el, h('div', { class: 'charts' }, rows.map(({ key, w, buckets, total }) => {
      const max = Math.max(1, ...buckets);
      const svg = s('svg', { class: 'spark', width: CW, height: CH, viewBox: `0 0 ${CW} ${CH}`, role: 'img', 'aria-label': `${w.worker} items per ${CHART_BUCKET_S} s` },
        s('line', { class: 'base', x1: 0, y1: CH - 0.5, x2: CW, y2: CH - 0.5 }),
        buckets.map((v, i) => {
          const bh = v ? Math.max(2, ((CH - 4) * v) / max) : 0;
          return s('rect', { class: 'bar', 'data-items': v, x: i * BAR + 0.5, y: CH - bh, width: Math.max(1, BAR - 1), height: bh },
            s('title', { text: `${v} item${v === 1 ? '' : 's'}` }));
        }));
      return h('figure', { class: 'chart', 'data-worker-chart': w.worker, 'data-total': total, title: key },
        h('figcaption', {}, h('span', { class: 'mono', text: w.worker }), h('span', { class: 'muted small', text: ` ${total} in 5 min` })),
        svg,
        h('div', { class: 'muted small mono', text: truncate(w.node, 30) }));
    })));
  }

  // While another view shows, keep the charts' history going (cheaply).
  function backgroundSample() {
    if (!token || document.visibilityState !== 'visible' || (view && view.samplesWorkers)) return;
    if (Date.now() - lastSample < SAMPLE_EVERY_MS) return;
    api('GET', '/admin/workers').then((d) => recordHeartbeats(d.heartbeats), () => {});
  }

  function freshestHeartbeat(heartbeats, name) {
    let best = null;
    for (const hb of heartbeats || []) {
      if (hb.worker_name !== name) continue;
      if (!best || hb.heartbeat_age_seconds < best.heartbeat_age_seconds) best = hb;
    }
    return best;
  }

  function heartbeatAge(hb) {
    const age = Number(hb.heartbeat_age_seconds);
    return h('span', { class: age > STALE_HEARTBEAT_SECONDS ? 'badge stale' : '', text: fmtAge(age) });
  }

  function renderTree(el, supervision, heartbeats) {
    if (!supervision.length) {
      replace(el, empty('No supervised workers in this process (MG_WORKERS_ENABLED=false?).'));
      return;
    }
    const groups = new Map();
    for (const m of supervision) {
      if (!groups.has(m.group)) groups.set(m.group, []);
      groups.get(m.group).push(m);
    }
    const groupItems = [...groups.entries()].map(([group, members]) => {
      const running = members.filter((m) => m.running).length;
      return h('li', {},
        h('strong', { text: group }), ' ',
        h('span', { class: 'muted small', text: `${running}/${members.length} running` }),
        h('ul', { class: 'tree' }, members.map((m) => {
          const hb = freshestHeartbeat(heartbeats, m.name);
          return h('li', { 'data-worker': m.name },
            h('span', { class: `badge ${m.running ? 'running' : 'stopped'}`, text: m.running ? 'running' : 'stopped' }),
            ' ', h('span', { class: 'mono', text: m.name }),
            m.crashes ? h('span', { class: 'inline-error', text: ` · ${m.crashes} crash${m.crashes === 1 ? '' : 'es'}` }) : '',
            hb ? [' · heartbeat ', heartbeatAge(hb)] : h('span', { class: 'muted small', text: ' · no heartbeat row' }),
            hb && hb.last_error ? h('div', { class: 'inline-error small', text: `last error: ${hb.last_error}` }) : '');
        })));
    });
    replace(el, h('ul', { class: 'tree root' },
      h('li', {}, h('strong', { text: 'supervisor' }), h('ul', { class: 'tree' }, groupItems))));
  }

  function renderHeartbeats(el, heartbeats) {
    if (heartbeats === null || heartbeats === undefined) {
      replace(el, h('div', { class: 'inline-error', text: 'Heartbeats unavailable: the database is unreachable.' }));
      return;
    }
    if (!heartbeats.length) {
      replace(el, empty('No heartbeat rows yet.'));
      return;
    }
    replace(el, h('table', {},
      h('thead', {}, h('tr', {}, ['worker', 'runtime node', 'group', 'status', 'heartbeat', 'iterations',
        'items', 'errors', 'last error'].map((t) => h('th', { text: t })))),
      h('tbody', {}, heartbeats.map((hb) => h('tr', {},
        h('td', { class: 'mono', text: hb.worker_name }),
        h('td', { class: 'mono small', text: hb.runtime_node }),
        h('td', { text: hb.worker_group || '' }),
        h('td', { text: hb.status || '' }),
        h('td', {}, heartbeatAge(hb)),
        h('td', { class: 'num', text: hb.iterations }),
        h('td', { class: 'num', text: hb.items_processed }),
        h('td', { class: hb.consecutive_errors ? 'num inline-error' : 'num', text: hb.consecutive_errors }),
        h('td', { class: 'inline-error small', text: hb.last_error || '' }))))));
  }

  // --- cluster ---------------------------------------------------------------------------

  VIEWS.cluster = () => {
    const body = h('div');
    const root = h('div', {}, h('h1', { text: 'Cluster nodes' }), h('div', { class: 'card' }, body));
    return {
      root,
      async load(current) {
        const nodes = await api('GET', '/admin/cluster');
        if (!current()) return;
        if (!nodes.length) {
          replace(body, empty('No cluster nodes registered.'));
          return;
        }
        replace(body, h('table', {},
          h('thead', {}, h('tr', {}, ['runtime node', 'host', 'cluster port', 'lease', 'last seen', 'started']
            .map((t) => h('th', { text: t })))),
          h('tbody', {}, nodes.map((n) => {
            const age = Number(n.last_seen_age_seconds);
            return h('tr', {},
              h('td', { class: 'mono', text: n.runtime_node }),
              h('td', { text: n.host }),
              h('td', { class: 'num', text: n.cluster_port ?? '—' }),
              h('td', {}, h('span', { class: `badge ${age <= LEASE_SECONDS ? 'up' : 'down'}`, text: age <= LEASE_SECONDS ? 'alive' : 'expired' })),
              h('td', { text: fmtAge(age) }),
              h('td', {}, ago(n.started_at)));
          }))));
      },
    };
  };

  // --- movements list ----------------------------------------------------------------------

  const seenTemplates = new Set();

  const PAGE_SIZES = [10, 25, 50, 100, 200];

  // datetime-local inputs are in the browser's zone; the hash and the
  // server get UTC ISO times.
  function localInputValue(iso) {
    const t = Date.parse(iso || '');
    if (Number.isNaN(t)) return '';
    const d = new Date(t - new Date(t).getTimezoneOffset() * 60000);
    return d.toISOString().slice(0, 16);
  }

  function isoFromLocalInput(value) {
    const t = Date.parse(value || '');
    return Number.isNaN(t) ? '' : new Date(t).toISOString();
  }

  VIEWS.movements = (r) => {
    const state = r.params.get('state') || '';
    const template = r.params.get('template') || '';
    const from = r.params.get('from') || '';
    const to = r.params.get('to') || '';
    const limit = PAGE_SIZES.includes(Number(r.params.get('limit'))) ? Number(r.params.get('limit')) : 50;
    // Keyset paging: cursors[i] opens page i ('' = the newest rows); the
    // live refresh reloads the page on show, so rows never shift under it.
    const cursors = [''];
    const stateSelect = h('select', { id: 'filter-state' },
      h('option', { value: '', text: 'any state' }),
      REQUEST_STATES.map((st) => h('option', { value: st, selected: st === state, text: st })));
    const templateInput = h('input', { id: 'filter-template', list: 'templates', placeholder: 'any template', value: template });
    const fromInput = h('input', { id: 'filter-from', type: 'datetime-local', value: localInputValue(from) });
    const toInput = h('input', { id: 'filter-to', type: 'datetime-local', value: localInputValue(to) });
    const limitSelect = h('select', { id: 'filter-limit' },
      PAGE_SIZES.map((n) => h('option', { value: n, selected: n === limit, text: `${n} per page` })));
    const datalist = h('datalist', { id: 'templates' });
    const apply = () => {
      const q = new URLSearchParams();
      if (stateSelect.value) q.set('state', stateSelect.value);
      if (templateInput.value.trim()) q.set('template', templateInput.value.trim());
      if (isoFromLocalInput(fromInput.value)) q.set('from', isoFromLocalInput(fromInput.value));
      if (isoFromLocalInput(toInput.value)) q.set('to', isoFromLocalInput(toInput.value));
      if (Number(limitSelect.value) !== 50) q.set('limit', limitSelect.value);
      const qs = q.toString();
      location.hash = '#/movements' + (qs ? '?' + qs : '');
    };
    stateSelect.addEventListener('change', apply);
    limitSelect.addEventListener('change', apply);
    const form = h('form', { class: 'filters', id: 'movement-filters', onsubmit: (e) => { e.preventDefault(); apply(); } },
      h('label', {}, 'State', stateSelect),
      h('label', {}, 'Template', templateInput, datalist),
      h('label', {}, 'Created from', fromInput),
      h('label', {}, 'Created before', toInput),
      h('label', {}, 'Page size', limitSelect),
      h('button', { type: 'submit', id: 'filter-apply', class: 'small', text: 'Filter' }));
    const table = h('div');
    const pager = h('div', { class: 'pager' });
    const root = h('div', {},
      h('h1', { text: 'Movements' }),
      h('div', { class: 'card' }, form, legend(NODE_STATES.filter((x) => x !== 'SKIPPED')), table, pager));
    const go = (page) => {
      cursors.length = page + 1;
      tick();
    };
    return {
      root,
      async load(current) {
        const q = new URLSearchParams();
        if (state) q.set('state', state);
        if (template) q.set('template_key', template);
        if (from) q.set('created_from', from);
        if (to) q.set('created_to', to);
        q.set('limit', String(limit));
        const page = cursors.length - 1;
        if (cursors[page]) q.set('cursor', cursors[page]);
        const data = await api('GET', '/admin/movements?' + q.toString());
        if (!current()) return;
        for (const m of data.items) seenTemplates.add(m.template_key);
        replace(datalist, [...seenTemplates].sort().map((t) => h('option', { value: t })));
        renderMovementRows(table, data.items, state || template || from || to);
        replace(pager,
          h('button', { class: 'small', type: 'button', id: 'page-first', disabled: page === 0, text: '« newest', onclick: () => go(0) }),
          h('button', { class: 'small', type: 'button', id: 'page-prev', disabled: page === 0, text: '‹ newer', onclick: () => go(page - 1) }),
          h('span', { id: 'page-number', class: 'muted small', 'data-page': page + 1, text: `page ${page + 1}` }),
          h('button', { class: 'small', type: 'button', id: 'page-next', disabled: !data.next_cursor, text: 'older ›',
            onclick: () => { cursors.push(data.next_cursor); tick(); } }));
      },
    };
  };

  function nodeBar(states, total) {
    if (!total) return h('span', { class: 'muted', text: '—' });
    return h('div', { class: 'bar', title: Object.entries(states).map(([k, v]) => `${k}: ${v}`).join(', ') },
      NODE_STATES.filter((st) => states[st]).map((st) => {
        const seg = h('i', { class: `s-${st}` });
        seg.style.width = `${(100 * states[st]) / total}%`; // CSSOM, allowed by the CSP
        return seg;
      }));
  }

  function renderMovementRows(el, items, filtered) {
    if (!items.length) {
      replace(el, empty(filtered ? 'No movements match these filters.' : 'No movements yet.'));
      return;
    }
    replace(el, h('table', {},
      h('thead', {}, h('tr', {}, ['id', 'template', 'state', 'nodes', 'amount', 'created', 'updated']
        .map((t) => h('th', { text: t })))),
      h('tbody', {}, items.map((m) => {
        const intent = m.intent || {};
        const done = (m.node_states && m.node_states.COMPLETED) || 0;
        return h('tr', { class: 'clickable', 'data-id': m.id, onclick: () => { location.hash = `#/movements/${m.id}`; } },
          h('td', {}, h('a', { class: 'mono', href: `#/movements/${m.id}`, title: m.id, text: shortId(m.id) })),
          h('td', { text: `${m.template_key} v${m.template_version}` }),
          h('td', {}, badge(m.request_state)),
          h('td', {}, nodeBar(m.node_states || {}, m.node_count), h('span', { class: 'muted small', text: `${done}/${m.node_count} completed` })),
          h('td', { class: 'num', text: intent.amount !== undefined ? `${intent.amount} ${intent.asset || ''}` : '' }),
          h('td', {}, ago(m.created_at)),
          h('td', {}, ago(m.updated_at)));
      }))));
  }

  // --- one movement -------------------------------------------------------------------------

  VIEWS.movement = (r) => {
    const id = r.id;
    if (ui.selectedMovement !== id) {
      ui.selectedMovement = id;
      ui.selectedNode = null;
    }
    const summary = h('div');
    const actions = actionsPanel(id);
    const dag = h('div', { class: 'dag-wrap', id: 'dag' });
    const timeline = h('div', { class: 'node-timeline-wrap', id: 'node-timeline' });
    const nodePanel = h('div');
    const nodes = h('div');
    const events = h('div');
    const root = h('div', {},
      h('p', {}, h('a', { href: '#/movements', text: '← all movements' })),
      h('h1', {}, 'Movement ', h('span', { class: 'mono', text: id })),
      h('div', { class: 'card' }, summary),
      actions.root,
      h('div', { class: 'card' }, h('h2', { text: 'DAG' }), legend(NODE_STATES),
        h('div', { class: 'dag-beside' }, dag,
          h('div', {}, h('h3', { text: 'Time in each state' }), timeline)),
        nodePanel),
      h('div', { class: 'card' }, h('h2', { text: 'Nodes' }), nodes),
      h('div', { class: 'card' }, h('h2', { text: 'Events' }), events));
    let lastData = null;
    const select = (key) => {
      ui.selectedNode = ui.selectedNode === key ? null : key;
      if (lastData) render(lastData);
    };
    const render = (m) => {
      renderSummary(summary, m);
      actions.render(m);
      renderDag(dag, m, select);
      renderNodeTimeline(timeline, m);
      renderNodePanel(nodePanel, m);
      renderNodes(nodes, m, select);
      renderEvents(events, m);
    };
    return {
      root,
      async load(current) {
        const m = await api('GET', `/admin/movements/${encodeURIComponent(id)}`);
        if (!current()) return;
        lastData = m;
        render(m);
      },
    };
  };

  // --- actions (signed /v3 calls through the relay) -------------------------------------------

  const RETRY_REQUEST_STATES = new Set(['EXECUTING', 'MANUAL_INTERVENTION', 'FAILED']);
  const COMPLETE_REQUEST_STATES = new Set(['EXECUTING', 'WAITING_MANUAL_ACTION']);
  const CANCEL_REQUEST_STATES = new Set(['PENDING_APPROVAL', 'APPROVED', 'EXECUTING', 'WAITING_MANUAL_ACTION']);

  /// What the page offers for `m`; the server still decides (SPEC §5's
  /// transition table), and its refusal is shown as it answered.
  function offeredActions(m) {
    const st = m.request_state;
    const nodes = m.nodes || [];
    const out = [];
    if (st === 'PENDING_APPROVAL') out.push({ action: 'approve', label: 'Approve' }, { action: 'reject', label: 'Reject' });
    if (CANCEL_REQUEST_STATES.has(st)) out.push({ action: 'cancel', label: 'Cancel' });
    if (st === 'MANUAL_INTERVENTION' || st === 'WAITING_MANUAL_ACTION') out.push({ action: 'resume', label: 'Resume' });
    if (RETRY_REQUEST_STATES.has(st))
      for (const n of nodes.filter((x) => x.node_state === 'FAILED' || x.node_state === 'UNKNOWN'))
        out.push({ action: 'retry', node: n.node_key, label: `Retry ${n.node_key}` });
    if (COMPLETE_REQUEST_STATES.has(st))
      for (const n of nodes.filter((x) => x.node_state === 'READY' && String(x.action_type).startsWith('manual_')))
        out.push({ action: 'complete', node: n.node_key, label: `Complete ${n.node_key}` });
    return out;
  }

  function actionCall(id, a, reason, refs) {
    const base = `/v3/movements/${encodeURIComponent(id)}`;
    if (a.action === 'retry') return ['POST', `${base}/retry`, { node_key: a.node }];
    if (a.action === 'complete') return ['POST', `${base}/nodes/${encodeURIComponent(a.node)}/complete`, refs ? { provider_refs: refs } : {}];
    if ((a.action === 'reject' || a.action === 'cancel') && reason) return ['POST', `${base}/${a.action}`, { reason }];
    return ['POST', `${base}/${a.action}`, {}];
  }

  // Built once per view: the key form and text fields survive the refresh;
  // only the buttons follow the movement's state.
  function actionsPanel(id) {
    const keyArea = h('div', { id: 'api-key' });
    const buttons = h('div', { class: 'actions', id: 'actions' });
    const flash = h('div', { id: 'action-flash' });
    const reason = h('input', { id: 'action-reason', placeholder: 'reason (reject / cancel, optional)', maxlength: 500 });
    const refs = h('textarea', { id: 'complete-refs', rows: 2, placeholder: 'provider_refs for a manual complete, JSON object (optional)', spellcheck: 'false' });
    const fields = h('div', { class: 'action-fields' }, reason, refs);
    const root = h('div', { class: 'card' }, h('h2', { text: 'Actions' }), keyArea, buttons, fields, flash);
    let offeredKey = null;
    let last = null;

    const showFlash = () => {
      const f = ui.actionFlash && ui.actionFlash.id === id ? ui.actionFlash : null;
      replace(flash, f ? h('p', { id: 'action-result', class: f.ok ? 'ok' : 'inline-error', 'data-status': f.status, text: f.text }) : '');
    };

    const renderKey = () => {
      if (mgSigning.keyId()) {
        replace(keyArea, h('p', { class: 'small' }, 'Signing as ', h('strong', { id: 'api-key-current', class: 'mono', text: mgSigning.keyId() }),
          h('span', { class: 'muted', text: ' (held in this tab\'s memory only) ' }),
          h('button', { class: 'small secondary', type: 'button', id: 'api-key-forget', text: 'Forget key',
            onclick: () => { mgSigning.forget(); renderKey(); renderButtons(true); } })));
        return;
      }
      if (!mgSigning.available()) {
        replace(keyArea, h('p', { class: 'inline-error', text: 'Actions need WebCrypto: open this page on localhost or over https.' }));
        return;
      }
      const keyId = h('input', { id: 'api-key-id', placeholder: 'key id', autocomplete: 'off', spellcheck: 'false' });
      const secret = h('input', { id: 'api-key-secret', type: 'password', placeholder: 'secret', autocomplete: 'off' });
      const form = h('form', { class: 'filters', id: 'api-key-form', autocomplete: 'off' },
        h('label', {}, 'API key id', keyId), h('label', {}, 'Secret', secret),
        h('button', { type: 'submit', class: 'small', id: 'api-key-use', text: 'Use key' }));
      form.addEventListener('submit', async (e) => {
        e.preventDefault(); // never a form submission: the secret must not reach a URL
        const k = keyId.value.trim();
        const sec = secret.value;
        secret.value = '';
        if (!k || !sec) return;
        try {
          await mgSigning.setKey(k, sec);
        } catch (err) {
          ui.actionFlash = { id, ok: false, status: 0, text: describe(err) };
          showFlash();
          return;
        }
        renderKey();
        renderButtons(true);
      });
      replace(keyArea, h('p', { class: 'muted small', text: 'Actions are /v3 calls signed in this tab (HMAC, SPEC §5) with an API key you paste here. The key stays in this tab\'s memory only; reloading the page forgets it. The server checks scopes and four-eyes as on /v3.' }), form);
    };

    const act = async (a, button) => {
      let parsedRefs = null;
      if (a.action === 'complete' && refs.value.trim()) {
        try {
          parsedRefs = JSON.parse(refs.value);
        } catch (e) {
          ui.actionFlash = { id, ok: false, status: 0, text: 'provider_refs is not JSON.' };
          showFlash();
          return;
        }
      }
      for (const b of buttons.querySelectorAll('button')) b.disabled = true;
      const [method, path, body] = actionCall(id, a, reason.value.trim(), parsedRefs);
      try {
        const answer = await v3(method, path, body);
        ui.actionFlash = { id, ok: true, status: 200, text: `${a.label}: done, the movement is now ${answer && answer.request_state ? answer.request_state : 'updated'}.` };
      } catch (e) {
        if (isAuthError(e)) { showLogin(describe(e)); return; }
        ui.actionFlash = { id, ok: false, status: e.status || 0, text: `${a.label} refused: ${describe(e)}` };
      }
      showFlash();
      renderButtons(true);
      tick();
    };

    const renderButtons = (force) => {
      const offered = last ? offeredActions(last) : [];
      const signature = JSON.stringify([mgSigning.keyId(), offered]);
      if (!force && signature === offeredKey) return;
      offeredKey = signature;
      if (!offered.length) {
        replace(buttons, h('p', { class: 'muted small', text: `No action applies to a ${last ? last.request_state : ''} movement.` }));
        return;
      }
      replace(buttons, offered.map((a) => {
        const b = h('button', { type: 'button', class: `small action-${a.action}`, 'data-action': a.action,
          'data-node': a.node, disabled: !mgSigning.keyId(), title: mgSigning.keyId() ? '' : 'paste an API key first', text: a.label });
        b.addEventListener('click', () => act(a, b));
        return b;
      }));
    };

    renderKey();
    showFlash();
    return {
      root,
      render(m) {
        last = m;
        renderButtons(false);
      },
    };
  }

  // --- per-node timeline (from the events) ---------------------------------------------------------

  const TERMINAL_NODE_STATES = new Set(['COMPLETED', 'FAILED', 'SKIPPED', 'CANCELLED']);

  /// Each node's states over time: [{state, from, to}] in ms, from
  /// node_state_changed events; every node starts BLOCKED at creation. The
  /// last state of a node still moving runs until now.
  function nodeSegments(m) {
    const now = Date.now() + serverOffsetMs;
    const start = parseTime(m.created_at);
    const open = new Map();
    const segments = new Map();
    for (const d of (m.dag && m.dag.nodes) || m.nodes || []) {
      open.set(d.node_key, { state: 'BLOCKED', from: start });
      segments.set(d.node_key, []);
    }
    for (const e of m.events || []) {
      const next = e.payload && e.payload.node_state;
      if (e.event_type !== 'node_state_changed' || !e.node_key || !next || !segments.has(e.node_key)) continue;
      const at = parseTime(e.occurred_at);
      const cur = open.get(e.node_key);
      if (cur.state === next) continue;
      segments.get(e.node_key).push({ state: cur.state, from: cur.from, to: Math.max(cur.from, at) });
      open.set(e.node_key, { state: next, from: Math.max(cur.from, at) });
    }
    let end = start;
    for (const [key, cur] of open) {
      const ends = TERMINAL_NODE_STATES.has(cur.state) ? cur.from : Math.max(cur.from, now);
      segments.get(key).push({ state: cur.state, from: cur.from, to: ends, last: true });
      end = Math.max(end, ends);
    }
    return { segments, start, end };
  }

  function fmtDuration(ms) {
    if (ms < 1000) return `${Math.round(ms)} ms`;
    if (ms < 60000) return `${(ms / 1000).toFixed(1)} s`;
    if (ms < 3600000) return `${Math.floor(ms / 60000)} min ${Math.round((ms % 60000) / 1000)} s`;
    return `${(ms / 3600000).toFixed(1)} h`;
  }

  function renderNodeTimeline(el, m) {
    const { segments, start, end } = nodeSegments(m);
    if (!segments.size) {
      replace(el, empty('No nodes.'));
      return;
    }
    const LABEL = 110, W = 420, ROW = 22, PAD = 4;
    const span = Math.max(1, end - start);
    const x = (t) => LABEL + ((t - start) / span) * W;
    const height = PAD * 2 + segments.size * ROW + 16;
    const svg = s('svg', { class: 'node-timeline', width: LABEL + W + 8, height, viewBox: `0 0 ${LABEL + W + 8} ${height}`, role: 'img', 'aria-label': 'time each node spent in each state' });
    const rows = [];
    [...segments.entries()].forEach(([key, segs], i) => {
      const y = PAD + i * ROW;
      const g = s('g', { class: 'tl-row', 'data-node-key': key }, s('text', { class: 'tl-label', x: 0, y: y + 15, text: truncate(key, 16) }));
      const totals = new Map();
      for (const seg of segs) {
        const ms = seg.to - seg.from;
        if (!(seg.last && TERMINAL_NODE_STATES.has(seg.state))) totals.set(seg.state, (totals.get(seg.state) || 0) + ms);
        const w = Math.max(seg.last && TERMINAL_NODE_STATES.has(seg.state) ? 3 : 1, x(seg.to) - x(seg.from));
        g.append(s('rect', { class: `tl-seg s-${seg.state}`, 'data-state': seg.state, 'data-ms': Math.round(ms), x: x(seg.from), y: y + 3, width: w, height: ROW - 6, rx: 2 },
          s('title', { text: `${key}: ${seg.state}${seg.last && TERMINAL_NODE_STATES.has(seg.state) ? '' : ' for ' + fmtDuration(ms)}` })));
      }
      svg.append(g);
      rows.push(h('tr', { 'data-node-key': key },
        h('td', { class: 'mono', text: key }),
        h('td', {}, [...totals.entries()].map(([st, ms]) => h('span', { class: `tl-chip s-${st}`, 'data-state': st, 'data-ms': Math.round(ms) },
          h('i', { class: 'swatch' }), `${st} ${fmtDuration(ms)}`)))));
    });
    svg.append(s('text', { class: 'tl-axis', x: LABEL, y: height - 3, text: '0' }),
      s('text', { class: 'tl-axis', x: LABEL + W, y: height - 3, 'text-anchor': 'end', text: fmtDuration(span) }));
    replace(el, svg,
      m.events_truncated ? h('p', { class: 'muted small', text: 'From the newest events only: older changes are not shown.' }) : '',
      h('table', { id: 'node-timeline-table', class: 'compact' }, h('tbody', {}, rows)));
  }

  function renderSummary(el, m) {
    const intent = m.intent || {};
    replace(el, h('dl', { class: 'kv' },
      h('dt', { text: 'state' }), h('dd', { id: 'movement-state' }, badge(m.request_state),
        m.dispatch_paused ? h('span', { class: 'inline-error', text: ' dispatch paused' }) : ''),
      h('dt', { text: 'template' }), h('dd', { text: `${m.template_key} v${m.template_version}` }),
      h('dt', { text: 'amount' }), h('dd', { text: intent.amount !== undefined ? `${intent.amount} ${intent.asset || ''}` : '—' }),
      h('dt', { text: 'approval' }), h('dd', { text: `${m.approval_status}${m.approved_by ? ' by ' + m.approved_by : ''}` }),
      h('dt', { text: 'created' }), h('dd', {}, ago(m.created_at), h('span', { class: 'muted', text: m.created_by ? ` by ${m.created_by}` : '' })),
      h('dt', { text: 'updated' }), h('dd', {}, ago(m.updated_at)),
      h('dt', { text: 'frontier' }), h('dd', { class: 'mono', text: (m.current_frontier || []).join(', ') || '—' }),
      h('dt', { text: 'callback' }), h('dd', { class: 'mono', text: m.callback_url || '—' })));
  }

  /// Layers by longest path from a root (topological order); within a layer,
  /// nodes sit near the mean row of their predecessors to limit crossings.
  function layoutDag(dag) {
    const keys = dag.nodes.map((n) => n.node_key);
    const known = new Set(keys);
    const preds = new Map(keys.map((k) => [k, []]));
    const succs = new Map(keys.map((k) => [k, []]));
    for (const [from, to] of dag.edges || []) {
      if (!known.has(from) || !known.has(to)) continue;
      preds.get(to).push(from);
      succs.get(from).push(to);
    }
    const layer = new Map();
    const indegree = new Map(keys.map((k) => [k, preds.get(k).length]));
    const queue = keys.filter((k) => indegree.get(k) === 0);
    queue.forEach((k) => layer.set(k, 0));
    for (let i = 0; i < queue.length; i++) {
      const k = queue[i];
      for (const n of succs.get(k)) {
        layer.set(n, Math.max(layer.get(n) || 0, layer.get(k) + 1));
        indegree.set(n, indegree.get(n) - 1);
        if (indegree.get(n) === 0) queue.push(n);
      }
    }
    for (const k of keys) if (!layer.has(k)) layer.set(k, 0); // a cycle would be a bug; still draw it
    const layers = [];
    for (const k of keys) (layers[layer.get(k)] = layers[layer.get(k)] || []).push(k);
    const row = new Map();
    layers.forEach((members, li) => {
      if (li > 0) {
        const weight = (k) => {
          const p = preds.get(k).filter((x) => row.has(x));
          return p.length ? p.reduce((a, x) => a + row.get(x), 0) / p.length : 0;
        };
        members.sort((a, b) => weight(a) - weight(b));
      }
      members.forEach((k, i) => row.set(k, i - (members.length - 1) / 2));
    });
    return { layers, layer, row, preds, succs };
  }

  function renderDag(el, m, select) {
    const dag = m.dag || { nodes: [], edges: [] };
    if (!dag.nodes.length) {
      replace(el, empty('This movement has no nodes.'));
      return;
    }
    const byKey = new Map((m.nodes || []).map((n) => [n.node_key, n]));
    const W = 178, H = 58, GAP_X = 72, GAP_Y = 20, PAD = 16;
    const { layers, layer, row } = layoutDag(dag);
    const tallest = Math.max(...layers.map((l) => l.length));
    const width = PAD * 2 + layers.length * W + (layers.length - 1) * GAP_X;
    const height = PAD * 2 + tallest * H + (tallest - 1) * GAP_Y;
    const mid = height / 2;
    const pos = (k) => ({ x: PAD + layer.get(k) * (W + GAP_X), y: mid + row.get(k) * (H + GAP_Y) - H / 2 });
    const svg = s('svg', { class: 'dag', width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': 'movement DAG' },
      s('defs', {}, s('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' },
        s('path', { class: 'arrow', d: 'M 0 0 L 10 5 L 0 10 z' }))));
    for (const [from, to] of dag.edges || []) {
      if (!layer.has(from) || !layer.has(to)) continue;
      const a = pos(from), b = pos(to);
      const x1 = a.x + W, y1 = a.y + H / 2, x2 = b.x - 2, y2 = b.y + H / 2;
      const dx = (x2 - x1) / 2;
      const done = byKey.get(from) && byKey.get(from).node_state === 'COMPLETED';
      svg.append(s('path', { class: `edge ${done ? 'done' : ''}`, 'data-edge': `${from}->${to}`, d: `M ${x1} ${y1} C ${x1 + dx} ${y1}, ${x2 - dx} ${y2}, ${x2} ${y2}`, 'marker-end': 'url(#arrow)' }));
    }
    for (const d of dag.nodes) {
      const n = byKey.get(d.node_key) || {};
      const state = n.node_state || d.node_state || 'BLOCKED';
      const p = pos(d.node_key);
      const classes = ['dag-node', `s-${state}`];
      if (IN_FLIGHT.has(state)) classes.push('active');
      if (LIGHT_FILLS.has(state)) classes.push('light');
      if (ui.selectedNode === d.node_key) classes.push('selected');
      const attempt = n.attempt_no ? ` · attempt ${n.attempt_no}` : '';
      svg.append(s('g', { class: classes.join(' '), 'data-node-key': d.node_key, 'data-state': state, transform: `translate(${p.x} ${p.y})`, onclick: () => select(d.node_key) },
        s('title', { text: `${d.node_key} (${d.action_type}): ${state}${attempt}${n.error_code ? ' — ' + n.error_code : ''}` }),
        s('rect', { width: W, height: H, rx: 9, ry: 9 }),
        s('text', { class: 'key', x: 12, y: 22, text: truncate(d.node_key, 22) }),
        s('text', { x: 12, y: 42, text: truncate(`${state}${attempt}`, 26) })));
    }
    replace(el, svg);
  }

  function truncate(text, max) {
    return text.length > max ? text.slice(0, max - 1) + '…' : text;
  }

  function renderNodePanel(el, m) {
    const n = (m.nodes || []).find((x) => x.node_key === ui.selectedNode);
    if (!n) {
      replace(el, h('p', { class: 'muted small', text: 'Select a node to see its provider refs and artifacts.' }));
      return;
    }
    replace(el, h('div', { class: 'grid2' },
      h('div', {},
        h('h3', {}, 'Node ', h('span', { class: 'mono', text: n.node_key }), ' ', badge(n.node_state)),
        h('dl', { class: 'kv' },
          h('dt', { text: 'action' }), h('dd', { text: `${n.action_type} (${n.node_kind}, executor ${n.executor_key})` }),
          h('dt', { text: 'attempt' }), h('dd', { text: n.attempt_no }),
          h('dt', { text: 'provider state' }), h('dd', { text: n.provider_state || '—' }),
          h('dt', { text: 'observed' }), h('dd', { text: `${n.observe_count} time(s)` }),
          h('dt', { text: 'claimed by' }), h('dd', { class: 'mono', text: n.claimed_by || '—' }),
          h('dt', { text: 'started' }), h('dd', {}, ago(n.started_at)),
          h('dt', { text: 'updated' }), h('dd', {}, ago(n.updated_at)),
          h('dt', { text: 'error' }), h('dd', { class: n.error_code ? 'inline-error' : '', text: n.error_code ? `${n.error_code}${n.error_detail ? ': ' + n.error_detail : ''}` : '—' })),
        h('h3', { text: 'Provider refs' }), jsonBlock(n.provider_refs || {})),
      h('div', {},
        h('h3', { text: `Artifacts (${(n.artifacts || []).length})` }),
        (n.artifacts || []).length
          ? (n.artifacts || []).map((a, i) => details(`art:${m.id}:${n.node_key}:${i}`,
            `${a.kind} · attempt ${a.attempt_no} · ${fmtAge(secondsSince(a.created_at))}`, jsonBlock(a.payload)))
          : empty('No artifacts yet.'))));
  }

  function renderNodes(el, m, select) {
    const nodes = m.nodes || [];
    if (!nodes.length) {
      replace(el, empty('No nodes.'));
      return;
    }
    replace(el, h('table', {},
      h('thead', {}, h('tr', {}, ['node', 'action', 'state', 'attempt', 'provider state', 'provider refs', 'artifacts', 'error', 'started', 'updated']
        .map((t) => h('th', { text: t })))),
      h('tbody', {}, nodes.map((n) => h('tr', { class: 'clickable', 'data-node-row': n.node_key, onclick: () => select(n.node_key) },
        h('td', { class: 'mono', text: n.node_key }),
        h('td', { class: 'small', text: n.action_type }),
        h('td', {}, badge(n.node_state)),
        h('td', { class: 'num', text: n.attempt_no }),
        h('td', { text: n.provider_state || '' }),
        h('td', { class: 'mono small', text: compact(n.provider_refs, 80) }),
        h('td', { class: 'num', text: (n.artifacts || []).length }),
        h('td', { class: 'inline-error small', text: n.error_code || '' }),
        h('td', {}, ago(n.started_at)),
        h('td', {}, ago(n.updated_at)))))));
  }

  function renderEvents(el, m) {
    const events = (m.events || []).slice().reverse(); // newest first
    if (!events.length) {
      replace(el, empty('No events yet.'));
      return;
    }
    replace(el,
      m.events_truncated ? h('p', { class: 'muted small', text: `Showing the newest ${events.length} events.` }) : '',
      h('ul', { class: 'timeline', id: 'timeline' }, events.map((e) => h('li', { 'data-event-type': e.event_type },
        ago(e.occurred_at),
        h('span', {}, h('strong', { text: e.event_type }), e.node_key ? h('span', { class: 'mono muted', text: ` ${e.node_key}` }) : ''),
        compact(e.payload) ? details(`ev:${e.id}`, eventSummary(e), jsonBlock(e.payload)) : h('span', { class: 'muted', text: '—' })))));
  }

  // The payload is the callback body: show what changed, the rest on demand.
  function eventSummary(e) {
    const p = e.payload || {};
    const parts = [];
    if (p.node_state) parts.push(`→ ${p.node_state}`);
    else if (p.request_state) parts.push(`request ${p.request_state}`);
    if (p.data && Object.keys(p.data).length) parts.push(compact(p.data, 90));
    return parts.join(' · ') || 'payload';
  }

  // --- callbacks DLQ ------------------------------------------------------------------------

  VIEWS.dlq = () => {
    const flash = h('div');
    const body = h('div');
    const root = h('div', {},
      h('h1', { text: 'Callbacks dead-letter queue' }),
      h('p', { class: 'muted', text: 'Callbacks that used up their attempts. Redeliver puts a row back to pending with attempts 0 and the same event id.' }),
      h('div', { class: 'card' }, flash, body));
    const showFlash = () => {
      const f = ui.dlqFlash;
      replace(flash, f ? h('p', { id: 'dlq-flash', class: f.ok ? 'ok' : 'inline-error', text: f.text }) : '');
    };
    const redeliver = async (row, button) => {
      button.disabled = true;
      try {
        const result = await api('POST', `/admin/callbacks/${encodeURIComponent(row.id)}/redeliver`);
        const st = result && (result.status || (result.item && result.item.status));
        ui.dlqFlash = { ok: true, text: `Callback ${shortId(row.id)} (${row.event_type}) redelivered: now ${st || 'pending'}, attempts ${result && result.attempts !== undefined ? result.attempts : 0}.` };
      } catch (e) {
        if (isAuthError(e)) { showLogin(describe(e)); return; }
        ui.dlqFlash = { ok: false, text: `Redeliver of ${shortId(row.id)} failed: ${describe(e)}` };
        button.disabled = false;
      }
      showFlash();
      tick();
    };
    return {
      root,
      async load(current) {
        let rows;
        try {
          const data = await api('GET', '/admin/callbacks?status=dlq');
          rows = Array.isArray(data) ? data : (data && data.items) || [];
        } catch (e) {
          if (e instanceof ApiError && e.status === 404) {
            if (current()) replace(body, empty('The callbacks DLQ is not available on this server.'));
            return;
          }
          throw e;
        }
        if (!current()) return;
        showFlash();
        if (!rows.length) {
          replace(body, empty('The DLQ is empty: every callback was delivered or is still being retried.'));
          return;
        }
        replace(body, h('table', { id: 'dlq-table' },
          h('thead', {}, h('tr', {}, ['event', 'movement', 'attempts', 'last error', 'created', ''].map((t) => h('th', { text: t })))),
          h('tbody', {}, rows.map((row) => {
            const button = h('button', { class: 'small', type: 'button', 'data-redeliver': row.id, text: 'Redeliver' });
            button.addEventListener('click', () => redeliver(row, button));
            return h('tr', { 'data-callback-id': row.id },
              h('td', {}, h('strong', { text: row.event_type }), h('div', { class: 'mono muted small', title: row.event_id, text: shortId(row.event_id) })),
              h('td', {}, h('a', { class: 'mono', href: `#/movements/${row.request_id}`, text: shortId(row.request_id) })),
              h('td', { class: 'num', text: `${row.attempts}/${row.max_attempts}` }),
              h('td', { class: 'inline-error small', text: row.last_error || '' }),
              h('td', {}, ago(row.created_at)),
              h('td', {}, button));
          }))));
      },
    };
  };

  // --- start --------------------------------------------------------------------------------

  document.addEventListener('DOMContentLoaded', () => {
    $('login-form').addEventListener('submit', signIn);
    $('logout').addEventListener('click', () => showLogin(''));
    window.addEventListener('hashchange', navigate);
    document.addEventListener('visibilitychange', () => {
      if (document.visibilityState === 'visible' && token) tick();
    });
    setInterval(backgroundSample, SAMPLE_EVERY_MS / 2);
    if (token) startSession(); else showLogin('');
  });
})();
