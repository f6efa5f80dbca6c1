// Pieces of the table shared by the live game and the replay viewer. Everything shown is
// read from the engine's views (melds with their canasta kind, the pile and why it is
// frozen, scores): no rule is worked out here.

import { h, isolate } from './dom.js';
import { card, cardsNames, cardsText, rankLabel, rankPlural, sortCards } from './cards.js';

export function cardFace(code, attrs = {}) {
  const c = card(code);
  return h('span', { class: ['card', c.red && 'red', c.code === 'JK' && 'joker'], role: 'img', 'aria-label': c.name,
    title: c.name, ...attrs },
  h('span', { class: 'rank', 'aria-hidden': 'true' }, c.code === 'JK' ? 'Jkr' : rankLabel(c.rank)),
  h('span', { class: 'suit', 'aria-hidden': 'true' }, c.symbol));
}

export function cardRow(codes, label) {
  return h('span', { class: 'cards', role: 'list', 'aria-label': label },
    sortCards(codes).map((code) => h('span', { role: 'listitem' }, cardFace(code))));
}

// A seat as every sentence of the table names it: its player's name, or "standard bot"; with
// its seat number ("ann (seat 0)", "standard bot (seat 1)"), and "you" for the reader's own.
export function seatName(seats, seat, mySeat = null) {
  if (mySeat !== null && seat === mySeat) return 'you';
  const s = seats?.[seat];
  if (!s) return `seat ${seat}`;
  const who = s.name != null ? isolate(s.name) : (s.bot ? `${s.bot} bot` : 'open seat');
  return `${who} (seat ${seat})`;
}

// A seat in a few words, for a side's name: its player's name, or what plays it, named as
// every sentence names it ("standard bot (seat 1)").
export function shortName(seats, seat) {
  const s = seats?.[seat];
  if (s?.name) return isolate(s.name);
  return s?.bot ? `${s.bot} bot (seat ${seat})` : `seat ${seat}`;
}

// A sentence's first letter in capitals ("you discarded" -> "You discarded").
export function capital(text) {
  return text ? text[0].toUpperCase() + text.slice(1) : text;
}

export function teamName(view, seats, team, mySeat = null) {
  const members = view.teams?.[team] ?? [];
  const names = members.map((p) => (p === mySeat ? 'you' : shortName(seats, p)));
  return members.length > 1 ? `${names.join(' & ')}` : names[0] ?? `team ${team}`;
}

export function describeAction(action) {
  switch (action?.type) {
    case 'draw': return 'draw from the stock';
    case 'take_pile': {
      const parts = ['take the pile'];
      if (action.onto) parts.push(`onto the ${rankPlural(action.onto)}`);
      if (action.with?.length) parts.push(`with ${cardsText(action.with)}`);
      if (action.melds?.length) parts.push(`and meld ${action.melds.map(cardsText).join(' + ')}`);
      return parts.join(' ');
    }
    case 'meld': return `meld ${action.melds.map(cardsText).join(' + ')}`;
    case 'add': return `add ${cardsText(action.cards)} to the ${rankPlural(action.rank)}`;
    case 'discard': return `discard ${cardsText([action.card])}`;
    case 'ask_go_out': return 'ask partner: may I go out?';
    case 'answer_go_out': return action.yes ? 'answer: yes, go out' : 'answer: no, play on';
    case 'pass': return 'pass (decline the pile)';
    default: return JSON.stringify(action);
  }
}

