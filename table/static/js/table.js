// The live table of one game, for a seat (its token in the page's URL fragment) or for a
// spectator (no token). The view comes from GET /games/{id} (the first one read after an event
// cursor, from which the stream starts); the stream says when the game changed. What a seat
// may do now is the view's `legal` summary: a button is enabled only when the summary allows
// its move, and the engine on the server judges the cards chosen.

import { clear, h, isolate, keepFocus, sleep } from './dom.js';
import { EventStream } from './events.js';
import { card, groupHand, rankPlural, symbolize } from './cards.js';
import { call, gamePath, newKey, postMove, Problem } from './http.js';
import * as R from './render.js';

const LOG_LENGTH = 60;
const BOTS = ['standard', 'greedy', 'random', 'expert'];
// The other seats' moves are shown one at a time, this long each (ms): a setting of the
// player's, kept in the browser. The API is not slowed: the table shows the views it read.
export const PACES = [['1600', 'slow'], ['800', 'normal'], ['350', 'fast'], ['0', 'at once']];
const PACE_KEY = 'canasta.pace';
// A few refusals told first in a card player's words; the server's own sentence follows.
const REASON_WORDS = {
  not_enough_canastas: 'Going out needs a canasta first: ',
  must_keep_card: 'You must keep a card to discard: ',
  opening_minimum_not_met: 'Your side\'s first meld is worth too little: ',
  must_draw_first: 'Draw first: ',
  pile_frozen: 'The pile is frozen: ',
};
const DEFAULT_PACE = 800;
const VIEW_WAIT_MS = 3000; // how long a move waits for the view read after it before it is shown anyway

function readPace() {
  try {
    const stored = localStorage.getItem(PACE_KEY);
    if (stored !== null && PACES.some(([ms]) => ms === stored)) return Number(stored);
  } catch { /* storage refused: the default */ }
  return DEFAULT_PACE;
}

export function showTable(root, { gameId, token }) {
  const table = new GameTable(root, gameId, token);
  table.start();
  return table;
}

class GameTable {
  constructor(root, gameId, token) {
    this.root = root;
    this.gameId = gameId;
    this.token = token || null;
    this.game = null; // the GameView, with the rules of the first read
    this.etag = null;
    this.selected = new Set(); // keys of selected cards ("7H#0")
    this.staged = []; // melds set aside for one move: lists of keys
    this.log = [];
    this.message = null; // {kind: 'error' | 'info', text, code}
    this.handResult = null; // the scoring table of a hand that just ended
    this.choosingTake = false;
    this.busy = false;
    this.connection = 'connecting';
    this.refreshing = null;
    this.dirty = false;
    this.latest = null; // the newest view read; this.game is the one shown
    this.views = new Map(); // version -> game: views read while the other seats' moves are shown
    this.queue = []; // events to tell (and, for the other seats' moves, to show), in order
    this.playing = false;
    this.skipping = false;
    this.skipper = null; // ends the pause after a shown move (Skip)
    this.moved = null; // what the move being shown changed: {seat, team, ranks, discard}
    this.pace = readPace();
    this.why = null; // why a move is not allowed: {id, text, code}
    this.onKey = (event) => this.keydown(event);
  }

  async start() {
    document.addEventListener('keydown', this.onKey);
    clear(this.root, h('p', { class: 'muted' }, 'Loading the game…'));
    let cursor;
    try {
      cursor = await this.loadWithCursor();
    } catch (err) {
      this.fatal(err);
      return;
    }
    this.stream = new EventStream(`${gamePath(this.gameId)}/events`, {
      token: this.token,
      lastId: cursor,
      onMessage: (message) => this.onMessage(message),
      onState: (state, detail) => this.onConnection(state, detail),
    }).start();
  }

  stop() {
    document.removeEventListener('keydown', this.onKey);
    this.stream?.stop();
  }

  get seat() {
    return this.game?.seat ?? null;
  }

  get view() {
    return this.game?.view ?? null;
  }

  // -- reading the game ------------------------------------------------------------------
  // The first read: an event cursor (the events endpoint's JSON without `after`), then the
  // view with the rules; the stream resumes from the cursor, so every change after it is
  // told. A stream started from its own snapshot skipped, in the log, what changed between
  // the read and the stream (a bot seated by a quick click, the deal it started).
  async loadWithCursor() {
    const events = await call('GET', `${gamePath(this.gameId)}/events`, { token: this.token });
    await this.load(); // no ETag held yet: the whole view, with the rules
    return events.body.last_id;
  }

  async load() {
    const headers = this.etag ? { 'If-None-Match': this.etag } : {};
    const r = await call('GET', gamePath(this.gameId), { token: this.token, headers });
    if (r.status === 304) return;
    this.accept(r.body);
  }

