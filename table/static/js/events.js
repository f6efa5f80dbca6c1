// Server-Sent Events read with fetch(): EventSource cannot send an Authorization header,
// and a seat's token must never travel in a URL. The parser follows the HTML standard's
// event-stream rules (data/event/id/retry fields, comments, CR/LF/CRLF line ends); a
// dropped stream is resumed with Last-Event-ID after the server's `retry:` delay.

import { sleep } from './dom.js';

export class SseParser {
  constructor(dispatch) {
    this.dispatch = dispatch;
    this.buffer = '';
    this.skipLF = false; // the last chunk ended in CR: a LF starting the next one is that line's end
    this.lastId = null;
    this.retry = null;
    this.reset();
  }

  reset() {
    this.data = [];
    this.event = '';
  }

  push(text) {
    let chunk = this.buffer + text;
    this.buffer = '';
    if (this.skipLF && chunk[0] === '\n') chunk = chunk.slice(1);
    this.skipLF = false;
    let start = 0;
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk[i];
      if (c !== '\n' && c !== '\r') continue;
      this.line(chunk.slice(start, i));
      if (c === '\r') {
        if (i + 1 === chunk.length) this.skipLF = true;
        else if (chunk[i + 1] === '\n') i++;
      }
      start = i + 1;
    }
    this.buffer = chunk.slice(start);
  }

  line(line) {
    if (line === '') {
      if (this.data.length) this.dispatch({ event: this.event || 'message', data: this.data.join('\n'), id: this.lastId });
      this.reset();
      return;
    }
    if (line[0] === ':') return; // a comment: the server's keep-alive ping
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value[0] === ' ') value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.event = value;
    else if (field === 'id' && !value.includes('\0')) this.lastId = value;
    else if (field === 'retry' && /^\d+$/.test(value)) this.retry = Number(value);
  }
}

const DEFAULT_RETRY_MS = 2000;
const MAX_BACKOFF_MS = 30000;

export class EventStream {
  // onMessage({event, data, id}); onState(state, detail): connecting, live, reconnecting,
  // ended (finish() was called and the stream ended), failed (the server refused for good).
  // lastId: start after this event (the cursor of a read made before), not from a snapshot.
  constructor(url, { token = null, lastId = null, onMessage, onState = () => {} }) {
    this.url = url;
    this.token = token;
    this.onMessage = onMessage;
    this.onState = onState;
    this.lastId = lastId;
    this.wasLive = false;
    this.retry = DEFAULT_RETRY_MS;
    this.stopped = false;
    this.finished = false;
    this.controller = null;
  }

  start() {
    this.loop();
    return this;
  }

  // The game is over: read what is left (after a dropped stream too: the last moves may be
  // among the events still to come), then do not come back.
  finish() {
    this.finished = true;
  }

  stop() {
    this.stopped = true;
    this.controller?.abort();
  }

  async loop() {
    let failures = 0;
    while (!this.stopped) {
      this.onState(this.wasLive ? 'reconnecting' : 'connecting');
      this.controller = new AbortController();
      const headers = { Accept: 'text/event-stream' };
      if (this.token) headers.Authorization = `Bearer ${this.token}`;
      if (this.lastId) headers['Last-Event-ID'] = this.lastId;
      let wait;
      try {
        const response = await fetch(this.url, { headers, signal: this.controller.signal, cache: 'no-store' });
        const type = response.headers.get('Content-Type') || '';
        if (response.status === 200 && type.startsWith('text/event-stream')) {
          failures = 0;
          this.wasLive = true;
          this.onState('live');
          await this.read(response.body);
          if (this.finished) {
            this.onState('ended');
            return;
          }
          wait = this.retry;
        } else {
          const body = await response.json().catch(() => ({}));
          if ([400, 401, 403, 404].includes(response.status)) {
            this.onState('failed', body.detail || `The server refused the event stream (${response.status}).`);
            return;
          }
          const after = response.headers.get('Retry-After');
          wait = after && /^\d+$/.test(after) ? Number(after) * 1000 : backoff(failures++);
        }
      } catch (err) {
        if (this.stopped) return;
        wait = backoff(failures++);
      }
      if (this.stopped) return;
      this.onState('reconnecting');
      await sleep(wait, this.controller.signal);
    }
  }

  async read(body) {
    const parser = new SseParser((message) => {
      this.lastId = message.id;
      this.onMessage(message);
    });
    const reader = body.pipeThrough(new TextDecoderStream()).getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        parser.push(value);
        if (parser.retry !== null) this.retry = parser.retry;
        if (parser.lastId !== null) this.lastId = parser.lastId;
      }
    } catch (err) {
      if (this.stopped) return;
      // a dropped connection: resume from the last id seen
    }
  }
}

function backoff(failures) {
  const base = Math.min(MAX_BACKOFF_MS, 1000 * 2 ** failures);
  return base / 2 + Math.random() * base / 2;
}
