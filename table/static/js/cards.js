// Card codes of the log format ("TH", "JK") as people read them: a symbol and a name for
// every suit, so that the table reads without colour and with a screen reader.

const RANKS = {
  A: ['A', 'ace', 'aces'], 2: ['2', 'two', 'twos'], 3: ['3', 'three', 'threes'],
  4: ['4', 'four', 'fours'], 5: ['5', 'five', 'fives'], 6: ['6', 'six', 'sixes'],
  7: ['7', 'seven', 'sevens'], 8: ['8', 'eight', 'eights'], 9: ['9', 'nine', 'nines'],
  T: ['10', 'ten', 'tens'], J: ['J', 'jack', 'jacks'], Q: ['Q', 'queen', 'queens'],
  K: ['K', 'king', 'kings'],
};
const SUITS = { S: ['♠', 'spades'], H: ['♥', 'hearts'], D: ['♦', 'diamonds'], C: ['♣', 'clubs'] };
// Display order only (the engine decides what a card may do): low to high, then 2s and jokers.
const ORDER = '3456789TJQKA2';
const SUIT_ORDER = 'SHDC';

export function card(code) {
  if (code === 'JK') {
    return { code, rank: 'JK', suit: null, short: 'Jkr', symbol: '★', name: 'joker', red: false };
  }
  const [r, s] = [code[0], code[1]];
  const rank = RANKS[r];
  const suit = SUITS[s];
  if (!rank || !suit) return { code, rank: r, suit: s, short: code, symbol: '?', name: code, red: false };
  const name = `${rank[1]} of ${suit[1]}`; // "nine of spades": a screen reader says it as a word
  return { code, rank: r, suit: s, short: rank[0] + suit[0], symbol: suit[0], name, red: s === 'H' || s === 'D' };
}

export function rankLabel(rank) {
  return RANKS[rank]?.[0] ?? rank;
}

export function rankPlural(rank) {
  return RANKS[rank]?.[2] ?? rank;
}

function sortKey(code) {
  if (code === 'JK') return 1000;
  return ORDER.indexOf(code[0]) * 10 + SUIT_ORDER.indexOf(code[1]);
}

export function sortCards(codes) {
  return [...codes].sort((a, b) => sortKey(a) - sortKey(b));
}

// The hand grouped by rank, each card with a key that stays the same while it is held
// ("7H#0", "7H#1" for two copies), for selections that survive a re-render.
export function groupHand(codes) {
  const seen = {};
  const groups = [];
  let last = null;
  for (const code of sortCards(codes)) {
    const n = (seen[code] = (seen[code] ?? -1) + 1);
    const rank = code === 'JK' ? 'JK' : code[0];
    if (!last || last.rank !== rank) groups.push((last = { rank, cards: [] }));
    last.cards.push({ code, key: `${code}#${n}` });
  }
  return groups;
}

export function cardsText(codes) {
  return sortCards(codes).map((c) => card(c).short).join(' ');
}

export function cardsNames(codes) {
  return sortCards(codes).map((c) => card(c).name).join(', ');
}

// Card codes in a sentence of the server's ("5S cannot be melded with the top card KD") as
// the table writes cards everywhere else ("5♠ ... K♦"); a rank alone in "the T meld" as "10".
const CODE_IN_TEXT = /\b(?:([2-9TJQKA])([SHDC])|JK)\b/g;

export function symbolize(text) {
  return String(text ?? '')
    .replace(CODE_IN_TEXT, (code) => (code === 'JK' ? 'joker' : card(code).short))
    .replace(/\bT (meld|melds)\b/g, '10 $1');
}