  accept(body) {
    if (this.latest && body.version < this.latest.version) return; // an older answer arriving late
    const game = { ...body, rules: body.rules ?? this.latest?.rules };
    this.latest = game;
    this.etag = `"${body.version}"`;
    if (this.playing && !this.skipping) {
      this.views.set(game.version, game); // shown when its move's turn comes
      return;
    }
    this.show(game);
  }

  show(game) {
    if (this.game !== game) this.why = null;
    this.game = game;
    this.prune();
    this.render();
  }

  refresh() {
    if (this.refreshing) {
      this.dirty = true;
      return;
    }
    this.refreshing = (async () => {
      do {
        this.dirty = false;
        try {
          await this.load();
        } catch (err) {
          this.problem(err);
        }
      } while (this.dirty);
      this.refreshing = null;
    })();
  }

  onMessage({ event, data }) {
    let body;
    try {
      body = JSON.parse(data);
    } catch {
      return;
    }
    // the stream itself said the game is over: what is left of it is read, then it ends
    if (body.status === 'over') this.stream?.finish();
    if (event === 'snapshot') {
      this.accept(body);
      return;
    }
    this.queue.push(body);
    if (!this.latest || body.version > this.latest.version) this.refresh();
    this.pump();
  }

  // -- the other seats' moves, one at a time ---------------------------------------------------
  // Each event is told in order. Another seat's move is also played to the screen: its sentence
  // and the cards it moved, marked on the board (the seat, the melds it changed, the discard),
  // held for the chosen pace; then the next. Skip shows the rest at once. The board is the
  // oldest view read at or after the move's version: each event makes the table read the view,
  // which keeps step with people, but bots playing several moves in a few milliseconds are
  // read at their last one.
  async pump() {
    if (this.playing) return;
    this.playing = true;
    try {
      while (this.queue.length) {
        const event = this.queue.shift();
        const paced = this.isPaced(event);
        if (paced) await this.viewRead(event.version);
        const lines = this.describe(event);
        for (const line of lines) this.note(line);
        const move = event.data?.move;
        if (move?.hand_end) this.handResult = move.hand_end;
        if (paced && !this.skipping) {
          const game = this.viewAt(event.version);
          this.moved = { ...movedBy(move, game.view), text: lines.join(' ') };
          this.show(game);
          this.skipper = new AbortController();
          await sleep(this.pace, this.skipper.signal);
          this.moved = null;
        } else {
          this.renderLog();
        }
      }
    } finally {
      this.playing = false;
      this.skipping = false;
      this.skipper = null;
      this.views.clear();
    }
    if (this.latest && this.latest !== this.game) this.show(this.latest);
    else this.render();
  }

  isPaced(event) {
    const move = event.data?.move;
    return this.pace > 0 && !this.skipping && event.type === 'move' && Boolean(move) && move.seat !== this.seat;
  }

  // Wait (a little) for the view read after ``version``.
  async viewRead(version) {
    const deadline = Date.now() + VIEW_WAIT_MS;
    while ((!this.latest || this.latest.version < version) && Date.now() < deadline && !this.skipping) {
      await sleep(30);
    }
  }

  // The oldest view read at ``version`` or after it (the newest where none is).
  viewAt(version) {
    let best = this.latest;
    for (const [v, game] of this.views) {
      if (v >= version && v < best.version) best = game;
      if (v < version) this.views.delete(v);
    }
    return best;
  }

  skip() {
    this.skipping = true;
    this.skipper?.abort();
  }

  setPace(value) {
    this.pace = Number(value);
    try {
      localStorage.setItem(PACE_KEY, String(value));
    } catch { /* not kept: this page only */ }
    if (!this.pace) this.skip();
  }

  // An event as sentences for the log.
  describe(event) {
    const seats = this.latest?.seats;
    const d = event.data ?? {};
    let lines = [];
    switch (event.type) {
      case 'move': lines = d.move ? R.describeMoveLines(d.move, seats, this.latest?.view, this.seat) : []; break;
      case 'joined': lines = [`${d.name != null ? isolate(d.name) : 'A player'} took seat ${d.seat}.`]; break;
      case 'bot': lines = [`Seat ${d.seat} is now played by a ${d.bot} bot.`]; break;
      case 'created': lines = ['The game was created.']; break;
      default: lines = [];
    }
    if (d.deal) lines.push(`Hand ${d.deal.hand} is dealt by ${R.seatName(seats, d.deal.dealer, this.seat)}.`);
    return lines;
  }

  note(text) {
    this.log.unshift(text);
    this.log.length = Math.min(this.log.length, LOG_LENGTH);
    const live = document.getElementById('announce');
    if (live) live.textContent = text;
  }

