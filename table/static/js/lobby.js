// The start page: create a game (preset, players, who sits where, house rules), get a link
// per seat; join an open seat; watch or replay a game by its id; replay a log file.

import { clear, h, isolate } from './dom.js';
import { call, gamePath, postJoin, Problem } from './http.js';
import { joinLink, linkField, seatLink } from './table.js';
import { showReplayFile } from './replay.js';

const SEAT_KINDS = [
  ['bot:standard', 'Bot: standard'],
  ['bot:greedy', 'Bot: greedy (weaker)'],
  ['bot:expert', 'Bot: expert'],
  ['bot:random', 'Bot: random'],
  ['open', 'A friend (open seat, joins with a link)'],
  ['named', 'A friend, named here (gets a private link)'],
];

export function showLobby(root) {
  const lobby = new Lobby(root);
  lobby.start();
  return lobby;
}

class Lobby {
  constructor(root) {
    this.root = root;
    this.presets = [];
    this.stopped = false;
  }

  stop() {
    this.stopped = true;
  }

  async start() {
    document.title = 'Canasta';
    clear(this.root, h('p', { class: 'muted' }, 'Loading the rule presets…'));
    try {
      this.presets = (await call('GET', '/rules')).body.presets;
    } catch (err) {
      if (!(err instanceof Problem)) throw err;
      clear(this.root, h('p', { role: 'alert' }, `The server cannot list its presets: ${err.detail}`));
      return;
    }
    if (this.stopped) return;
    this.draw();
  }

  draw() {
    this.error = h('div', { id: 'create-error', role: 'alert', class: 'message error' });
    this.preset = h('select', { id: 'preset', name: 'preset', onchange: () => this.presetChanged() },
      this.presets.map((p) => h('option', { value: p.name }, `${p.name} — ${p.description}`)));
    this.players = h('select', { id: 'players', name: 'players', onchange: () => this.drawSeats() });
    this.seats = h('ol', { class: 'seat-specs', id: 'seat-specs' });
    this.name = h('input', { id: 'my-name', name: 'name', required: true, maxlength: '40', autocomplete: 'nickname', value: 'me' });
    this.target = h('input', { id: 'target-score', name: 'target_score', type: 'number', min: '1', max: '50000', step: '1', inputmode: 'numeric' });
    this.houseRules = h('textarea', { id: 'house-rules', name: 'rules', rows: '3', spellcheck: 'false',
      placeholder: 'one option per line, e.g.\nmax_wilds = 2\nred_three_bonus = 150' });
    this.result = h('section', { id: 'created', class: 'created', 'aria-live': 'polite' });
    this.optionsLink = h('a', { target: '_blank', rel: 'noopener' }, 'this preset\'s options');
    const form = h('form', { id: 'create-form', class: 'create', onsubmit: (e) => {
      e.preventDefault();
      this.create();
    } },
    h('h2', {}, 'Start a game'),
    h('p', { class: 'field' }, h('label', { for: 'my-name' }, 'Your name'), this.name),
    h('p', { class: 'field' }, h('label', { for: 'preset' }, 'Rules'), this.preset),
    h('p', { class: 'field' }, h('label', { for: 'players' }, 'Players'), this.players),
    h('fieldset', {}, h('legend', {}, 'Seats (you play seat 0)'), this.seats),
    h('details', { class: 'advanced', id: 'advanced' }, h('summary', {}, 'House rules'),
      h('p', { class: 'field' }, h('label', { for: 'target-score' }, 'Target score (the game ends when a side reaches it)'), this.target),
      h('p', { class: 'field' }, h('label', { for: 'house-rules' }, 'More options (name = value; ',
        this.optionsLink, ')'), this.houseRules)),
    this.error,
    h('p', {}, h('button', { type: 'submit', id: 'create', class: 'primary' }, 'Start the game')));
    const watch = h('input', { id: 'watch-id', name: 'game', pattern: '[A-Za-z0-9_-]{12}', required: true, placeholder: 'game id',
      'aria-label': 'Game id' });
    const file = h('input', { id: 'log-file', type: 'file', accept: '.jsonl,.ndjson,application/x-ndjson,application/jsonl' });
    clear(this.root,
      h('section', { class: 'intro' }, h('h1', {}, 'Canasta'),
        h('p', {}, 'Play against bots or friends in the browser. Every rule is the server\'s: the table only shows what your seat may do.')),
      form,
      this.result,
      h('section', { class: 'other' },
        h('h2', {}, 'Watch or replay'),
        h('form', { id: 'watch-form', onsubmit: (e) => {
          e.preventDefault();
          const id = watch.value.trim();
          const replay = e.submitter?.value === 'replay';
          location.hash = replay ? `replay=${encodeURIComponent(id)}` : `game=${encodeURIComponent(id)}`;
        } }, watch, ' ', h('button', { type: 'submit', value: 'watch', id: 'watch' }, 'Watch'), ' ',
        h('button', { type: 'submit', value: 'replay', id: 'replay' }, 'Replay a finished game')),
        h('p', { class: 'field' }, h('label', { for: 'log-file' }, 'Replay a game log file (.jsonl): '), file,
          h('button', { type: 'button', id: 'replay-file', onclick: () => {
            if (file.files?.[0]) showReplayFile(this.root, file.files[0]);
          } }, 'Replay the file'))));
    this.presetChanged();
  }

