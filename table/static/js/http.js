// Calls to the game service. Errors come back as problem+json (RFC 9457) with a stable
// `code`; they are thrown as Problem so that the table can show the server's own words.

import { sleep } from './dom.js';

export class Problem extends Error {
  constructor(status, body = {}, headers = null) {
    super(body.detail || body.title || `HTTP ${status}`);
    this.status = status;
    this.code = body.code || (status ? `http_${status}` : 'network_error');
    this.detail = body.detail || body.title || (status ? `The server answered ${status}.` : 'The server cannot be reached.');
    this.reason = body.reason ?? null; // a refused name's reason (invalid_name): bidi_control, ...
    this.body = body;
    this.headers = headers;
  }

  // The code to show: the reason too where the problem has one ("invalid_name: bidi_control").
  get shownCode() {
    return this.reason ? `${this.code}: ${this.reason}` : this.code;
  }

  get retryAfterMs() {
    const value = this.headers?.get('Retry-After');
    return value && /^\d+$/.test(value) ? Number(value) * 1000 : null;
  }
}

// application/json and application/problem+json; not application/x-ndjson (a game log)
const JSON_TYPE = /^application\/(?:[\w.-]+\+)?json\s*(?:;|$)/i;

export async function call(method, path, { token, json, body, contentType, headers = {}, signal } = {}) {
  const h = new Headers(headers);
  if (token) h.set('Authorization', `Bearer ${token}`);
  let payload = body;
  if (json !== undefined) {
    h.set('Content-Type', 'application/json');
    payload = JSON.stringify(json);
  } else if (contentType) {
    h.set('Content-Type', contentType);
  }
  let response;
  try {
    response = await fetch(path, { method, headers: h, body: payload, signal, cache: 'no-store' });
  } catch (err) {
    if (err.name === 'AbortError') throw err;
    throw new Problem(0, { code: 'network_error', detail: 'The server cannot be reached; check the connection.' });
  }
  const type = response.headers.get('Content-Type') || '';
  let data = null;
  if (response.status !== 304 && response.status !== 204) {
    data = JSON_TYPE.test(type) ? await response.json().catch(() => null) : await response.text();
  }
  if (!response.ok && response.status !== 304) {
    throw new Problem(response.status, data && typeof data === 'object' ? data : { detail: String(data || '') || undefined },
      response.headers);
  }
  return { status: response.status, etag: response.headers.get('ETag'), body: data, headers: response.headers };
}

// An Idempotency-Key: 128 random bits as 32 hex digits, made with getRandomValues
// (randomUUID needs a secure context, and friends may reach the table over plain http on a
// home network). A join's key must be unguessable (its retry gets the seat's token): this is.
export function newKey() {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

const ATTEMPTS = 3; // tries of a move or a join

// A move: If-Match with the version the player saw, and one Idempotency-Key for every try,
// so that a retry after a lost answer can never apply the move twice.
export function postMove(gameId, token, etag, action) {
  const key = newKey();
  return withRetries(() => call('POST', `/games/${gameId}/moves`, {
    token, json: { action }, headers: { 'If-Match': etag, 'Idempotency-Key': key },
  }));
}

// A join: one Idempotency-Key for every try, so that a join whose answer (the seat's token)
// was lost gets it again rather than 409 seat_taken (the server gives it only to this
// address, and only for this key).
export function postJoin(gameId, seat, name) {
  const key = newKey();
  return withRetries(() => call('POST', `${gamePath(gameId)}/seats/${seat}`, {
    json: { name }, headers: { 'Idempotency-Key': key },
  }));
}

// ``send`` again after a lost connection, a 429 or a 503, a few times.
async function withRetries(send) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await send();
    } catch (err) {
      const again = err instanceof Problem && (err.status === 0 || err.status === 429 || err.status === 503);
      if (!again || attempt >= ATTEMPTS) throw err;
      await sleep(Math.min(err.retryAfterMs ?? 400 * attempt, 5000));
    }
  }
}

export function gamePath(gameId) {
  return `/games/${encodeURIComponent(gameId)}`;
}