  onConnection(state, detail) {
    this.connection = state;
    if (state === 'failed') this.message = { kind: 'error', text: detail, code: 'events_refused' };
    const el = document.getElementById('conn');
    if (el) el.replaceWith(this.connectionEl());
    if (state === 'failed') this.render();
  }

  // -- moves --------------------------------------------------------------------------------
  async move(action) {
    if (this.busy) return;
    if (this.playing) this.skip(); // the table shows the newest position before a move is made
    this.busy = true;
    this.message = null;
    this.why = null;
    this.render();
    try {
      const r = await postMove(this.gameId, this.token, this.etag, action);
      this.selected.clear();
      this.staged = [];
      this.choosingTake = false;
      this.busy = false;
      this.accept(r.body);
    } catch (err) {
      this.busy = false;
      if (err instanceof Problem && err.status === 412) {
        this.message = { kind: 'error', code: err.code, text: 'The game moved on before your move arrived; the table is up to date again, try once more.' };
        await this.load().catch(() => {});
      } else {
        this.problem(err);
      }
    }
    this.render();
  }

  problem(err) {
    if (!(err instanceof Problem)) throw err;
    this.message = { kind: 'error', code: err.code, text: symbolize(err.detail) };
    this.render();
  }

  async hint() {
    try {
      const r = await call('GET', `${gamePath(this.gameId)}/hint`, { token: this.token });
      this.message = { kind: 'info', text: `Hint (a ${r.body.bot} bot would): ${R.describeAction(r.body.action)}.` };
    } catch (err) {
      if (!(err instanceof Problem)) throw err;
      this.message = { kind: 'error', code: err.code, text: symbolize(err.detail) };
    }
    this.render();
  }

  async seatBot(seat, bot) {
    try {
      const r = await call('POST', `${gamePath(this.gameId)}/seats/${seat}/bot`, { token: this.token, json: { bot } });
      this.accept(r.body);
    } catch (err) {
      this.problem(err);
    }
  }

  // -- the hand and the selection --------------------------------------------------------------
  handGroups() {
    return groupHand(this.view?.hand ?? []);
  }

  prune() {
    const keys = new Set(this.handGroups().flatMap((g) => g.cards.map((c) => c.key)));
    for (const key of [...this.selected]) if (!keys.has(key)) this.selected.delete(key);
    this.staged = this.staged.filter((group) => group.every((key) => keys.has(key)));
  }

  codeOf(key) {
    return key.split('#')[0];
  }

  selectedCodes() {
    return [...this.selected].map((k) => this.codeOf(k));
  }

  stagedMelds() {
    return this.staged.map((group) => group.map((k) => this.codeOf(k)));
  }

  toggle(key) {
    if (this.selected.has(key)) this.selected.delete(key);
    else this.selected.add(key);
    this.why = null;
    this.focusKey = key;
    this.render();
  }

  // Clears the cards chosen; the take-the-pile chooser stays open (Esc with nothing selected,
  // or its own button, closes it).
  clearSelection() {
    this.selected.clear();
    this.staged = [];
    this.why = null;
    this.render();
  }

  stage() {
    if (!this.selected.size) return;
    this.staged.push([...this.selected]);
    this.selected.clear();
    this.render();
  }

  // The melds of one move: those set aside, then the selection.
  meldGroups() {
    const sel = this.selectedCodes();
    return [...this.stagedMelds(), ...(sel.length ? [sel] : [])];
  }