// One move event (engine.describe_move) as sentences: "bob (seat 1) discarded 7♥.", then
// what came of it (the next player's red threes are that player's own sentence).
export function describeMoveLines(move, seats, view = null, mySeat = null) {
  const who = seatName(seats, move.seat, mySeat);
  const a = move.action ?? {};
  let what;
  switch (a.type) {
    case 'draw':
      what = `drew ${move.drew === 1 ? 'a card' : `${move.drew ?? ''} cards`}`;
      if (move.cards?.length) what += ` (${cardsText(move.cards)})`;
      break;
    case 'take_pile':
      what = `took the pile (${move.pile_taken === 1 ? '1 card' : `${move.pile_taken} cards`})`;
      if (a.onto) what += ` onto the ${rankPlural(a.onto)}`;
      if (a.with?.length) what += ` with ${cardsText(a.with)}`;
      if (a.melds?.length) what += ` and melded ${a.melds.map(cardsText).join(' + ')}`;
      break;
    case 'meld': what = `melded ${a.melds.map(cardsText).join(' + ')}`; break;
    case 'add': what = `added ${cardsText(a.cards)} to the ${rankPlural(a.rank)}`; break;
    case 'discard': what = `discarded ${cardsText([a.card])}${move.beside_pile ? ' beside the pile' : ''}`; break;
    case 'ask_go_out': what = 'asked their partner: may I go out?'; break;
    case 'answer_go_out': what = a.yes ? 'answered: yes, go out' : 'answered: no, play on'; break;
    case 'pass': what = 'passed'; break;
    default: what = `played ${JSON.stringify(a)}`;
  }
  const lines = [sentence(`${who} ${what}`)];
  if (move.red_threes_laid?.length) lines.push(sentence(`${who} ${redThreesText(move.red_threes_laid)}`));
  if (move.first_turn_red_threes) {
    lines.push(sentence(`${seatName(seats, move.first_turn_red_threes.seat, mySeat)} ${redThreesText(move.first_turn_red_threes.cards)}`));
  }
  if (move.hand_end) lines.push(sentence(`hand ${move.hand_end.hand_end} is over: ${reasonText(move.hand_end, seats, mySeat)}`));
  if (move.game_end) lines.push(sentence(`the game is over${AT_LIMIT[move.game_end.reason] ?? ''}: ${winnerText(move.game_end, view, seats)}`));
  return lines;
}

export function describeMove(move, seats, view = null, mySeat = null) {
  return describeMoveLines(move, seats, view, mySeat).join(' ');
}

function redThreesText(cards) {
  return cards.length === 1 ? `laid a red three, ${cardsText(cards)}` : `laid ${cards.length} red threes, ${cardsText(cards)}`;
}

// A capital first, and a full stop unless the text ends with its own mark ("may I go out?").
function sentence(text) {
  return capital(/[.?!]$/.test(text) ? text : `${text}.`);
}

export function reasonText(result, seats = null, mySeat = null) {
  const known = result.by !== null && result.by !== undefined;
  const by = known ? (seats ? seatName(seats, result.by, mySeat) : `seat ${result.by}`) : 'a player';
  switch (result.reason) {
    case 'went_out': return `${by} went out`;
    case 'stock_exhausted': return `the stock ran out (last to play: ${by})`;
    case 'red_three_last': return `the last card of the stock was a red three (drawn by ${by})`;
    case 'move_limit': return `it was stopped at the move limit (next to play: ${by})`;
    default: return `${String(result.reason).replaceAll('_', ' ')} (${by})`;
  }
}

// A game that a limit ended, as the move log says it (docs/rules.md, "Limits").
const AT_LIMIT = { hand_limit: ' at the hand limit', move_limit: ' at the move limit' };

// Why the game ended (the result's reason), in a card player's words, with the rules'
// numbers where they are known; '' for a result from before games had limits (no reason).
export function endText(result, rules = null) {
  switch (result.reason) {
    case 'target':
      return rules?.target_score ? `A side reached the target of ${rules.target_score} points.` : 'A side reached the target score.';
    case 'hand_limit':
      return `The game ended at the hand limit${rules?.max_hands ? ` (${plural(rules.max_hands, 'hand')})` : ''}: no side reached the target.`;
    case 'move_limit':
      return `The game ended at the move limit: a hand reached ${rules?.max_moves_per_hand ?? 'the most'} moves and was stopped there.`;
    default: return '';
  }
}

