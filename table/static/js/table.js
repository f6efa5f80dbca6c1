// The live table of one game, for a seat (its token in the page's URL fragment) or for a
// spectator (no token). The view comes from GET /games/{id} (the first one read after an event
// cursor, from which the stream starts); the stream says when the game changed. What a seat
// may do now is the view's `legal` summary: a button is enabled only when the summary allows
// its move, and the engine on the server judges the cards chosen.

import { clear, h, isolate, keepFocus } from './dom.js';
import { EventStream } from './events.js';
import { card, cardsText, groupHand, rankPlural } from './cards.js';
import { call, gamePath, postMove, Problem } from './http.js';
import * as R from './render.js';

const LOG_LENGTH = 60;
const BOTS = ['standard', 'greedy', 'random', 'expert'];

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
    if (this.game && body.version < this.game.version) return; // an older answer arriving late
    this.game = { ...body, rules: body.rules ?? this.game?.rules };
    this.etag = `"${body.version}"`;
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
    const text = this.describe(body);
    if (text) this.note(text);
    const move = body.data?.move;
    if (move?.hand_end) this.handResult = move.hand_end;
    if (!this.game || body.version > this.game.version) this.refresh();
    else this.renderLog();
  }

  describe(event) {
    const seats = this.game?.seats;
    const d = event.data ?? {};
    let text;
    switch (event.type) {
      case 'move': text = d.move ? R.describeMove(d.move, seats, this.view) : ''; break;
      case 'joined': text = `${d.name != null ? isolate(d.name) : 'a player'} took seat ${d.seat}.`; break;
      case 'bot': text = `Seat ${d.seat} is now played by a ${d.bot} bot.`; break;
      case 'created': text = 'The game was created.'; break;
      default: text = '';
    }
    if (d.deal) text += ` Hand ${d.deal.hand} is dealt by ${R.seatName(seats, d.deal.dealer)}.`;
    return text.trim() || null;
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
    this.busy = true;
    this.message = null;
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
    this.message = { kind: 'error', code: err.code, text: err.detail };
    this.render();
  }

  async hint() {
    try {
      const r = await call('GET', `${gamePath(this.gameId)}/hint`, { token: this.token });
      this.message = { kind: 'info', text: `Hint (a ${r.body.bot} bot would): ${R.describeAction(r.body.action)}.` };
    } catch (err) {
      if (!(err instanceof Problem)) throw err;
      this.message = { kind: 'error', code: err.code, text: err.detail };
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
    this.focusKey = key;
    this.render();
  }

  clearSelection() {
    this.selected.clear();
    this.staged = [];
    this.choosingTake = false;
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
  actions() {
    const v = this.view;
    const legal = v?.legal;
    const mine = Boolean(legal?.to_act) && this.game.status === 'playing' && !this.busy;
    const sel = this.selectedCodes();
    const groups = this.meldGroups();
    const list = [];
    const add = (id, label, shortcut, enabled, run, extra = {}) => list.push({ id, label, shortcut, enabled: Boolean(enabled), run, ...extra });
    if (!legal) return list;
    if (legal.must_answer_go_out) {
      add('yes', 'Yes, go out', 'y', mine, () => this.move({ type: 'answer_go_out', yes: true }));
      add('no', 'No, play on', 'n', mine, () => this.move({ type: 'answer_go_out', yes: false }));
    }
    add('draw', 'Draw', 'd', mine && legal.may_draw, () => this.move({ type: 'draw' }));
    add('take', this.choosingTake ? 'Take the pile ▾' : 'Take the pile…', 'p', mine && legal.may_take_pile, () => {
      this.choosingTake = !this.choosingTake;
      this.render();
    }, { expanded: this.choosingTake });
    if (legal.may_pass) add('pass', 'Pass', 's', mine, () => this.move({ type: 'pass' }));
    const plan = legal.go_out;
    if (plan?.length && v.phase === 'play') {
      const step = plan.length > 1 ? ` (step 1 of ${plan.length})` : '';
      add('goout', `Go out: ${R.describeAction(plan[0])}${step}`, 'o', mine, () => this.move(plan[0]));
    }
    add('meld', groups.length > 1 ? `Meld ${groups.length} melds` : 'Meld selected', 'm',
      mine && legal.melds.length > 0 && groups.length > 0, () => this.move({ type: 'meld', melds: groups }));
    add('group', 'Set aside as a meld', 'g', mine && (legal.melds.length > 0 || legal.may_take_pile) && sel.length > 0,
      () => this.stage());
    const target = this.addTarget(legal.add_ranks, sel);
    for (const rank of legal.add_ranks) {
      add(`add-${rank}`, `Add to the ${rankPlural(rank)}`, rank === target ? 'a' : null, mine && sel.length > 0,
        () => this.move({ type: 'add', rank, cards: sel }));
    }
    add('discard', sel.length === 1 ? `Discard ${card(sel[0]).short}` : 'Discard', 'x',
      mine && sel.length === 1 && legal.discards.includes(sel[0]), () => this.move({ type: 'discard', card: sel[0] }));
    if (legal.may_ask_go_out) add('ask', 'Ask partner: may I go out?', 'q', mine, () => this.move({ type: 'ask_go_out' }));
    add('hint', 'Hint', 'h', mine, () => this.hint());
    add('clear', 'Clear selection', null, sel.length > 0 || this.staged.length > 0, () => this.clearSelection());
    return list;
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
      this.clearSelection();
      return;
    }
    const key = event.key.length === 1 ? event.key.toLowerCase() : null;
    if (!key) return;
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
        myTurn: String(myTurn), seat: String(this.seat ?? ''),
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
      }),
      h('div', { class: 'side-panel' }, R.pileBlock(v, seats, v.team ?? null), R.seatsBlock(v, seats, this.seat), this.lastHand()))
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
      this.connectionEl());
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
      h('h2', { id: 'hand-title' }, `Your hand (${v.hand.length} card${v.hand.length === 1 ? '' : 's'})`),
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
          type: 'button', id: `act-${a.id}`, disabled: !a.enabled, 'data-focus': `act-${a.id}`,
          'data-shortcut': a.shortcut ?? undefined, 'aria-keyshortcuts': a.shortcut ? a.shortcut.toUpperCase() : undefined,
          'aria-expanded': a.expanded === undefined ? undefined : String(a.expanded),
          onclick: a.run,
        }, a.label, a.shortcut ? h('kbd', { 'aria-hidden': 'true' }, a.shortcut.toUpperCase()) : null))),
      legal?.melds?.length && mine ? h('div', { class: 'suggestions', id: 'suggestions' },
        h('span', { class: 'muted' }, 'Melds you can make now: '),
        legal.melds.slice(0, 8).map((action, i) => h('button', {
          type: 'button', class: 'suggest', id: `suggest-${i}`, 'data-focus': `suggest-${i}`,
          onclick: () => this.move(action),
        }, R.describeAction(action)))) : null,
      h('details', { class: 'keys' }, h('summary', {}, 'Keyboard'),
        h('p', {}, 'Tab to the hand, then ← → to move between cards and Space to select. D draw, P take the pile, ',
          'S pass, M meld, G set aside a meld, A add, X discard, O go out, Q ask partner, Y/N answer, H hint, Esc clear.')));
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