  // -- what may be done now -------------------------------------------------------------------
  // Every move button, enabled when the legal summary allows its move. A move not allowed stays
  // reachable (aria-disabled) and says why when pressed: from the view (whose turn it is), or
  // from the server, which judges the move the selection makes in a dry run.
  actions() {
    const v = this.view;
    const legal = v?.legal;
    const mine = Boolean(legal?.to_act) && this.game.status === 'playing' && !this.busy;
    const sel = this.selectedCodes();
    const groups = this.meldGroups();
    const list = [];
    const add = (id, label, shortcut, enabled, run, extra = {}) => list.push({ id, label, shortcut, enabled: Boolean(enabled), run, ...extra });
    if (!legal) return list;
    const play = v.phase === 'play';
    if (legal.must_answer_go_out) {
      add('yes', 'Yes, go out', 'y', mine, () => this.move({ type: 'answer_go_out', yes: true }));
      add('no', 'No, play on', 'n', mine, () => this.move({ type: 'answer_go_out', yes: false }));
    }
    add('draw', 'Draw', 'd', mine && legal.may_draw, () => this.move({ type: 'draw' }), { probe: () => ({ type: 'draw' }) });
    add('take', this.choosingTake ? 'Take the pile ▾' : 'Take the pile…', 'p', mine && legal.may_take_pile, () => {
      this.choosingTake = !this.choosingTake;
      this.render();
    }, { expanded: this.choosingTake, probe: () => this.takeProbe(sel) });
    if (legal.may_pass) add('pass', 'Pass', 's', mine, () => this.move({ type: 'pass' }));
    const plan = legal.go_out;
    if (plan?.length && play) {
      const step = plan.length > 1 ? ` (step 1 of ${plan.length})` : '';
      add('goout', `Go out: ${R.describeAction(plan[0])}${step}`, 'o', mine, () => this.move(plan[0]));
    }
    const meldProbe = () => (groups.length ? { type: 'meld', melds: groups } : null);
    add('meld', groups.length > 1 ? `Meld ${groups.length} melds` : 'Meld selected', 'm',
      mine && legal.melds.length > 0 && groups.length > 0, () => this.move({ type: 'meld', melds: groups }),
      { probe: meldProbe, select: 'Select the cards of a meld first (click them in your hand).' });
    add('group', 'Set aside as a meld', 'g', mine && (legal.melds.length > 0 || legal.may_take_pile) && sel.length > 0,
      () => this.stage(), { probe: () => (sel.length ? { type: 'meld', melds: [sel] } : null), select: 'Select the cards of a meld first (click them in your hand).' });
    // a button for every meld of the side (and any the summary lists): Add names each
    const ranks = [...new Set([...(v.melds?.[v.team] ?? []).map((m) => m.rank), ...legal.add_ranks])].filter((r) => r !== '3');
    const target = this.addTarget(ranks, sel);
    for (const rank of ranks) {
      add(`add-${rank}`, `Add to the ${rankPlural(rank)}`, rank === target ? 'a' : null,
        mine && sel.length > 0 && legal.add_ranks.includes(rank), () => this.move({ type: 'add', rank, cards: sel }),
        { probe: () => (sel.length ? { type: 'add', rank, cards: sel } : null), select: 'Select the cards to add first (click them in your hand).' });
    }
    add('discard', sel.length === 1 ? `Discard ${card(sel[0]).short}` : 'Discard', 'x',
      mine && sel.length === 1 && legal.discards.includes(sel[0]), () => this.move({ type: 'discard', card: sel[0] }),
      { probe: () => (sel.length === 1 ? { type: 'discard', card: sel[0] } : null),
        select: sel.length > 1 ? 'Select one card only: a discard is one card.' : 'Select the card to discard first (click it in your hand).' });
    if (legal.may_ask_go_out) add('ask', 'Ask partner: may I go out?', 'q', mine, () => this.move({ type: 'ask_go_out' }));
    add('hint', 'Hint', 'h', mine, () => this.hint());
    add('clear', 'Clear selection', null, sel.length > 0 || this.staged.length > 0, () => this.clearSelection(),
      { reason: 'No card is selected.' });
    return list;
  }

  // The take to ask the server about: with the cards selected, else with the hand's cards of
  // the top card's rank, else onto the side's meld of that rank, else with any card (the
  // server then says what stops a take).
  takeProbe(sel) {
    const v = this.view;
    const top = v.pile?.top;
    if (sel.length) return { type: 'take_pile', with: sel };
    if (!top) return { type: 'take_pile', with: v.hand.slice(0, 2) };
    const same = v.hand.filter((c) => c[0] === top[0]);
    if (same.length) return { type: 'take_pile', with: same.slice(0, 2) };
    if ((v.melds?.[v.team] ?? []).some((m) => m.rank === top[0])) return { type: 'take_pile', onto: top[0] };
    return { type: 'take_pile', with: v.hand.slice(0, 1) };
  }

  // Why a move is not allowed now, shown under the buttons (and read out).
  async explain(a) {
    const g = this.game;
    const v = this.view;
    let why = null;
    if (g.status !== 'playing') why = { text: g.status === 'waiting' ? 'The game has not started: seats are still open.' : 'The game is over.' };
    else if (this.busy) why = { text: 'Your last move is still on its way.' };
    else if (!v.legal?.to_act) why = { text: `It is not your turn. ${this.turnText()}` };
    else if (a.reason) why = { text: a.reason };
    else if (a.probe) {
      const action = a.probe();
      if (!action) why = { text: a.select ?? 'Select cards first.' };
      else why = await this.dryRun(action);
    }
    if (!why) why = { text: 'This move is not offered now.' };
    this.why = { id: a.id, ...why };
    this.render();
    const live = document.getElementById('announce');
    if (live) live.textContent = this.why.text;
  }

