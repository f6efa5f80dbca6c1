"""The standard bot: a sound club game by rules of thumb, on the table's public knowledge.

It plays like :class:`~bots.greedy.Greedy` where greedy's advice is sound, and changes the
places where greedy loses the race (issue 15: greedy takes the pile far more often than a
club player, completes fewer canastas and goes out half as often):

* **pile play with memory**: the pile is public card by card, so a take is judged by what
  the pile brings (cards that fit our melds and pairs, wilds), not by its size; a small or
  junk pile is left alone.
* **safe discards with the known cards**: the next opponent's cards taken with the pile are
  public; a discard it is known to be able to take with counts as a near-certain feed. A feed
  weighs 40 a pile card (greedy 12): in four players the pile the next opponent takes is most
  of what decides a hand (with its hand known, the bot won 81% against greedy). An unopened
  side must also reach its minimum with the take: a high rank (an ace opens alone) feeds it
  more surely than a low one.
* **blocking**: when every ordinary discard would feed a rich pile to the next opponent, a
  black three blocks it, or a wild freezes it (when we are behind on the pile: the next
  opponent can take it and we cannot match that).
* **freezing when ahead on the pile**: holding natural pairs (each takes a frozen pile), a
  wild discarded freezes the pile as soon as it is worth a take, so the opposing side, which
  takes an open pile with one natural and a wild or onto its melds, needs pairs too.
* **tempo**: go out when the public score estimate (the table, the going-out bonus, the
  hands' cards, the known ones at their value) says going out wins the hand, and always near
  the end of the stock or with the opponents near going out; answer the partner's "may I go
  out?" by the same estimate. **For the game, not only the hand**: going out that ends the
  game won (our side past the target, ahead) is taken whatever the hand's estimate, and going
  out that ends it lost is not (a hand lost but for the game is worth playing on).
* **the race to the first canasta**: while our side lacks the canastas it needs to go out, a
  wild goes onto a meld of ours that it brings near a canasta (greedy scores every wild add
  alike), a pile after which this hand completes a canasta is taken however small, and a
  discard that would bring the next opponent's meld to five cards counts as a feed of the
  race; in four-player ``finnish`` one canasta ends the hand, so the first one decides it.
* **ready to go out**: once our side has its canastas, a wild stays in hand (it melds with
  any pair or onto any meld on the turn out) unless the opponents are near going out.
* **cards in hand**: once our side has opened, melds and adds that complete no canasta wait
  in hand while the pile holds two cards or more; they go down with a canasta or on the turn
  out. Each card kept is one more choice of a safe discard, and a natural pair or triple
  takes the pile, even frozen, when it comes round. Greedy lays everything at once. A high
  card is kept too until the hand is late (greedy sheds points from the start).

Opening, canasta building and the partner's melds are greedy's
(:class:`~bots.greedy.Greedy` already adds to the side's melds and completes canastas first).
Measured (docs/benchmarks/bots.md, issue 15; today's figures in BENCHMARKS.md): against greedy
~76% in four-player ``finnish`` and ~95% in ``finnish-2p`` (seeds 520-539 and 500-509 x 200
games; ~62% and ~83% before the cards were kept in hand).
Fast: one pass over the legal actions with table look-ups (p99 of CPU per decision ~0.2 ms).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bots.greedy import Greedy, table_points
from bots.odds import at_least
from bots.view import SeatView, rank_counts
from engine.cards import (
    IS_BLACK_THREE,
    IS_RED_THREE,
    IS_WILD,
    MELD_RANKS,
    RANK_OF,
    RED_THREES,
    VALUE,
    WILDS,
    parse_card,
    parse_rank,
)
from engine.melds import wild_room
from engine.state import NOT_FROZEN, Meld

Action = dict[str, Any]

BLOCK_PILE = 6  # pile size from which feeding it is worth a black three or a wild
FREEZE_COST = 70.0  # what a wild discarded to freeze the pile costs us (its meld value and more)
TAKE_MIN_GAIN = 30.0  # points a take must bring, net of what it spends, to beat a stock draw
RACE_TAKE_MIN_GAIN = 0.0  # the same in the race to a first canasta that ends the hand: any take that pays
PILE_FIT = 14.0  # a pile card that fits our melds or pairs a rank we hold
PILE_WILD = 30.0  # a wild that comes with the pile
PILE_JUNK = 2.0  # any other pile card (it is a card in hand, some use, some cost)
OPEN_BONUS = 60.0  # taking the pile to open (the pile is frozen against an unopened side)
BLACK_THREE_KEEP = 10.0  # a black three kept for a pile worth blocking
FREEZE_PAIRS = 2  # natural pairs in hand from which our side is ahead on a frozen pile
FREEZE_PILE = 3  # pile size from which freezing it while ahead is worth a wild
FREEZE_AHEAD = -100.0  # the discard score of that freeze: before any ordinary discard
HOLD_PILE = 2  # pile size from which melds that complete no canasta wait in hand (holds_back)
RACE_MELD = 5  # meld size a wild add must reach to count as a push toward the needed canastas
RACE_WILD_ADD = 30.0  # that add's score: above an ordinary add, below completing a canasta
PILE_CARD = 40  # what one pile card given to the next opponent is worth to it (greedy: 12; 20 until 2026-12-02)
FEED_MELD = 5  # meld size a discard (with the pile) would bring the next opponent's meld to: a race feed
FEED_RACE = 300.0  # what that feed is worth to it while its side lacks the canastas to go out
# An unopened next side takes the pile only if the take also reaches its opening minimum; the
# top card and the pair it takes it with count 3 x the rank's points (an ace 60, a king 30, a 5 15)
OPEN_ALONE = 0.9  # that meld alone reaches the minimum
OPEN_NEAR_POINTS = 30  # points another meld from its hand adds, about (three kings, a pair and a wild)
OPEN_NEAR = 0.4  # the meld and about one more meld reach it
OPEN_FAR = 0.15  # it needs more than that


def known_counts(v: SeatView, seat: int, rank: int) -> tuple[int, int]:
    """Naturals of ``rank`` and wilds that ``seat`` is known to hold (taken with the pile)."""
    nat = wild = 0
    for k in v.known_from_pile(seat):
        if IS_WILD[k]:
            wild += 1
        elif RANK_OF[k] == rank:
            nat += 1
    return nat, wild


@dataclass
class UnseenOdds:
    """What the take chances of one view share: the totals of its unseen counts, and the
    chances found so far by (seat, rank). A hand's discards share ranks, and the standard
    bot and the expert's candidates score the same discards of one view."""

    unseen: list[int]  # the counts these figures come from (the view's unseen_counts())
    total: int  # unseen cards
    wilds: int  # unseen wilds
    red_threes: int  # unseen red threes (not in the hand of a seat past its first turn)
    chances: dict[tuple[int, int], float] = field(default_factory=dict)

    @classmethod
    def of(cls, v: SeatView, unseen: list[int]) -> UnseenOdds:
        """The view's odds for ``unseen``, kept in its memo (made anew for other counts)."""
        odds = v.memo.get(UNSEEN_ODDS)
        if odds is None or odds.unseen is not unseen:
            odds = v.memo[UNSEEN_ODDS] = cls(unseen, sum(unseen), sum(unseen[k] for k in WILDS),
                                             sum(unseen[k] for k in RED_THREES))
        return odds