export function winnerText(result, view, seats) {
  if (result.winner === null || result.winner === undefined) return 'a draw';
  if (!view?.teams) return `team ${result.winner} wins`;
  const alone = (view.teams[result.winner]?.length ?? 1) === 1;
  return `${teamName(view, seats, result.winner)} win${alone ? 's' : ''}`;
}

const SCORE_COLUMNS = [
  ['melds', 'Melds'], ['canasta_bonus', 'Canastas'], ['red_threes', 'Red threes'], ['going_out', 'Going out'],
  ['penalties', 'Penalties'], ['in_hand', 'Left in hand'], ['hand_total', 'Hand'], ['total', 'Total'],
];

// The hand's scoring, a column per side and a row per part: it fits a phone's width with the
// Total in sight (a column per part did not), and reads row by row with a screen reader.
export function scoreTable(result, view, seats, mySeat = null) {
  const rows = result.scores ?? [];
  return h('div', { class: 'scores-wrap' }, h('table', { class: 'scores' },
    h('caption', {}, `Hand ${result.hand_end}: ${reasonText(result, seats, mySeat)}`),
    h('thead', {}, h('tr', {}, h('td', {}),
      rows.map((row) => h('th', { scope: 'col', 'data-team': row.team }, sideLabel(view, seats, row.team, mySeat))))),
    h('tbody', {}, SCORE_COLUMNS.map(([key, label]) => h('tr', { class: key === 'total' ? 'total' : null, 'data-part': key },
      h('th', { scope: 'row' }, label),
      rows.map((row) => h('td', {}, String(row[key] ?? ''))))))));
}

// A side's name in a table's head: "You & ann" for the reader's, else its players.
function sideLabel(view, seats, team, mySeat) {
  return capital(teamName(view, seats, team, mySeat));
}

// ``moved``: the top card a move just discarded, marked as such.
export function pileBlock(view, seats, myTeam = null, mySeat = null, moved = false) {
  const pile = view.pile ?? {};
  const lines = [];
  for (const r of pile.reasons ?? []) {
    if (r.reason === 'frozen_by_card') lines.push(`frozen by ${card(r.card).name}`);
    else if (r.reason === 'wild_beside_pile') lines.push(`frozen by ${card(r.card).name} beside the pile`);
    else if (r.reason === 'locked_by_red_three') lines.push(`locked by a red three until ${seatName(seats, r.until_seat, mySeat)} plays`);
    else lines.push(String(r.reason).replaceAll('_', ' '));
  }
  if (!pile.frozen_by) {
    for (const team of pile.frozen_for_teams ?? []) {
      const side = team === myTeam ? 'your side' : teamName(view, seats, team);
      lines.push(`frozen for ${side} until it has melded`);
    }
  }
  return h('section', { class: 'pile', id: 'pile', 'aria-labelledby': 'pile-title' },
    h('h3', { id: 'pile-title' }, 'Discard pile'),
    h('p', { class: ['pile-top', moved && 'moved'] },
      pile.top ? cardFace(pile.top, { id: 'pile-top' }) : h('span', { class: 'card empty' }, '—'),
      moved ? h('span', { class: 'badge moved-mark' }, '★ just discarded') : null,
      h('span', { id: 'pile-size' }, plural(pile.size ?? 0, 'card')),
      besideCards(pile.beside ?? [])),
    pileCards(pile.cards ?? []),
    lines.length ? h('ul', { class: 'frozen', id: 'pile-frozen' }, lines.map((l) => h('li', {}, '❄ ', l))) : h('p', { class: 'muted' }, 'not frozen'),
    h('p', { id: 'stock' }, `Stock: ${plural(view.stock_size, 'card')}`));
}

// Wilds laid beside the pile (rules where a discarded wild does not cover the top card): they
// freeze it and go with it to whoever takes it.
function besideCards(codes) {
  if (!codes.length) return null;
  return h('span', { class: 'pile-beside', id: 'pile-beside' }, 'beside it: ', smallCards(codes, 'beside the pile'));
}