  // The server's judgement of ``action`` (dry_run: nothing changes): its reason in words, with
  // cards as symbols; a move it accepts (one the summary does not list) is made.
  async dryRun(action) {
    try {
      await call('POST', `${gamePath(this.gameId)}/moves?dry_run=true`, {
        token: this.token, json: { action }, headers: { 'If-Match': this.etag, 'Idempotency-Key': newKey() },
      });
    } catch (err) {
      if (!(err instanceof Problem)) throw err;
      const words = symbolize(err.detail);
      const text = REASON_WORDS[err.code] ? `${REASON_WORDS[err.code]}${words}` : R.capital(words);
      return { text: /[.?!]$/.test(text) ? text : `${text}.`, code: err.code };
    }
    this.move(action);
    return null;
  }

  // Which meld the A key adds to: the rank of the selected naturals, or the only choice.
  addTarget(ranks, sel) {
    const rank = sel.map((c) => c[0]).find((r) => ranks.includes(r));
    return rank ?? (ranks.length === 1 ? ranks[0] : null);
  }

  keydown(event) {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.target.closest?.('input, textarea, select, [contenteditable]')) return;
    if (event.key === 'Escape') {
      if (!this.selected.size && !this.staged.length && this.choosingTake) {
        this.choosingTake = false;
        this.render();
      } else {
        this.clearSelection();
      }
      return;
    }
    const key = event.key.length === 1 ? event.key.toLowerCase() : null;
    if (!key) return;
    // a move not allowed is pressed too: it says why
    const button = this.root.querySelector(`[data-shortcut="${CSS.escape(key)}"]`);
    if (button && !button.disabled) {
      event.preventDefault();
      button.click();
    }
  }

  // -- drawing the table --------------------------------------------------------------------
  fatal(err) {
    if (!(err instanceof Problem)) throw err;
    clear(this.root, h('section', { class: 'fatal', role: 'alert' },
      h('h1', {}, 'This game cannot be shown'),
      h('p', {}, err.detail, ' ', h('code', {}, err.code)),
      h('p', {}, h('a', { href: '#' }, 'Back to the start page'))));
  }

  render() {
    if (!this.game) return;
    keepFocus(() => this.draw(), '#hand button.card[tabindex="0"]');
  }

  draw() {
    const g = this.game;
    const v = g.view;
    const seats = g.seats;
    const myTurn = Boolean(v?.legal?.to_act) && g.status === 'playing';
    document.title = `${myTurn ? 'Your turn — ' : ''}Canasta ${g.id}`;
    const page = h('div', {
      class: 'table-page', id: 'table',
      dataset: {
        version: String(g.version), status: g.status, phase: v?.phase ?? '', toAct: String(v?.to_act ?? ''),
        myTurn: String(myTurn), seat: String(this.seat ?? ''), playing: String(Boolean(this.moved)),
      },
    },
    this.header(),
    h('div', { id: 'message', role: 'alert', class: ['message', this.message?.kind] },
      this.message ? [this.message.text, this.message.code ? h('code', {}, ` ${this.message.code}`) : null] : null),
    this.banner(),
    v ? h('div', { class: 'board' },
      R.sidesBlock(v, seats, {
        myTeam: v.team ?? null, mySeat: this.seat,
        addable: myTurn && this.selected.size ? v.legal.add_ranks : [],
        onMeld: (rank) => this.move({ type: 'add', rank, cards: this.selectedCodes() }),
        moved: this.moved,
      }),
      h('div', { class: 'side-panel' }, R.pileBlock(v, seats, v.team ?? null, this.seat, Boolean(this.moved?.discard)),
        R.seatsBlock(v, seats, this.seat, this.moved?.seat ?? null), this.lastHand()))
      : h('div', { class: 'board' }, R.seatsBlock(null, seats, this.seat)),
    this.seat !== null && v ? this.handArea() : this.spectatorNote(),
    this.logArea());
    clear(this.root, page);
  }

  header() {
    const g = this.game;
    const v = g.view;
    return h('section', { class: 'status-bar' },
      h('h1', {}, `Game ${g.id}`, h('span', { class: 'muted' }, ` · ${g.preset}, ${g.players} players${v ? ` · hand ${v.hand_no}` : ''}`)),
      h('p', { id: 'turn' }, this.turnText()),
      h('p', { class: 'muted' },
        this.seat !== null ? `You are ${R.seatName(g.seats, this.seat)}, team ${v?.team ?? g.seats[this.seat]?.team}. ` : 'Watching as a spectator. ',
        g.rules ? `Target ${g.rules.target_score}. ` : '',
        v?.legal?.opening_minimum ? `Your side's first meld needs ${v.legal.opening_minimum} points.` : ''),
      this.connectionEl(),
      this.paceControl(),
      this.moved ? h('p', { id: 'now-playing', class: 'now-playing' },
        h('span', {}, '▶ ', this.moved.text), this.moved.cards.length ? R.cardRow(this.moved.cards, 'the cards played') : null, ' ',
        h('button', { type: 'button', id: 'skip', 'data-focus': 'skip', onclick: () => this.skip() }, 'Skip »')) : null);
  }

  // How fast the other seats' moves are shown.
  paceControl() {
    const select = h('select', { id: 'pace', 'data-focus': 'pace', onchange: (e) => this.setPace(e.target.value) },
      PACES.map(([ms, label]) => h('option', { value: ms, selected: Number(ms) === this.pace }, label)));
    return h('p', { class: 'pace' }, h('label', { for: 'pace' }, 'Other players\' moves: '), select);
  }

  connectionEl() {
    const words = {
      connecting: '○ connecting…', live: '● live', reconnecting: '◌ reconnecting…', ended: '■ stream closed (game over)',
      failed: '✕ no live updates',
    };
    return h('p', { id: 'conn', role: 'status', class: ['conn', this.connection] }, words[this.connection] ?? this.connection);
  }

  turnText() {
    const g = this.game;
    const v = g.view;
    if (g.status === 'waiting') return 'Waiting for players to take the open seats.';
    if (g.status === 'over' || !v) return 'The game is over.';
    if (v.phase === 'deal') return 'The next hand is being dealt.';
    const who = R.seatName(g.seats, v.to_act);
    if (v.legal?.to_act) {
      if (v.phase === 'answer') return `Your turn: ${R.seatName(g.seats, v.turn)} asks you: may they go out?`;
      if (v.phase === 'draw') return 'Your turn: draw from the stock or take the pile.';
      return v.legal.must_go_out ? 'Your turn: your partner said yes, so you must go out.' : 'Your turn: meld or add if you like, then discard.';
    }
    const doing = { draw: 'to draw', play: 'to meld and discard', answer: `to answer ${R.seatName(g.seats, v.turn)}` }[v.phase] ?? '';
    return `Waiting for ${who} ${doing}.`;
  }

  banner() {
    const g = this.game;
    const v = g.view;
    if (g.status === 'waiting') return this.waitingBanner();
    if (g.status === 'over' && v?.result) {
      return h('div', { class: 'banner' }, R.resultBlock(v.result, v, g.seats, g.rules),
        v.last_hand ? R.scoreTable(v.last_hand, v, g.seats, this.seat) : null,
        h('p', {}, h('a', { href: `#replay=${encodeURIComponent(g.id)}`, id: 'replay-link' }, 'Replay this game move by move'),
          ' · ', h('a', { href: '#' }, 'Start a new game')));
    }
    if (this.handResult && v) {
      return h('section', { class: 'banner', id: 'hand-result', 'aria-label': 'The hand is over' },
        h('h2', {}, `Hand ${this.handResult.hand_end} is over`),
        R.scoreTable(this.handResult, v, g.seats, this.seat),
        h('button', { type: 'button', id: 'hand-result-close', 'data-focus': 'hand-result-close', onclick: () => {
          this.handResult = null;
          this.render();
        } }, 'Continue'));
    }
    return null;
  }

  waitingBanner() {
    const g = this.game;
    const open = g.seats.filter((s) => s.open);
    return h('section', { class: 'banner', id: 'waiting' },
      h('h2', {}, 'Waiting for players'),
      h('p', {}, 'The first hand is dealt when every seat is taken. Send a friend the link of an open seat:'),
      h('ul', { class: 'links' }, open.map((s) => h('li', {},
        h('span', {}, `Seat ${s.seat} (team ${s.team}): `),
        linkField(joinLink(g.id, s.seat), `Link to join seat ${s.seat}`),
        this.token ? botPicker(s.seat, (bot) => this.seatBot(s.seat, bot)) : null))));
  }

  lastHand() {
    const v = this.view;
    if (!v?.last_hand || this.game.status === 'over') return null;
    return h('details', { class: 'last-hand', id: 'last-hand' },
      h('summary', {}, `Scores of hand ${v.last_hand.hand_end}`),
      R.scoreTable(v.last_hand, v, this.game.seats, this.seat));
  }

  spectatorNote() {
    if (this.seat !== null) return null;
    return h('p', { class: 'spectator muted', id: 'spectator-note' },
      'Spectators see the table and how many cards each player holds, never a hand.');
  }

  handArea() {
    const v = this.view;
    const groups = this.handGroups();
    const stagedKeys = new Set(this.staged.flat());
    const cards = groups.flatMap((g) => g.cards).filter((c) => !stagedKeys.has(c.key));
    const focusKey = cards.some((c) => c.key === this.focusKey) ? this.focusKey : cards[0]?.key;
    const actions = this.actions();
    const legal = v.legal;
    const mine = Boolean(legal?.to_act) && this.game.status === 'playing' && !this.busy;
    return h('section', { class: 'my-area', id: 'my-area', 'aria-labelledby': 'hand-title' },
      h('h2', { id: 'hand-title' }, `Your hand (${v.hand.length} card${v.hand.length === 1 ? '' : 's'}`,
        v.hand_points !== undefined ? h('span', { class: 'muted', id: 'hand-points' }, `, ${v.hand_points} points`) : null, ')'),
      this.staged.length ? h('div', { class: 'staged', id: 'staged' }, 'Set aside to meld: ',
        this.stagedMelds().map((m, i) => h('span', { class: 'staged-meld' }, R.cardRow(m, `meld ${i + 1}`),
          h('button', { type: 'button', class: 'link', 'aria-label': `Put meld ${i + 1} back`, onclick: () => {
            this.staged.splice(i, 1);
            this.render();
          } }, '✕')))) : null,
      h('div', { class: 'hand', id: 'hand', role: 'group', 'aria-label': 'Your hand: arrow keys move, space selects',
        onkeydown: (e) => this.handKeys(e) },
      groups.map((g) => {
        const shown = g.cards.filter((c) => !stagedKeys.has(c.key));
        if (!shown.length) return null;
        return h('span', { class: 'rank-group', role: 'group', 'aria-label': g.rank === 'JK' ? 'jokers' : rankPlural(g.rank) },
          shown.map((c) => this.cardButton(c, c.key === focusKey)));
      })),
      this.choosingTake && legal?.may_take_pile ? this.takeChooser(mine) : null,
      h('div', { class: 'actions', id: 'actions', role: 'toolbar', 'aria-label': 'Moves' },
        actions.map((a) => h('button', {
          type: 'button', id: `act-${a.id}`, class: a.enabled ? null : 'off', 'aria-disabled': a.enabled ? undefined : 'true',
          'data-focus': `act-${a.id}`, title: a.enabled ? undefined : 'Not allowed now: press to see why',
          'data-shortcut': a.shortcut ?? undefined, 'aria-keyshortcuts': a.shortcut ? a.shortcut.toUpperCase() : undefined,
          'aria-expanded': a.expanded === undefined ? undefined : String(a.expanded),
          'aria-describedby': this.why?.id === a.id ? 'why' : undefined,
          onclick: a.enabled ? a.run : () => this.explain(a),
        }, a.label, a.shortcut ? h('kbd', { 'aria-hidden': 'true' }, a.shortcut.toUpperCase()) : null))),
      this.why ? h('p', { id: 'why', class: 'why', 'data-for': this.why.id, 'data-code': this.why.code ?? '' },
        h('span', { 'aria-hidden': 'true' }, 'ⓘ '), this.why.text) : null,
      legal?.melds?.length && mine ? h('div', { class: 'suggestions', id: 'suggestions' },
        h('span', { class: 'muted' }, 'Melds you can make now: '),
        legal.melds.slice(0, 8).map((action, i) => h('button', {
          type: 'button', class: 'suggest', id: `suggest-${i}`, 'data-focus': `suggest-${i}`,
          onclick: () => this.move(action),
        }, R.describeAction(action)))) : null,
      h('details', { class: 'keys' }, h('summary', {}, 'Keyboard'),
        h('p', {}, 'Tab to the hand, then ← → to move between cards and Space to select. D draw, P take the pile, ',
          'S pass, M meld, G set aside a meld, A add, X discard, O go out, Q ask partner, Y/N answer, H hint, Esc clear. ',
          'A move that is not allowed now says why when you press it.')));
  }

  cardButton(c, focusable) {
    const info = card(c.code);
    const selected = this.selected.has(c.key);
    return h('button', {
      type: 'button', class: ['card', info.red && 'red', c.code === 'JK' && 'joker', selected && 'selected'],
      'aria-pressed': String(selected), 'aria-label': info.name, title: info.name,
      'data-code': c.code, 'data-key': c.key, 'data-focus': `card-${c.key}`, tabindex: focusable ? '0' : '-1',
      onclick: () => this.toggle(c.key),
    },
    h('span', { class: 'rank', 'aria-hidden': 'true' }, c.code === 'JK' ? 'Jkr' : info.short.slice(0, -1)),
    h('span', { class: 'suit', 'aria-hidden': 'true' }, info.symbol),
    selected ? h('span', { class: 'tick', 'aria-hidden': 'true' }, '✓') : null);
  }

  handKeys(event) {
    const moves = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 };
    if (!(event.key in moves) && event.key !== 'Home' && event.key !== 'End') return;
    const buttons = [...this.root.querySelectorAll('#hand button.card')];
    const at = buttons.indexOf(document.activeElement);
    if (at < 0) return;
    event.preventDefault();
    let next = event.key === 'Home' ? 0 : event.key === 'End' ? buttons.length - 1 : at + moves[event.key];
    next = Math.max(0, Math.min(buttons.length - 1, next));
    buttons[at].tabIndex = -1;
    buttons[next].tabIndex = 0;
    buttons[next].focus();
    this.focusKey = buttons[next].dataset.key;
  }

  takeChooser(mine) {
    const legal = this.view.legal;
    const sel = this.selectedCodes();
    const options = legal.take_pile.map((action, i) => h('li', {}, h('button', {
      type: 'button', id: `take-${i}`, class: 'take-option', 'data-focus': `take-${i}`, disabled: !mine,
      onclick: () => this.move(action),
    }, R.describeAction(action))));
    if (sel.length) {
      const action = { type: 'take_pile', with: sel };
      const melds = this.stagedMelds();
      if (melds.length) action.melds = melds;
      options.push(h('li', {}, h('button', {
        type: 'button', id: 'take-selected', class: 'take-option', 'data-focus': 'take-selected', disabled: !mine,
        onclick: () => this.move(action),
      }, `${R.describeAction(action)} (your choice)`)));
    }
    return h('div', { class: 'take-chooser', id: 'take-chooser', role: 'group', 'aria-label': 'How to take the pile' },
      h('p', {}, 'Take the pile: choose the cards it is taken with (or select cards in your hand, and set aside the melds that go with it).'),
      h('ul', {}, options));
  }

  logArea() {
    return h('section', { class: 'events', id: 'events', 'aria-labelledby': 'events-title' },
      h('h2', { id: 'events-title' }, 'What happened'),
      this.logList());
  }

  logList() {
    return this.log.length
      ? h('ol', { id: 'event-log', class: 'event-log', reversed: true }, this.log.map((line) => h('li', {}, line)))
      : h('p', { id: 'event-log', class: 'muted' }, 'Moves appear here as they are made.');
  }

  renderLog() {
    document.getElementById('event-log')?.replaceWith(this.logList());
  }
}

