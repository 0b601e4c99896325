"""Dialogue sources: Schema-Guided Dialogue (en) and CrossWOZ (zh).

What the *next system act* does tells us about the user turn: a system REQUEST of a slot means
the turn lacked it (ask); an OFFER/CONFIRM/INFORM means it had enough (execute). A turn that
*answers* a REQUEST (it informs a requested slot) and is followed by OFFER/CONFIRM/INFORM
completes the frame, so it carries the active intent's event: "at 6:15" after "what time?" is
``alarm.set``. Closings (thanks, "that's all", goodbye) are execute, chit-chat, and
``session.terminate`` when they end the conversation. Turns keep up to four earlier turns as
``conversation_context``; a dialogue shares one group, except closings and greetings, grouped
by their text so that thousands of dialogues saying "thanks" do not fuse into one split.

A hashed fifth of each *test*-split dialogue file (:func:`heldout_dialogue`) is never loaded
for training: the ``context`` eval suite reads those dialogues instead (:func:`sgd_heldout`,
:func:`crosswoz_heldout`).
"""

from __future__ import annotations

import hashlib
import json
import random
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from gatecli_train.corpus.records import make_record, normalise

SEARCH = "knowledge.web.search"
SGD_SLOT_MAP: dict[str, str] = {}
for _slot, _names in {
    "time": "time date departure_date check_in_date check_out_date pickup_date return_date "
    "leaving_date dropoff_date pickup_time appointment_time appointment_date visit_date "
    "new_alarm_time start_date end_date event_time show_time journey_start_time leaving_time "
    "date_of_journey",
    "place": "location origin_city destination_city area destination city_of_event city "
    "from_location to_location pickup_city pickup_location origin from_city to_city "
    "destination_airport origin_airport address",
    "amount": "number_of_beds number_of_riders number_of_seats number_of_days stay_length "
    "travelers transfer_amount number_of_tickets number_of_adults number_of_rooms amount "
    "number_of_baths price_range",
    "person": "recipient_name recipient_account_name receiver contact_name stylist_name "
    "doctor_name therapist_name dentist_name",
    "item": "category genre type cuisine event_type car_type subcategory seating_class",
    "target": "restaurant_name movie_name event_name song_name title attraction_name "
    "hotel_name property_name account_type artist album",
}.items():
    for _n in _names.split():
        SGD_SLOT_MAP[_n] = _slot

SGD_EVENTS: dict[str, list[str]] = {
    "GetWeather": [SEARCH],
    "LookupSong": [SEARCH],
    "FindMovies": [SEARCH],
    "FindRestaurants": [SEARCH],
    "FindAttractions": [SEARCH],
    "FindEvents": [SEARCH],
    "SearchHotel": [SEARCH],
    "SearchOnewayFlight": [SEARCH],
    "SearchRoundtripFlights": [SEARCH],
    "FindBus": [SEARCH],
    "FindTrains": [SEARCH],
    "GetTimesForMovie": [SEARCH],
    "FindProvider": [SEARCH],
    "FindApartment": [SEARCH],
    "FindHomeByArea": [SEARCH],
    "GetCarsAvailable": [SEARCH],
    "SearchHouse": [SEARCH],
    "PlaySong": ["media.play"],
    "PlayMovie": ["media.play"],
    "PlayMedia": ["media.play"],
    "AddAlarm": ["alarm.set"],
    "GetAlarms": ["alarm.manage"],
    "AddEvent": ["calendar.schedule.create"],
    "GetEvents": ["calendar.schedule.query"],
    "GetAvailableTime": ["calendar.schedule.query"],
    "GetRide": ["transport.book"],
    "BuyBusTicket": ["transport.book"],
    "ReserveOnewayFlight": ["transport.book"],
    "ReserveRoundtripFlights": ["transport.book"],
    "GetTrainTickets": ["transport.book"],
    # bookings with no catalog event: execute, no event
    **{
        k: []
        for k in [
            "ReserveRestaurant",
            "ReserveHotel",
            "BookAppointment",
            "ScheduleVisit",
            "RentMovie",
            "ReserveCar",
            "BuyEventTickets",
            "BookHouse",
        ]
    },
}
SGD_SKIP_INTENTS = {"TransferMoney", "CheckBalance", "MakePayment", "RequestPayment", "NONE"}
EXECUTE_ACTS = {"OFFER", "CONFIRM", "INFORM", "INFORM_COUNT"}
CLOSING_ACTS = {"THANK_YOU", "GOODBYE", "NEGATE"}
TERMINATE = "session.terminate"
HELDOUT_SHARE = 5  # one test-split dialogue in five is kept for the context suite


