"""Compact storage of an event: the stream field ``w`` (and ``z``, written before it).

An event's data is the spectator's JSON (``p``) plus, for each seat that sees more (the cards
it drew, its own hand in a new deal), that seat's JSON. They are joined (record separator
``\x1e``, seat number and unit separator ``\x1f`` before each seat's part; JSON text never
holds a raw control character) and deflated with a preset dictionary of typical event JSON:
a move's data shrinks from ~120-235 bytes to ~25, a deal's five views from ~8 KB to ~2 KB.

Entries are now written with two fields: ``v`` (the version, plain, for readers that only
count) and ``w``: the envelope (type, status, phase, turn, ...) joined in front of the data
above and deflated with ``WDICT`` (envelopes, then ``ZDICT``): ~40-60 bytes a move, where the
plain envelope alone was ~95. Entries written before (``e`` plain + ``z``, or ``e`` + ``p`` +
``s<n>``) are still read: see :func:`service.games.render_event`.

``ZDICT`` and ``WDICT`` must never change: stored events are decoded with them. A better
dictionary needs a new field name and a decoder for both.
"""

from __future__ import annotations

import zlib

FIELD = "z"
ZDICT = (
    b'{"deal":{"hand":1,"dealer":3,"commitment":"e5aab6f1606e17d8add6955536df0ecd8c4b87c8ed5c3'
    b'f13c47ab32b7c03ebf8","view":{"phase":"draw","hand_no":1,"dealer":3,"turn":0,"to_act":0,"'
    b'moves":0,"players":4,"teams":[[0,2],[1,3]],"totals":[0,0],"hand_sizes":[11,11,11,11],"st'
    b'ock_size":63,"pile":{"top":"TS","size":1,"frozen_by":null,"locked_until_seat":null,"froz'
    b'en_for_teams":[0,1],"reasons":[]},"melds":[[],[]],"red_threes":[[],[]],"opened":[false,f'
    b'alse],"opening_minimums":[50,50],"penalties":[0,0],"commitment":"e5aab6f1606e17d8add6955'
    b'536df0ecd8c4b87c8ed5c3f13c47ab32b7c03ebf8","asked_go_out":false,"permission":null,"last_'
    b'hand":null,"result":null,"seat":1,"team":1,"hand":["AD","2H","4S","5H","6H","8S","8C","9'
    b'H","TD","TC","JC"],"legal":{"to_act":false,"may_draw":false,"may_take_pile":false,"take_'
    b'pile":[],"may_pass":false,"meld_ranks":[],"add_ranks":[],"may_ask_go_out":false,"must_an'
    b'swer_go_out":false,"may_go_out":false,"must_go_out":false,"discards":[],"melds":[],"go_o'
    b'ut":null,"opening_minimum":50,"actions":0}}}}{"hand_end":{"hand_end":1,"reason":"stock_e'
    b'xhausted","by":0,"scores":[{"team":0,"melds":210,"canasta_bonus":0,"red_threes":300,"goi'
    b'ng_out":0,"penalties":0,"in_hand":-110,"hand_total":400,"total":400},{"team":1,"melds":2'
    b'80,"canasta_bonus":0,"red_threes":100,"going_out":0,"penalties":0,"in_hand":-80,"hand_to'
    b'tal":300,"total":300}]}}"game_end":{"game_end":true,"totals":[1745,5470],"winner":1},"ph'
    b'ase":"over","turn":null,"to_act":null}}{"move":{"seat":3,"action":{"type":"add","rank":"'
    b'K","cards":["KS","KD","JK","JK"]},"move":221,"phase":"play","turn":3,"to_act":3}}{"move"'
    b':{"seat":1,"action":{"type":"take_pile","with":["6C","6C"]},"move":204,"red_threes_laid"'
    b':["3D"],"pile_taken":18,"phase":"play","turn":1,"to_act":1}}{"move":{"seat":0,"action":{'
    b'"type":"meld","melds":[["4S","4C","JK"]]},"move":2,"phase":"play","turn":0,"to_act":0}}{'
    b'"move":{"seat":0,"action":{"type":"draw"},"move":1,"drew":1,"phase":"play","turn":0,"to_'
    b'act":0}}{"move":{"seat":0,"action":{"type":"draw"},"move":1,"drew":1,"cards":["3S"],"pha'
    b'se":"play","turn":0,"to_act":0}}{"move":{"seat":0,"action":{"type":"discard","card":"3S"'
    b'},"move":3,"phase":"draw","turn":1,"to_act":1}}'
)
_WBITS = -12  # raw deflate, 4 KiB window (the dictionary is smaller)
_LEVEL = 6
_MEM_LEVEL = 5  # a cheap compressor: events are small
assert len(ZDICT) <= 4096