UNSEEN_ODDS = "unseen_odds"  # the SeatView.memo key of UnseenOdds


def take_chance_known(v: SeatView, seat: int, rank: int, unseen: list[int]) -> float:
    """The chance that ``seat`` can take a pile topped by ``rank`` (a natural rank): its known
    cards decide where they suffice; the rest of its hand is a sample of the unseen cards."""
    odds = UnseenOdds.of(v, unseen)
    chance = odds.chances.get((seat, rank))
    if chance is None:
        chance = odds.chances[seat, rank] = _take_chance_known(v, seat, rank, odds)
    return chance


def _take_chance_known(v: SeatView, seat: int, rank: int, odds: UnseenOdds) -> float:
    """Exact for hidden cards dealt at random from the unseen ones, as
    :func:`~bots.view.determinize` deals the expert's worlds (the opening minimum aside)."""
    team = v.team_of(seat)
    frozen = v.pile_frozen_for(team)
    if not frozen and v.melds(team)[rank] is not None:
        return 1.0
    nat, wild = known_counts(v, seat, rank)
    hidden = max(v.hand_size_of(seat) - len(v.known_from_pile(seat)), 0)
    total = odds.total - odds.red_threes if v.holds_no_red_three(seat) else odds.total
    good = sum(odds.unseen[k] for k in range(rank * 4, rank * 4 + 4) if not IS_WILD[k])  # the rank's naturals
    pair = at_least(total, good, hidden, 2 - nat)
    if frozen or nat >= 2:
        return pair
    one = at_least(total, good, hidden, 1 - nat)
    if wild:
        return one
    # a natural and a wild: exactly 1 - nat more naturals hidden (one - pair), and a wild among
    # the rest of the hidden cards, which come from the unseen cards that are not the rank's
    rest = hidden - (1 - nat)
    return min(1.0, pair + (one - pair) * at_least(total - good, odds.wilds, max(rest, 0), 1))