  presetChanged() {
    const p = this.presets.find((x) => x.name === this.preset.value) ?? this.presets[0];
    clear(this.players, p.players.map((n) => h('option', { value: String(n), selected: n === p.default_players }, String(n))));
    this.players.value = String(p.default_players);
    this.optionsLink.href = `/rules/${encodeURIComponent(p.name)}`;
    this.drawSeats();
  }

  drawSeats() {
    const n = Number(this.players.value);
    const old = [...this.seats.querySelectorAll('select')].map((s) => s.value);
    const items = [h('li', { class: 'seat-spec' }, h('span', { class: 'seat-label' }, 'Seat 0'), h('span', {}, 'you'))];
    for (let seat = 1; seat < n; seat++) {
      const kind = h('select', { id: `seat-${seat}`, 'aria-label': `Who plays seat ${seat}`, 'data-seat': seat },
        SEAT_KINDS.map(([value, label]) => h('option', { value }, label)));
      kind.value = old[seat - 1] ?? 'bot:standard';
      const friend = h('input', { id: `seat-${seat}-name`, maxlength: '40', placeholder: 'friend\'s name',
        'aria-label': `Name of the friend in seat ${seat}`, hidden: kind.value !== 'named' });
      kind.addEventListener('change', () => { friend.hidden = kind.value !== 'named'; });
      items.push(h('li', { class: 'seat-spec' }, h('label', { for: `seat-${seat}` }, `Seat ${seat}`), kind, friend));
    }
    clear(this.seats, items);
  }

  body() {
    const seats = [{ name: this.name.value.trim() }];
    for (const select of this.seats.querySelectorAll('select')) {
      const seat = Number(select.dataset.seat);
      if (select.value.startsWith('bot:')) seats.push({ bot: select.value.slice(4) });
      else if (select.value === 'open') seats.push(null);
      else seats.push({ name: document.getElementById(`seat-${seat}-name`).value.trim() || `friend ${seat}` });
    }
    const body = { preset: this.preset.value, players: Number(this.players.value), seats };
    const rules = parseRules(this.houseRules.value);
    if (this.target.value.trim()) rules.target_score = Number(this.target.value);
    if (Object.keys(rules).length) body.rules = rules;
    return body;
  }

  async create() {
    clear(this.error);
    let body;
    try {
      body = this.body();
    } catch (err) {
      clear(this.error, err.message);
      return;
    }
    try {
      const r = await call('POST', '/games', { json: body });
      this.showCreated(r.body);
    } catch (err) {
      if (!(err instanceof Problem)) throw err;
      const fields = err.body?.errors ? ` ${JSON.stringify(err.body.errors)}` : '';
      clear(this.error, `${err.detail}${fields} `, h('code', {}, err.shownCode));
    }
  }