def heldout_dialogue(source: str, split: str, did: str) -> bool:
    """A test-split dialogue that training never reads (the context suite's held-out set).

    Example:
        >>> heldout_dialogue("sgd_subset", "dev", "1_00000")
        False
    """
    digest = hashlib.sha256(f"{source}:{did}".encode()).hexdigest()
    return split == "test" and int(digest[:8], 16) % HELDOUT_SHARE == 0


def _acts(turn: dict | None, act: str | None = None) -> set[str]:
    """A turn's act names, or with ``act`` the slots of that act."""
    if turn is None:
        return set()
    acts = [a for fr in turn["frames"] for a in fr["actions"]]
    return {a["act"] for a in acts} if act is None else {a["slot"] for a in acts if a["act"] == act}


def mapped_slots(names: list[str | None]) -> list[str] | None:
    """Our slot names for requested slots; None (masked) when one of them has no mapping."""
    out = [n for n in names if n is not None]
    return None if len(out) < len(names) else sorted(set(out))


def context_turns(turns: list[tuple[str, str]]) -> list[dict[str, str]]:
    return [{"role": r, "content": c} for r, c in turns[-4:]]


def sample(items: list, cap: int | None, seed: str) -> list:
    if cap is None or len(items) <= cap:
        return items
    return sorted(random.Random(seed).sample(items, cap), key=lambda r: r["id"])


def sgd_required(schema_path: Path) -> dict[tuple[str, str], list[str]]:
    """(service, intent) -> the schema's required slots (what must be known to call the API)."""
    out: dict[tuple[str, str], list[str]] = {}
    for svc in json.loads(schema_path.read_text(encoding="utf-8")):
        for it in svc["intents"]:
            out[(svc["service_name"], it["name"])] = list(it["required_slots"])
    return out


def _unfilled(turn: dict, required: dict[tuple[str, str], list[str]]) -> set[str]:
    """Our slot names for the active intent's required slots that no frame has filled yet.

    Only slots that map to one of our names count, and a name is missing only when no filled
    slot of any frame maps to it (SGD carries values between services): so the added slots are
    the unambiguous ones (hand-check 2026, pattern 8).
    """
    frame = turn["frames"][0]
    need = required.get((frame["service"], frame["state"]["active_intent"]), [])
    filled = {SGD_SLOT_MAP.get(k) for fr in turn["frames"] for k in fr["state"]["slot_values"]}
    missing = {SGD_SLOT_MAP.get(s) for s in need if s not in frame["state"]["slot_values"]}
    return {m for m in missing if m is not None and m not in filled}


def _sgd_dialogues(raw: Path, heldout: bool) -> Iterator[tuple[str, dict, dict]]:
    """(split, dialogue, required slots) for training (heldout=False) or the context suite."""
    for split in ("dev", "test"):
        required = sgd_required(raw / "sgd_subset" / split / "schema.json")
        for f in sorted((raw / "sgd_subset" / split).glob("dialogues_*.json")):
            for dl in json.loads(f.read_text(encoding="utf-8")):
                if heldout_dialogue("sgd_subset", split, dl["dialogue_id"]) == heldout:
                    yield split, dl, required


def sgd_turns(raw: Path, heldout: bool = False) -> dict[str, list[dict[str, Any]]]:
    """Every labelled SGD user turn, by kind: ask, exec, answer (to a REQUEST), closing."""
    out: dict[str, list[dict]] = {"ask": [], "exec": [], "answer": [], "closing": []}
    for split, dl, required in _sgd_dialogues(raw, heldout):
        turns = dl["turns"]
        hist: list[tuple[str, str]] = []
        for i, t in enumerate(turns):
            role = "user" if t["speaker"] == "USER" else "assistant"
            if role == "user":
                prev = turns[i - 1] if i else None
                nxt = turns[i + 1] if i + 1 < len(turns) else None
                did = dl["dialogue_id"]
                rec = _sgd_closing(did, split, i, t, nxt, hist)
                kind = "closing"
                if rec is None and nxt is not None:
                    rec = _sgd_turn(did, split, i, t, nxt, hist, required, prev)
                    kind = "answer" if rec and "answers REQUEST" in rec["note"] else "exec"
                    if rec and kind == "exec" and rec["labels"]["decision"] == "ask":
                        kind = "ask"
                if rec is not None:
                    out[kind].append(rec)
            hist.append((role, t["utterance"]))
    return out