// A few cards as a list read out with its label: each face keeps its code for the tests.
function smallCards(codes, label) {
  return h('span', { class: 'cards', role: 'list', 'aria-label': `${label}: ${cardsNames(codes)}` },
    codes.map((code) => h('span', { role: 'listitem' }, cardFace(code, { 'data-code': code }))));
}

// Every card in the pile in the order it was laid (all face up, so public), newest last.
// A long pile folds away behind its summary so that it does not push the table down.
// The player's own opening or closing of the list outlives the table's re-renders.
const PILE_OPEN_MAX = 12;
let pileOpenChoice = null;

function pileCards(codes) {
  if (!codes.length) return null;
  const list = h('ol', { class: 'pile-cards', id: 'pile-cards', 'aria-label': 'The pile, bottom card first, top card last' },
    codes.map((code) => h('li', {}, cardFace(code, { 'data-code': code }))));
  const details = h('details', { class: 'pile-list', id: 'pile-list', open: pileOpenChoice ?? codes.length <= PILE_OPEN_MAX });
  const summary = h('summary', { onclick: () => { pileOpenChoice = !details.open; } },
    `The pile's cards, bottom first (${plural(codes.length, 'card')})`);
  details.append(summary, list);
  return details;
}

// Each side's melds, red threes and points: the game's total and, for this hand, the points on
// the table as the server counts them (the view's ``running``: no rule is worked out here).
// ``onMeld(rank)`` makes a meld a target (adding the selected cards to it) when ``addable``
// has its rank; ``moved`` ({team, ranks}) marks the melds a move just changed.
export function sidesBlock(view, seats, { myTeam = null, mySeat = null, addable = [], onMeld = null, moved = null } = {}) {
  const teams = view.teams ?? [];
  return h('section', { class: 'sides', id: 'sides', 'aria-label': 'Melds on the table' },
    teams.map((members, team) => {
      const melds = view.melds?.[team] ?? [];
      const reds = view.red_threes?.[team] ?? [];
      const title = team === myTeam ? `Your side: ${teamName(view, seats, team, mySeat)}` : teamName(view, seats, team, mySeat);
      const changed = moved && moved.team === team ? moved.ranks : [];
      return h('article', { class: ['side', team === myTeam && 'mine'], id: `side-${team}`, 'aria-label': title },
        h('h3', {}, title),
        pointsBlock(view, team),
        reds.length ? h('p', { class: 'reds' }, 'Red threes: ', cardRow(reds, 'red threes')) : null,
        melds.length
          ? h('ul', { class: 'melds' }, melds.map((m) => meldItem(m, addable, onMeld, changed.includes(m.rank))))
          : h('p', { class: 'muted' }, 'No melds yet.'));
    }));
}

// A side's points: the game's total before this hand, and this hand's points on the table with
// what makes them; then what the side still needs (its first meld's minimum, canastas to go out).
function pointsBlock(view, team) {
  const total = view.totals?.[team] ?? 0;
  const run = view.running?.[team];
  if (!run) return h('p', { class: 'side-facts', id: `points-${team}` }, h('span', {}, `Game total ${total}`));
  const parts = [`melds ${run.melds}`];
  const { natural, mixed } = run.canastas;
  if (natural || mixed) {
    const kinds = [natural ? `${natural} natural` : null, mixed ? `${mixed} mixed` : null].filter(Boolean).join(' + ');
    parts.push(`${kinds} canasta${natural + mixed > 1 ? 's' : ''} ${signed(run.canasta_bonus)}`);
  }
  if (run.red_threes) parts.push(`red threes ${signed(run.red_threes)}`);
  if (run.penalties) parts.push(`penalties ${signed(run.penalties)}`);
  const needs = [];
  if (run.opening_needed !== null && run.opening_needed !== undefined) needs.push(`first meld needs ${run.opening_needed} points`);
  if (run.canastas_to_go_out) needs.push(`${plural(run.canastas_to_go_out, 'more canasta')} to go out`);
  else if (view.phase !== 'over') needs.push('may go out');
  return h('div', { class: 'points', id: `points-${team}` },
    h('p', { class: 'side-facts' },
      h('span', { class: 'hand-points' }, 'This hand: ', h('strong', { 'data-points': run.on_table }, String(run.on_table)), ' on the table'),
      h('span', {}, `Game total ${total}`)),
    h('p', { class: 'side-parts' }, parts.join(' · '), needs.length ? ` · ${needs.join(' · ')}` : ''));
}