  showCreated(game) {
    const mine = game.seats[0];
    // nobody else to send a link to (every other seat a bot): straight to the table
    if (mine?.token && game.seats.every((s) => s.seat === 0 || (!s.open && !s.token))) {
      location.hash = seatLink(game.id, 0, mine.token).split('#')[1];
      return;
    }
    const rows = game.seats.map((s) => {
      let what;
      if (s.token && s.seat === 0) what = h('a', { href: seatLink(game.id, s.seat, s.token), id: 'play-link', class: 'primary' }, 'Play your seat');
      else if (s.token) what = linkField(seatLink(game.id, s.seat, s.token), `Private link of ${isolate(s.name)}, seat ${s.seat}`);
      else if (s.open) what = linkField(joinLink(game.id, s.seat), `Link to join seat ${s.seat}`);
      else what = h('span', {}, `${s.bot} bot`);
      return h('li', { 'data-seat': s.seat }, h('span', {}, `Seat ${s.seat} · team ${s.team} · ${s.name != null ? isolate(s.name) : (s.bot ? 'bot' : 'open')}: `), what);
    });
    const watch = `${location.origin}${location.pathname}#game=${encodeURIComponent(game.id)}`;
    clear(this.result,
      h('h2', {}, `Game ${game.id} is ready`),
      h('p', {}, 'Each link below is the only key to its seat: the token is in the part after #, which browsers never send to a server. Keep yours; send your friends theirs.'),
      h('ul', { class: 'links', id: 'seat-links' }, rows),
      h('p', {}, 'Spectators: ', linkField(watch, 'Link to watch the game')),
      mine?.token ? null : h('p', { role: 'alert' }, 'Seat 0 has no token.'));
    this.result.scrollIntoView({ block: 'nearest' });
    document.getElementById('play-link')?.focus();
  }
}

// "name = value" lines; values are JSON where they parse (numbers, true, null), else text.
export function parseRules(text) {
  const rules = {};
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (!line || line.startsWith('#')) return;
    const at = line.indexOf('=');
    if (at < 1) throw new Error(`House rules, line ${i + 1}: write name = value.`);
    const name = line.slice(0, at).trim();
    const value = line.slice(at + 1).trim();
    try {
      rules[name] = JSON.parse(value);
    } catch {
      rules[name] = value;
    }
  });
  return rules;
}

export function showJoin(root, gameId, seat) {
  const view = { stop() {} };
  (async () => {
    clear(root, h('p', { class: 'muted' }, 'Loading the game…'));
    let game;
    try {
      game = (await call('GET', gamePath(gameId))).body;
    } catch (err) {
      if (!(err instanceof Problem)) throw err;
      clear(root, h('p', { role: 'alert' }, err.detail, ' ', h('a', { href: '#' }, 'Back')));
      return;
    }
    const s = game.seats[seat];
    const error = h('div', { role: 'alert', class: 'message error', id: 'join-error' });
    const name = h('input', { id: 'join-name', required: true, maxlength: '40', autocomplete: 'nickname' });
    const others = game.seats.filter((x) => x.seat !== seat).map((x) => `${x.name != null ? isolate(x.name) : (x.bot ? `${x.bot} bot` : 'open')} (seat ${x.seat}, team ${x.team})`);
    clear(root, h('section', { class: 'join' },
      h('h1', {}, `Join game ${game.id}`),
      h('p', {}, `${game.preset}, ${game.players} players. Also at the table: ${others.join(', ')}.`),
      !s || !s.open ? h('p', { role: 'alert' }, `Seat ${seat} is not open. `, h('a', { href: `#game=${encodeURIComponent(gameId)}` }, 'Watch the game')) :
        h('form', { id: 'join-form', onsubmit: async (e) => {
          e.preventDefault();
          try {
            const r = await postJoin(gameId, seat, name.value.trim());
            // the token goes into the fragment only; replace() keeps the join link out of history
            location.replace(seatLink(gameId, r.body.seat, r.body.token));
          } catch (err) {
            if (!(err instanceof Problem)) throw err;
            clear(error, err.detail, ' ', h('code', {}, err.shownCode));
          }
        } },
        h('p', { class: 'field' }, h('label', { for: 'join-name' }, `Your name (seat ${seat}, team ${s.team})`), name),
        error,
        h('button', { type: 'submit', id: 'join', class: 'primary' }, `Take seat ${seat}`))));
    name.focus?.();
  })();
  return view;
}
