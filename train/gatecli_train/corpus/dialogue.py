"""Dialogue sources: Schema-Guided Dialogue (en) and CrossWOZ (zh).

What the *next system act* does tells us about the user turn: a system REQUEST of a slot means
the turn lacked it (ask); an OFFER/CONFIRM/INFORM means it had enough (execute). Turns keep up
to four earlier turns as ``conversation_context``; a whole dialogue shares one group.
"""

from __future__ import annotations

import json
import random
import zipfile
from pathlib import Path
from typing import Any

from gatecli_train.corpus.records import make_record

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


def _ctx(turns: list[tuple[str, str]]) -> list[dict[str, str]]:
    return [{"role": r, "content": c} for r, c in turns[-4:]]


def _sample(items: list, cap: int | None, seed: str) -> list:
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


def load_sgd(raw: Path, cap: int | None = 4000) -> list[dict[str, Any]]:
    asks: list[dict] = []
    execs: list[dict] = []
    for split in ("dev", "test"):
        required = sgd_required(raw / "sgd_subset" / split / "schema.json")
        for f in sorted((raw / "sgd_subset" / split).glob("dialogues_*.json")):
            for dl in json.loads(f.read_text(encoding="utf-8")):
                turns = dl["turns"]
                hist: list[tuple[str, str]] = []
                for i, t in enumerate(turns):
                    role = "user" if t["speaker"] == "USER" else "assistant"
                    if role == "user" and i + 1 < len(turns):
                        rec = _sgd_turn(
                            dl["dialogue_id"], split, i, t, turns[i + 1], hist, required
                        )
                        if rec is not None:
                            (asks if rec["labels"]["decision"] == "ask" else execs).append(rec)
                    hist.append((role, t["utterance"]))
    half = None if cap is None else cap // 2
    return _sample(asks, half, "sgd:ask") + _sample(execs, half, "sgd:exec")


def _sgd_turn(
    did: str,
    split: str,
    i: int,
    turn: dict,
    nxt: dict,
    hist: list,
    required: dict[tuple[str, str], list[str]] | None = None,
) -> dict | None:
    frame = turn["frames"][0]
    intent = frame["state"]["active_intent"]
    if intent in SGD_SKIP_INTENTS or intent not in SGD_EVENTS:
        return None
    acts = [a for fr in nxt["frames"] for a in fr["actions"]]
    names = {a["act"] for a in acts}
    base = dict(
        rid=f"sgd_subset:{split}:{did}.{i}",
        source="sgd_subset",
        lang="en",
        message=turn["utterance"],
        group=f"sgd:{did}",
        context=_ctx(hist) or None,
    )
    if "REQUEST" in names:
        req = [a["slot"] for a in acts if a["act"] == "REQUEST"]
        mapped = [SGD_SLOT_MAP.get(s) for s in req]
        slots = None if None in mapped else sorted(set(mapped))
        note = f"SGD {intent}: next system act REQUEST {req} -> ask"
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
        # events only on the turn that states the intent; later turns (answers, questions
        # about an offer) are masked: the intent is the dialogue's, not necessarily the turn's
        events = SGD_EVENTS[intent] if "INFORM_INTENT" in user_acts else None
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
            note=f"SGD {intent}: next system act {sorted(names)} -> execute",
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
    in val), so every task turn is execute; greetings/thanks are chit-chat, bye ends the session.
    """
    out: list[dict] = []
    for split in ("val", "test"):
        z = zipfile.ZipFile(raw / f"crosswoz/crosswoz/{split}.json.zip")
        data = json.loads(z.read(z.namelist()[0]))
        for did in sorted(data, key=lambda k: int(k) if k.isdigit() else 0):
            hist: list[tuple[str, str]] = []
            for i, m in enumerate(data[did]["messages"]):
                role = "user" if m["role"] == "usr" else "assistant"
                if role == "user":
                    rec = _cw_turn(did, split, i, m, hist)
                    if rec is not None:
                        out.append(rec)
                hist.append((role, m["content"]))
    return _sample(out, cap, "crosswoz")


def _cw_turn(did: str, split: str, i: int, m: dict, hist: list) -> dict | None:
    acts = m["dialog_act"]
    kinds = {a[0] for a in acts}
    base = dict(
        rid=f"crosswoz:{split}:{did}.{i}",
        source="crosswoz",
        lang="zh",
        message=m["content"],
        group=f"crosswoz:{split}:{did}",
        context=_ctx(hist) or None,
    )
    if kinds == {"General"}:
        gen = {a[1] for a in acts}
        events = ["session.terminate"] if "bye" in gen else []
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