def load_sgd(
    raw: Path, cap: int | None = 4000, answers: int | None = 1000, closings: int | None = 300
) -> list[dict[str, Any]]:
    """SGD training turns: ``cap`` split evenly between ask and execute turns, plus answers
    to a system REQUEST and closings (held-out dialogues are never read)."""
    kinds = sgd_turns(raw)
    half = None if cap is None else cap // 2
    return (
        sample(kinds["ask"], half, "sgd:ask")
        + sample(kinds["exec"], half, "sgd:exec")
        + sample(kinds["answer"], answers, "sgd:answer")
        + sample(per_text(kinds["closing"], 3), closings, "sgd:closing")
    )


def sgd_heldout(raw: Path) -> list[dict[str, Any]]:
    """Turns with context from the held-out SGD test dialogues (the ``context`` suite)."""
    kinds = sgd_turns(raw, heldout=True)
    recs = [r for k in ("ask", "exec", "answer", "closing") for r in kinds[k]]
    return [r for r in recs if r["input"].get("conversation_context")]


def per_text(recs: list[dict], n: int) -> list[dict]:
    """At most ``n`` records per normalised message (SGD says "Thank you" hundreds of times)."""
    seen: dict[str, int] = {}
    out = []
    for r in sorted(recs, key=lambda r: r["id"]):
        k = normalise(r["input"]["user_message"])
        seen[k] = seen.get(k, 0) + 1
        if seen[k] <= n:
            out.append(r)
    return out


def _sgd_closing(
    did: str, split: str, i: int, turn: dict, nxt: dict | None, hist: list
) -> dict | None:
    """Thanks / "that's all" / goodbye: execute, chit-chat; terminate when it ends the talk.

    A bare thanks that the system answers with "anything else?" keeps the session ([]);
    a thanks the system answers with goodbye is not an explicit goodbye: events masked.
    """
    acts = _acts(turn)
    if not acts or not acts <= CLOSING_ACTS or not acts & {"THANK_YOU", "GOODBYE"}:
        return None
    after = _acts(nxt)
    if "GOODBYE" in acts or ("NEGATE" in acts and "GOODBYE" in after):
        events: list[str] | None = [TERMINATE]
    elif "REQ_MORE" in after:
        events = []
    else:
        events = None
    return make_record(
        rid=f"sgd_subset:{split}:{did}.{i}",
        source="sgd_subset",
        lang="en",
        message=turn["utterance"],
        group=f"sgd:text:{normalise(turn['utterance'])}",
        context=context_turns(hist) or None,
        decision="execute",
        events=events,
        tags=["chitchat"],
        slots=[],
        note=f"SGD closing: user acts {sorted(acts)}, next system acts {sorted(after)} -> "
        f"execute {events}",
    )


