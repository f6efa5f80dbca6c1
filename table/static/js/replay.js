// Replaying a finished game move by move. The browser holds no rules: the server rebuilds
// the positions from the game log with the engine (POST /replay) and the viewer steps
// through them, forwards and backwards. A log shows every hand, so the replay does too.

import { clear, h, keepFocus } from './dom.js';
import { call, gamePath, Problem } from './http.js';
import * as R from './render.js';

const PLAY_MS = 700;

export function showReplay(root, gameId) {
  const viewer = new ReplayViewer(root, `game ${gameId}`);
  viewer.start(async () => {
    const log = await call('GET', `${gamePath(gameId)}/log`);
    return log.body;
  });
  return viewer;
}

export function showReplayFile(root, file) {
  const viewer = new ReplayViewer(root, file.name);
  viewer.start(() => file.text());
  return viewer;
}

class ReplayViewer {
  constructor(root, title) {
    this.root = root;
    this.title = title;
    this.data = null;
    this.at = 0;
    this.timer = null;
    this.onKey = (event) => this.keydown(event);
  }

  async start(readLog) {
    document.title = `Replay of ${this.title} — Canasta`;
    document.addEventListener('keydown', this.onKey);
    clear(this.root, h('p', { class: 'muted' }, 'Rebuilding the game from its log…'));
    try {
      const text = await readLog();
      const r = await call('POST', '/replay', { body: text, contentType: 'application/x-ndjson' });
      this.data = r.body;
    } catch (err) {
      if (!(err instanceof Problem)) throw err;
      const where = err.body?.line ? ` (line ${err.body.line})` : '';
      clear(this.root, h('section', { class: 'fatal', role: 'alert', id: 'replay-error' },
        h('h1', {}, `Cannot replay ${this.title}`),
        h('p', {}, err.detail, where, ' ', h('code', {}, err.code)),
        h('p', {}, h('a', { href: '#' }, 'Back to the start page'))));
      return;
    }
    if (!this.data.frames.length) {
      clear(this.root, h('p', { role: 'alert' }, 'The log has no deal: there is nothing to replay.'));
      return;
    }
    this.at = this.data.frames.length - 1;
    this.render();
  }

  stop() {
    document.removeEventListener('keydown', this.onKey);
    this.pause();
  }

  go(index) {
    const last = this.data.frames.length - 1;
    this.at = Math.max(0, Math.min(last, index));
    if (this.at === last) this.pause();
    this.render();
  }

  play() {
    if (this.timer) {
      this.pause();
      this.render();
      return;
    }
    if (this.at === this.data.frames.length - 1) this.at = 0;
    this.timer = setInterval(() => this.go(this.at + 1), PLAY_MS);
    this.render();
  }

  pause() {
    clearInterval(this.timer);
    this.timer = null;
  }

  keydown(event) {
    if (!this.data || event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.target.closest?.('input:not([type=range]), textarea, select')) return;
    const moves = { ArrowLeft: -1, ArrowRight: 1, PageUp: -10, PageDown: 10 };
    if (event.key in moves && event.target.type !== 'range') this.go(this.at + moves[event.key]);
    else if (event.key === 'Home') this.go(0);
    else if (event.key === 'End') this.go(this.data.frames.length - 1);
    else return;
    event.preventDefault();
  }

  render() {
    keepFocus(() => this.draw());
  }

  draw() {
    const { header, frames, finished } = this.data;
    const frame = frames[this.at];
    const v = frame.view;
    const seats = header.seats.map((s) => ({ ...s, open: false }));
    const last = frames.length - 1;
    const slider = h('input', {
      type: 'range', id: 'rp-slider', min: '0', max: String(last), value: String(this.at), 'data-focus': 'rp-slider',
      'aria-label': 'Position in the game', 'aria-valuetext': `position ${this.at + 1} of ${frames.length}`,
      oninput: (e) => this.go(Number(e.target.value)),
    });
    const button = (id, label, text, run, disabled = false) => h('button', {
      type: 'button', id, 'data-focus': id, title: label, disabled, onclick: run,
    }, text);
    const page = h('div', { class: 'replay-page', id: 'replay-view', dataset: { frame: String(this.at), frames: String(frames.length), move: String(frame.move) } },
      h('section', { class: 'status-bar' },
        h('h1', {}, `Replay of ${header.game ? `game ${header.game}` : this.title}`,
          h('span', { class: 'muted' }, ` · ${header.preset}, ${header.players} players${finished ? '' : ' · unfinished log'}`)),
        h('p', { id: 'rp-pos' }, `Position ${this.at + 1} of ${frames.length} · hand ${frame.hand} · move ${frame.move}`),
        h('p', { id: 'rp-what', 'aria-live': 'polite' }, this.describe(frame, seats))),
      h('div', { class: 'replay-controls', role: 'toolbar', 'aria-label': 'Replay controls' },
        button('rp-first', 'First position (Home)', '« First', () => this.go(0), this.at === 0),
        button('rp-prev', 'Back one move (←)', '‹ Back', () => this.go(this.at - 1), this.at === 0),
        button('rp-play', this.timer ? 'Pause' : 'Play from here', this.timer ? '❚❚ Pause' : '▶ Play', () => this.play()),
        button('rp-next', 'Forward one move (→)', 'Next ›', () => this.go(this.at + 1), this.at === last),
        button('rp-last', 'Last position (End)', 'Last »', () => this.go(last), this.at === last),
        slider),
      v.phase === 'over' && v.result ? R.resultBlock(v.result, v, seats, header.rules) : null,
      (v.phase === 'deal' || v.phase === 'over') && v.last_hand ? R.scoreTable(v.last_hand, v, seats) : null,
      h('div', { class: 'board' },
        R.sidesBlock(v, seats),
        h('div', { class: 'side-panel' }, R.pileBlock(v, seats), R.seatsBlock(v, seats))),
      h('section', { class: 'all-hands', id: 'all-hands', 'aria-label': 'Every hand' },
        h('h2', {}, 'Hands'),
        h('ul', {}, frame.hands.map((cards, seat) => h('li', { 'data-seat': seat },
          h('span', { class: 'seat-name' }, `${R.seatName(seats, seat)}${v.to_act === seat ? ' ▶' : ''}: `),
          cards.length ? R.cardRow(cards, `hand of seat ${seat}`) : h('span', { class: 'muted' }, 'no cards'))))),
      h('p', {}, h('a', { href: '#' }, 'Back to the start page')));
    clear(this.root, page);
  }

  describe(frame, seats) {
    if (frame.kind === 'deal') return `Hand ${frame.hand} is dealt; ${R.seatName(seats, frame.view.dealer)} deals.`;
    return `Move ${frame.move}: ${R.describeMove(frame.event, seats, frame.view)}`;
  }
}