WFIELD = "w"
WDICT = (
    b'{"type":"created","status":"waiting","phase":null,"hand_no":0,"moves":0,"turn":null,"to_act":null}'
    b'{"type":"joined","status":"playing","phase":"draw","hand_no":1,"moves":0,"turn":0,"to_act":0}'
    b'{"type":"bot","status":"over","phase":"over","hand_no":3,"moves":1210,"turn":null,"to_act":null}'
    b'{"type":"move","status":"playing","phase":"answer","hand_no":2,"moves":412,"turn":1,"to_act":3}'
    b'{"type":"move","status":"playing","phase":"play","hand_no":1,"moves":57,"turn":2,"to_act":2}'
    b'{"type":"move","status":"playing","phase":"draw","hand_no":1,"moves":58,"turn":3,"to_act":3}'
    + ZDICT
)
_WWBITS = -13  # an 8 KiB window: the dictionary is ~4 KiB
assert len(WDICT) <= 8192


# Compressors with their dictionary already loaded (loading one costs more than deflating a
# move's event): each event deflates with a copy, which gives the same bytes.
_Z_PRIMED = zlib.compressobj(_LEVEL, zlib.DEFLATED, _WBITS, _MEM_LEVEL, zlib.Z_DEFAULT_STRATEGY, ZDICT)
_W_PRIMED = zlib.compressobj(_LEVEL, zlib.DEFLATED, _WWBITS, _MEM_LEVEL, zlib.Z_DEFAULT_STRATEGY, WDICT)


def encode(public: bytes, seats: dict[int, bytes]) -> bytes:
    """``public``: the spectator's JSON; ``seats``: seat -> JSON where it differs."""
    parts = [public]
    for seat, blob in seats.items():
        parts.append(b"%d\x1f" % seat + blob)
    c = _Z_PRIMED.copy()
    return c.compress(b"\x1e".join(parts)) + c.flush()


def encode_entry(envelope: bytes, public: bytes, seats: dict[int, bytes]) -> bytes:
    """The ``w`` field: the envelope's JSON, then what :func:`encode` joins."""
    parts = [envelope, public]
    for seat, blob in seats.items():
        parts.append(b"%d\x1f" % seat + blob)
    c = _W_PRIMED.copy()
    return c.compress(b"\x1e".join(parts)) + c.flush()


def decode_entry(blob: bytes) -> tuple[bytes, bytes, dict[int, bytes]]:
    """The envelope's JSON, the spectator's JSON and the seats' JSON of a ``w`` field."""
    d = zlib.decompressobj(_WWBITS, WDICT)
    raw = d.decompress(blob) + d.flush()
    envelope, public, *rest = raw.split(b"\x1e")
    return envelope, public, _seats(rest)


def _seats(parts: list[bytes]) -> dict[int, bytes]:
    seats = {}
    for part in parts:
        seat, _, data = part.partition(b"\x1f")
        seats[int(seat)] = data
    return seats


def decode(blob: bytes) -> tuple[bytes, dict[int, bytes]]:
    """The spectator's JSON and the seats' JSON, as given to :func:`encode`."""
    d = zlib.decompressobj(_WBITS, ZDICT)
    raw = d.decompress(blob) + d.flush()
    public, *rest = raw.split(b"\x1e")
    return public, _seats(rest)


def data_for(blob: bytes, seat: int | None) -> bytes:
    """The JSON that ``seat`` (None: a spectator) may read."""
    public, seats = decode(blob)
    if seat is not None and seat in seats:
        return seats[seat]
    return public