def _sgd_turn(
    did: str,
    split: str,
    i: int,
    turn: dict,
    nxt: dict,
    hist: list,
    required: dict[tuple[str, str], list[str]] | None = None,
    prev: dict | None = None,
) -> dict | None:
    frame = turn["frames"][0]
    intent = frame["state"]["active_intent"]
    if intent in SGD_SKIP_INTENTS or intent not in SGD_EVENTS:
        return None
    acts = [a for fr in nxt["frames"] for a in fr["actions"]]
    names = {a["act"] for a in acts}
    # an answer: the previous system turn REQUESTed a slot that this turn INFORMs
    answered = sorted(_acts(prev, "REQUEST") & _acts(turn, "INFORM"))
    answer_note = f"; answers REQUEST {answered}" if answered else ""
    base = dict(
        rid=f"sgd_subset:{split}:{did}.{i}",
        source="sgd_subset",
        lang="en",
        message=turn["utterance"],
        group=f"sgd:{did}",
        context=context_turns(hist) or None,
    )
    if "REQUEST" in names:
        req = [a["slot"] for a in acts if a["act"] == "REQUEST"]
        slots = mapped_slots([SGD_SLOT_MAP.get(s) for s in req])
        note = f"SGD {intent}: next system act REQUEST {req} -> ask{answer_note}"
        if slots is not None:
            extra = sorted(_unfilled(turn, required or {}) - set(slots))
            if extra:
                slots = sorted(set(slots) | set(extra))
                note += f"; schema required slots not yet filled: {extra}"
        return make_record(
            **base,
            decision="ask",
            events=[],
            tags=None,
            slots=slots,
            note=note,
        )
    if names & EXECUTE_ACTS:
        user_acts = {a["act"] for fr in turn["frames"] for a in fr["actions"]}
        # events on the turn that states the intent and on an answer that completes the
        # frame (the system goes on to OFFER/CONFIRM/INFORM); other later turns (questions
        # about an offer) are masked: the intent is the dialogue's, not necessarily the turn's
        events = SGD_EVENTS[intent] if "INFORM_INTENT" in user_acts or answered else None
        acc = (
            ["google_calendar"] if intent in ("AddEvent", "GetEvents", "GetAvailableTime") else None
        )
        return make_record(
            **base,
            decision="execute",
            events=events,
            tags=None,
            slots=[],
            accounts=acc,
            note=f"SGD {intent}: next system act {sorted(names)} -> execute{answer_note}",
        )
    return None


CW_DOMAIN_EVENTS = {
    "景点": [SEARCH],
    "餐馆": [SEARCH],
    "酒店": [SEARCH],
    "地铁": [SEARCH],
    "出租": ["transport.book"],
}


def load_crosswoz(raw: Path, cap: int | None = 4000) -> list[dict[str, Any]]:
    """CrossWOZ user turns. Its systems never REQUEST a slot (checked: 0 system Request acts
    in val or test), so every task turn is execute; greetings/thanks are chit-chat, bye ends
    the session. Held-out test dialogues are never read.
    """
    return sample(crosswoz_turns(raw), cap, "crosswoz")


def crosswoz_heldout(raw: Path) -> list[dict[str, Any]]:
    """Turns with context from the held-out CrossWOZ test dialogues (the ``context`` suite)."""
    return [r for r in crosswoz_turns(raw, True) if r["input"].get("conversation_context")]


def crosswoz_turns(raw: Path, heldout: bool = False) -> list[dict[str, Any]]:
    out: list[dict] = []
    for split in ("val", "test"):
        z = zipfile.ZipFile(raw / f"crosswoz/crosswoz/{split}.json.zip")
        data = json.loads(z.read(z.namelist()[0]))
        for did in sorted(data, key=lambda k: int(k) if k.isdigit() else 0):
            if heldout_dialogue("crosswoz", split, did) != heldout:
                continue
            hist: list[tuple[str, str]] = []
            for i, m in enumerate(data[did]["messages"]):
                role = "user" if m["role"] == "usr" else "assistant"
                if role == "user":
                    rec = _cw_turn(did, split, i, m, hist)
                    if rec is not None:
                        out.append(rec)
                hist.append((role, m["content"]))
    return out


def _cw_turn(did: str, split: str, i: int, m: dict, hist: list) -> dict | None:
    acts = m["dialog_act"]
    kinds = {a[0] for a in acts}
    base = dict(
        rid=f"crosswoz:{split}:{did}.{i}",
        source="crosswoz",
        lang="zh",
        message=m["content"],
        group=f"crosswoz:{split}:{did}",
        context=context_turns(hist) or None,
    )
    if kinds == {"General"}:
        gen = {a[1] for a in acts}
        events = [TERMINATE] if "bye" in gen else []
        base["group"] = f"crosswoz:text:{normalise(m['content'])}"  # 谢谢 would fuse dialogues
        return make_record(
            **base,
            decision="execute",
            events=events,
            tags=["chitchat"],
            slots=[],
            note=f"CrossWOZ General {sorted(gen)} -> {events}",
        )
    domains = {a[1] for a in acts if a[0] in ("Inform", "Request", "Select")}
    if not domains or not domains <= set(CW_DOMAIN_EVENTS):
        return None
    events = sorted({e for d in domains for e in CW_DOMAIN_EVENTS[d]})
    return make_record(
        **base,
        decision="execute",
        events=events,
        tags=None,
        slots=[],
        note=f"CrossWOZ user acts {sorted(kinds)} on {sorted(domains)} -> execute",
    )