function signed(n) {
  return n > 0 ? `+${n}` : n < 0 ? `−${-n}` : '0';
}

function meldItem(m, addable, onMeld, moved = false) {
  const label = `${rankPlural(m.rank)}: ${m.cards.length} cards${m.wilds ? `, ${m.wilds} wild` : ''}${m.canasta ? `, ${m.canasta} canasta` : ''}${moved ? ', just played' : ''}`;
  const body = [
    h('span', { class: 'meld-rank' }, rankLabel(m.rank)),
    cardRow(m.cards, cardsNames(m.cards)),
    h('span', { class: 'meld-count' }, `${m.cards.length}`),
    m.canasta ? h('span', { class: ['badge', m.canasta] }, m.canasta === 'natural' ? '● natural canasta' : '◐ mixed canasta') : null,
    moved ? h('span', { class: 'badge moved-mark', 'aria-hidden': 'true' }, '★ new') : null,
  ];
  const cls = ['meld', m.canasta && 'canasta', moved && 'moved'];
  if (onMeld && addable.includes(m.rank)) {
    return h('li', { class: cls, 'data-rank': m.rank },
      h('button', { type: 'button', class: 'meld-target', 'data-focus': `meld-${m.rank}`, 'aria-label': `Add the selected cards to the ${label}`,
        onclick: () => onMeld(m.rank) }, body));
  }
  return h('li', { class: cls, 'data-rank': m.rank, 'aria-label': label }, body);
}

function plural(n, word) {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

// ``moving``: the seat whose move is being shown.
export function seatsBlock(view, seats, mySeat = null, moving = null) {
  return h('section', { class: 'seats', id: 'seats', 'aria-label': 'Players' },
    h('ol', {}, (seats ?? []).map((s) => {
      const acting = view?.to_act === s.seat;
      return h('li', { class: ['seat', acting && 'acting', s.seat === mySeat && 'me', s.seat === moving && 'moving'], 'data-seat': s.seat },
        acting ? h('span', { class: 'turn-mark', 'aria-label': 'to act' }, '▶ ') : null,
        h('span', { class: 'seat-name' }, s.seat === mySeat ? `${seatName(seats, s.seat)} — you` : seatName(seats, s.seat)),
        h('span', { class: 'seat-team' }, ` team ${s.team}`),
        view ? h('span', { class: 'seat-cards' }, ` · ${plural(view.hand_sizes?.[s.seat] ?? 0, 'card')}`) : null,
        knownCards(view?.known_from_pile?.[s.seat] ?? []),
        s.open ? h('span', { class: 'badge' }, ' open') : null);
    })));
}

// The cards a seat was seen to take with the pile and still holds (public knowledge).
function knownCards(codes) {
  if (!codes.length) return null;
  return h('span', { class: 'seat-known' }, ' · known: ', smallCards(sortCards(codes), 'known to hold, from the pile'));
}

export function resultBlock(result, view, seats, rules = null) {
  const why = endText(result, rules);
  return h('section', { class: 'result', id: 'game-result', role: 'status' },
    h('h2', {}, `Game over: ${winnerText(result, view, seats)}`),
    why ? h('p', { id: 'game-end-reason' }, why) : null,
    h('p', {}, 'Final totals: ', (result.totals ?? []).map((t, team) => `${teamName(view, seats, team)} ${t}`).join(' · ')));
}