export function joinLink(gameId, seat) {
  return `${location.origin}${location.pathname}#game=${encodeURIComponent(gameId)}&join=${seat}`;
}

export function seatLink(gameId, seat, token) {
  return `${location.origin}${location.pathname}#game=${encodeURIComponent(gameId)}&seat=${seat}&token=${encodeURIComponent(token)}`;
}

// A link in a read-only field with a copy button (the clipboard needs a secure context:
// elsewhere the text is selected for the player to copy).
export function linkField(url, label) {
  const input = h('input', { type: 'text', readonly: true, value: url, 'aria-label': label, class: 'link-field' });
  const copy = h('button', { type: 'button', class: 'copy', onclick: async () => {
    input.select();
    try {
      await navigator.clipboard.writeText(url);
      copy.textContent = 'Copied';
    } catch {
      copy.textContent = 'Press Ctrl+C';
    }
  } }, 'Copy');
  return h('span', { class: 'link-box' }, input, copy);
}

function botPicker(seat, choose) {
  const select = h('select', { 'aria-label': `Bot strength for seat ${seat}` }, BOTS.map((b) => h('option', { value: b }, b)));
  return h('span', { class: 'bot-picker' }, ' or ', select,
    h('button', { type: 'button', onclick: () => choose(select.value) }, `Let a bot play seat ${seat}`));
}

// What a move changed on the table, to mark it: the seat, its side's melds of the ranks it
// melded or added to, and the pile's top card when it discarded.
function movedBy(move, view) {
  if (!move) return null;
  const a = move.action ?? {};
  const team = (view?.teams ?? []).findIndex((members) => members.includes(move.seat));
  const ranks = new Set();
  const rankOf = (cards) => cards.find((c) => c !== 'JK' && c[0] !== '2')?.[0];
  if (a.type === 'add') ranks.add(a.rank);
  for (const group of a.melds ?? []) ranks.add(rankOf(group));
  if (a.type === 'take_pile') ranks.add(a.onto ?? rankOf(a.with ?? []));
  ranks.delete(undefined);
  const cards = [...(a.card ? [a.card] : []), ...(a.cards ?? []), ...(a.with ?? []), ...(a.melds ?? []).flat()];
  return { seat: move.seat, team, ranks: [...ranks], cards, discard: a.type === 'discard' && !move.beside_pile };
}