OPPOSING_HANDS = "opposing_hands"  # the SeatView.memo key of Standard.opposing_hands
GAME_AFTER_GOING_OUT = "game_after_going_out"  # ... and of Standard.game_after_going_out


class Standard(Greedy):
    """Greedy's structure with a club player's pile play, memory and tempo."""

    name = "standard"
    late_stock = 20
    go_out_margin = -20  # going out a little behind still wins the race for the next hands
    take_min_gain = TAKE_MIN_GAIN
    race_take_min_gain = RACE_TAKE_MIN_GAIN
    block_pile = BLOCK_PILE
    go_out_stock = 10  # stock size from which going out is always taken
    play_for_the_game = True  # going out that ends the game decides by the game (game_after_going_out)
    freeze_pairs = FREEZE_PAIRS
    freeze_pile = FREEZE_PILE
    pile_card = PILE_CARD
    race_meld = RACE_MELD
    hold_pile = HOLD_PILE
    # a high card is kept until the hand is late (greedy sheds it a little from the start): it
    # is points on our melds when it goes down, and points in the pile the next opponent takes
    early_shed = -0.5
    feed_meld = FEED_MELD
    feed_race = FEED_RACE

    # -- drawing ----------------------------------------------------------------------------
    def worth_taking(self, score: float) -> bool:
        return score >= self.take_min_gain

    def take_score(self, v: SeatView, a: Action) -> float:
        """What the pile brings (each card judged by our melds and hand), less what it spends."""
        memo = v.memo.get("pile_gain")
        if memo is None:
            memo = v.memo["pile_gain"] = self.pile_gain(v)
        used = [parse_card(c) for c in a.get("with", [])]
        wilds = sum(1 for k in used if IS_WILD[k])
        cost = wilds * (45.0 if v.pile_size <= 4 else 15.0)
        gain = memo + 10.0 * len(a.get("melds", []))
        if not v.opened(v.team):
            gain += OPEN_BONUS
        return gain - cost

    def pile_gain(self, v: SeatView) -> float:
        side = v.melds(v.team)
        counts = v.hand_rank_counts()
        gain = 0.0
        for k in v.pile[:-1] + v.pile_beside:
            if IS_WILD[k]:
                gain += PILE_WILD
            elif IS_RED_THREE[k]:
                gain += 100.0 if not v.rules.melding.red_threes_optional else PILE_JUNK
            elif IS_BLACK_THREE[k]:
                gain += PILE_JUNK
            elif side[RANK_OF[k]] is not None or counts[RANK_OF[k]] >= 1:
                gain += PILE_FIT + VALUE[k] * 0.2
            else:
                gain += PILE_JUNK
        top = v.pile_top
        if top >= 0:
            gain += PILE_FIT + VALUE[top] * 0.5
        return gain

    def draw_phase(self, v: SeatView, actions: list[Action]) -> Action:
        """Greedy's, but a take after which this hand completes a canasta of our side is taken
        while the side lacks the canastas it needs to go out: the first canasta decides a
        four-player hand, and a small pile that finishes one scores low by its cards alone.
        Before either side has a canasta, where one ends the hand, any take that pays for what
        it spends is taken."""
        takes = [a for a in actions if a["type"] == "take_pile"]
        if takes:
            best = max(takes, key=lambda a: self.take_score(v, a))
            if v.canastas(v.team) < v.rules.going_out.canastas_to_go_out and self.take_completes_canasta(v):
                return best
            if self.before_first_canasta(v) and self.take_score(v, best) >= self.race_take_min_gain:
                return best  # one stock card a turn in four players: the pile's cards feed the race
        return super().draw_phase(v, actions)

    @staticmethod
    def before_first_canasta(v: SeatView) -> bool:
        """Neither side has a canasta where one is enough to go out: the race is on (in
        ``finnish-2p``, which needs two, the pickier take measured better: 80% against 82%)."""
        return v.rules.going_out.canastas_to_go_out == 1 and all(v.canastas(t) == 0 for t in range(v.teams))

    @staticmethod
    def take_completes_canasta(v: SeatView) -> bool:
        """With the pile's cards, this hand can bring a meld of our side (or the one the take
        starts with the top card) to a canasta, counting naturals and the wilds that fit."""
        rules = v.rules
        pile = list(v.pile) + list(v.pile_beside)
        counts = rank_counts(v.hand)
        wilds = sum(v.hand[k] for k in WILDS) + sum(1 for k in pile if IS_WILD[k])
        for k in pile:
            if not IS_WILD[k]:
                counts[RANK_OF[k]] += 1
        top_rank = RANK_OF[v.pile_top] if v.pile_top >= 0 else -1
        size, naturals_needed = rules.melding.canasta_size, rules.melding.canasta_min_naturals
        for rank, m in enumerate(v.melds(v.team)):
            if rank not in MELD_RANKS or (m is None and rank != top_rank):
                continue
            if m is not None and m.is_canasta(rules):
                continue
            nat = (m.naturals if m is not None else 0) + counts[rank]
            on = m.wilds if m is not None else 0
            if nat >= naturals_needed and nat + on + min(wilds, wild_room(rules, nat, on)) >= size:
                return True
        return False

    # -- melding ---------------------------------------------------------------------------
    def meld_score(self, v: SeatView, a: Action) -> float:
        """Greedy's, but once our side has opened, a meld or add that completes no canasta waits
        in hand while the pile is worth taking (:meth:`holds_back`), and a wild goes onto a meld
        of ours near a canasta while our side lacks the canastas it needs to go out (the first
        canasta decides a four-player hand). Opening, canastas, red threes and going out are
        greedy's."""
        score = super().meld_score(v, a)
        if score <= 0 or not v.opened(v.team) or self.lays_red_three(a) or self.completes_canasta(v, a):
            return score
        cards = a.get("cards", ())
        if a["type"] == "add" and any(IS_WILD[parse_card(c)] for c in cards):
            if v.canastas(v.team) >= v.rules.going_out.canastas_to_go_out:
                # our side may go out: a wild kept in hand melds anywhere on the turn out (with a
                # pair, or onto any meld), so it stays there unless the opponents are near out
                if all(IS_WILD[parse_card(c)] for c in cards) and not self.threat(v):
                    return 0.0
            else:
                meld = v.melds(v.team)[parse_rank(a["rank"])]
                if meld is not None and not meld.is_canasta(v.rules) and len(meld.cards) + len(cards) >= self.race_meld:
                    return RACE_WILD_ADD
        return 0.0 if self.holds_back(v) else score

    @staticmethod
    def completes_canasta(v: SeatView, a: Action) -> bool:
        """The action leaves a canasta where our side had none of that rank: a meld laid whole,
        or an add that brings a meld to the canasta's size."""
        if a["type"] == "meld":
            laid = [Meld.of(0, [parse_card(c) for c in g]) for g in a["melds"]]  # the test reads no rank
            return any(m.is_canasta(v.rules) for m in laid)
        meld = v.melds(v.team)[parse_rank(a["rank"])]
        if meld is None or meld.is_canasta(v.rules):
            return False
        return Meld.of(meld.rank, meld.cards + tuple(parse_card(c) for c in a["cards"])).is_canasta(v.rules)

    def holds_back(self, v: SeatView) -> bool:
        """Cards that would only lengthen our melds stay in hand while the pile holds
        :data:`HOLD_PILE` cards or more, late in the hand too: each is one more choice of a safe
        discard (the fewer cards, the likelier every discard feeds the next opponent), and a
        natural pair or triple takes the pile when it comes round, even frozen. They go down
        when they complete a canasta, or all at once on the turn out (the going-out plan comes
        before any meld). Found where the expert's search departs from this bot: in 60 games
        against greedy it declined 1 700 of the bot's melds and adds (docs/benchmarks/bots.md)."""
        return v.opened(v.team) and v.pile_size >= self.hold_pile

    # -- going out --------------------------------------------------------------------------
    def want_go_out(self, v: SeatView) -> bool:
        if self.play_for_the_game:
            ends = self.game_after_going_out(v)
            if ends:
                return ends > 0
        if self.threat(v) or v.stock_size <= self.go_out_stock:
            return True
        ours: float = table_points(v, v.team) + v.rules.scoring.going_out_bonus
        ours -= self.in_hand_cost(v, v.partners)
        return ours - max(self.opposing_hands(v).values()) >= self.go_out_margin

    def opposing_hands(self, v: SeatView) -> dict[int, float]:
        """Each opposing side's hand if ours goes out now: its table less the cards its seats
        hold. Both going-out judgments read it; counted once a view."""
        found: dict[int, float] | None = v.memo.get(OPPOSING_HANDS)
        if found is None:
            found = v.memo[OPPOSING_HANDS] = {
                t: table_points(v, t) - self.in_hand_cost(v, [p for p in v.opponents if v.team_of(p) == t])
                for t in range(v.teams) if t != v.team}
        return found

    def game_after_going_out(self, v: SeatView) -> int:
        """+1 if going out now ends the game won (our side reaches the target, ahead), -1 if it
        ends it lost (an opposing side does, ahead of us), 0 if the game goes on: by the same
        estimate of the hand as the going-out judgment, plus the cards laid going out. A hand
        lost but for the game is worth playing on; a game won is taken whatever the hand.
        The seat whose turn it is goes out: this one, or the partner who asked (then this
        hand's cards count against us). Counted once a view: the bot's going-out judgment
        and the expert's game check both ask."""
        found: int | None = v.memo.get(GAME_AFTER_GOING_OUT)
        if found is None:
            found = v.memo[GAME_AFTER_GOING_OUT] = self._game_after_going_out(v)
        return found

    def _game_after_going_out(self, v: SeatView) -> int:
        goer = v.turn
        laid = v.hand_value if goer == v.seat else -v.hand_value
        ours = (v.totals[v.team] + table_points(v, v.team) + v.rules.scoring.going_out_bonus + laid
                - self.in_hand_cost(v, [p for p in v.partners if p != goer]))
        theirs = max(v.totals[t] + hand for t, hand in self.opposing_hands(v).items())
        target = v.rules.scoring.target_score
        if ours >= target and ours > theirs:
            return 1
        if theirs >= target and theirs >= ours:
            return -1
        return 0

    @staticmethod
    def in_hand_cost(v: SeatView, seats: Any) -> float:
        """About 8 points a card in those hands, the known cards at their value."""
        cost = 0.0
        for p in seats:
            known = v.known_from_pile(p)
            cost += 8.0 * (v.hand_size_of(p) - len(known)) + sum(VALUE[k] for k in known)
        return cost

    def answer_yes(self, v: SeatView) -> bool:
        """Say yes when our side's table is worth the stop: its canastas are there and little is
        left in hand, or the opponents are about to go out."""
        if self.threat(v) or v.hand_size <= 2 or v.hand_value <= 50:
            return True
        return self.want_go_out(v) and v.hand_value <= 100

    # -- discarding -------------------------------------------------------------------------
    def discard_score(self, v: SeatView, kind: int, unseen: list[int]) -> float:
        if IS_WILD[kind]:
            return self.freeze_score(v, unseen)
        if IS_BLACK_THREE[kind]:
            # a block: spend it on a pile worth blocking, or late to shed it; else keep it
            return -40.0 if v.pile_size >= self.block_pile or self.late(v) else BLACK_THREE_KEEP
        return super().discard_score(v, kind, unseen)

    def freeze_score(self, v: SeatView, unseen: list[int]) -> float:
        """A wild discarded to freeze the pile: at once when we are ahead on a frozen pile (our
        pairs take it, the opened next opponent then needs pairs too); when we are behind,
        only a rich pile the next opponent would take and every other discard feeds."""
        nxt = v.next_opponent()
        if nxt is None or v.pile_frozen_by != NOT_FROZEN or not v.rules.pile.discard_wild_freezes:
            return 1000.0
        if (v.pile_size >= self.freeze_pile and v.opened(v.team_of(nxt))
                and self.pairs_in_hand(v) >= self.freeze_pairs):
            return FREEZE_AHEAD
        if v.pile_size < self.block_pile:
            return 1000.0
        mine = v.memo.get("our_take")
        if mine is None:
            mine = v.memo["our_take"] = self.our_pile_hold(v)
        if mine:
            return 1000.0  # not behind on the pile: our side can take it too
        return FREEZE_COST + (v.pile_size + 1) * self.pile_card * 0.5

    def our_pile_hold(self, v: SeatView) -> bool:
        """Our side holds a natural pair of some rank in hand: it could take a frozen pile."""
        return self.pairs_in_hand(v) >= 1

    @staticmethod
    def pairs_in_hand(v: SeatView) -> int:
        """Meld ranks (aces, fours to kings) of which this hand holds a natural pair or more."""
        pairs = v.memo.get("pairs")
        if pairs is None:
            counts = v.hand_rank_counts()
            pairs = v.memo["pairs"] = sum(1 for r in MELD_RANKS if counts[r] >= 2)
        return pairs

    def danger(self, v: SeatView, kind: int, unseen: list[int]) -> float:
        nxt = v.next_opponent()
        if nxt is None:
            return 0.0
        team = v.team_of(nxt)
        chance = take_chance_known(v, nxt, RANK_OF[kind], unseen)
        if not v.opened(team):
            chance *= self.opening_chance(v, team, kind)
        return chance * ((v.pile_size + 1) * self.pile_card + 20 + self.race_feed(v, team, kind))

    @staticmethod
    def opening_chance(v: SeatView, team: int, kind: int) -> float:
        """The chance that unopened ``team``, able to take a pile topped by ``kind``, also reaches
        its opening minimum with the take: an ace opens a 50 minimum by itself, a five rarely
        does (a flat half, as greedy assumes, fed aces and kings to an unopened side)."""
        points, need = 3 * VALUE[kind], v.minimum(team)
        if points >= need:
            return OPEN_ALONE
        return OPEN_NEAR if points + OPEN_NEAR_POINTS >= need else OPEN_FAR

    def race_feed(self, v: SeatView, team: int, kind: int) -> float:
        """Extra for a pile that would bring ``team``'s meld of this rank to :data:`FEED_MELD`
        cards or more while that side still lacks its canastas: a step to the first canasta."""
        if v.canastas(team) >= v.rules.going_out.canastas_to_go_out:
            return 0.0
        rank = RANK_OF[kind]
        m = v.melds(team)[rank]
        if m is None or m.is_canasta(v.rules):
            return 0.0
        brought = 1 + sum(1 for k in v.pile if IS_WILD[k] or RANK_OF[k] == rank)
        return self.feed_race if len(m.cards) + brought >= self.feed_meld else 0.0
