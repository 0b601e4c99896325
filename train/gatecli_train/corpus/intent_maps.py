"""Intent -> catalog mapping tables for the intent-classification sources.

Why a table: every rule is written down once, the data card quotes it, and a reviewer can
change one line. A value is ``(events, mode, tags)``: ``mode`` is ``execute``, ``connect``
(account-bound, nothing connected), ``skip`` (label needs context we do not have) or ``mask``
(decision execute, events unknown). ``tags`` ``None`` means unknown.
"""

from __future__ import annotations

import re

Rule = tuple[list[str], str, list[str] | None]

SEARCH = "knowledge.web.search"

# HWU64 and SLURP share one ontology (scenario_intent).
HWU_SLURP: dict[str, Rule] = {
    "alarm_set": (["alarm.set"], "execute", []),
    "alarm_query": (["alarm.manage"], "execute", []),
    "alarm_remove": (["alarm.manage"], "execute", []),
    "audio_volume_up": (["device.volume.adjust"], "execute", []),
    "audio_volume_down": (["device.volume.adjust"], "execute", []),
    "audio_volume_mute": (["device.volume.adjust"], "execute", []),
    "audio_volume_other": (["device.volume.adjust"], "execute", []),
    "calendar_set": (["calendar.schedule.create"], "execute", ["private_data"]),
    "calendar_query": (["calendar.schedule.query"], "execute", ["private_data"]),
    "calendar_remove": (["calendar.schedule.delete"], "execute", ["private_data"]),
    "cooking_recipe": ([], "execute", []),
    "cooking_query": ([], "execute", []),
    "datetime_convert": ([], "execute", []),
    "datetime_query": ([], "execute", []),
    "email_query": (["message.email.query"], "execute", ["private_data"]),
    "email_sendemail": (["message.email.send"], "execute", ["private_data"]),
    "email_addcontact": ([], "skip", None),
    "email_querycontact": ([], "skip", None),
    "general_joke": ([], "execute", ["chitchat"]),
    "general_praise": ([], "execute", ["chitchat"]),
    "general_quirky": ([], "execute", ["chitchat"]),
    "general_greet": ([], "execute", ["chitchat"]),
    "general_commandstop": ([], "mask", None),
    "iot_cleaning": (["device.power.toggle"], "execute", []),
    "iot_coffee": (["device.power.toggle"], "execute", []),
    "iot_hue_lightchange": (["device.light.adjust"], "execute", []),
    "iot_hue_lightdim": (["device.light.adjust"], "execute", []),
    "iot_hue_lightoff": (["device.light.adjust"], "execute", []),
    "iot_hue_lighton": (["device.light.adjust"], "execute", []),
    "iot_hue_lightup": (["device.light.adjust"], "execute", []),
    "iot_wemo_on": (["device.power.toggle"], "execute", []),
    "iot_wemo_off": (["device.power.toggle"], "execute", []),
    "lists_createoradd": (["list.update"], "execute", []),
    "lists_remove": (["list.update"], "execute", []),
    "lists_query": ([], "execute", []),
    "music_settings": (["media.control"], "execute", []),
    "music_query": ([], "mask", None),
    "music_likeness": ([], "mask", None),
    "music_dislikeness": ([], "mask", None),
    "news_query": ([SEARCH], "execute", []),
    "play_audiobook": (["media.play"], "execute", []),
    "play_music": (["media.play"], "execute", []),
    "play_podcasts": (["media.play"], "execute", []),
    "play_radio": (["media.play"], "execute", []),
    "play_game": ([], "execute", []),
    "qa_currency": ([SEARCH], "execute", []),
    "qa_stock": ([SEARCH], "execute", []),
    "qa_factoid": ([SEARCH], "execute", []),
    "qa_definition": ([], "execute", []),
    "qa_maths": ([], "execute", []),
    "recommendation_events": ([SEARCH], "execute", []),
    "recommendation_locations": ([SEARCH], "execute", []),
    "recommendation_movies": ([SEARCH], "execute", []),
    "social_post": (["social.post"], "execute", ["private_data"]),
    "takeaway_order": (["order.food.place"], "execute", []),
    "transport_query": ([SEARCH], "execute", []),
    "transport_taxi": (["transport.book"], "execute", []),
    "transport_ticket": (["transport.book"], "execute", []),
    "transport_traffic": ([SEARCH], "execute", []),
    "weather_query": ([SEARCH], "execute", []),
}
# general_affirm/negate/confirm/dontcare/repeat/explain, social_query, takeaway_query: the
# label depends on the previous turn or on an account we cannot see -> not used (default skip).

# Annotation slot types that satisfy a catalog required slot (HWU64/SLURP brackets).
REQUIRED_SLOT_TYPES: dict[str, tuple[str, set[str]]] = {
    "alarm.set": ("time", {"time", "date", "timeofday"}),
    "calendar.schedule.create": ("time", {"time", "date", "timeofday"}),
    "message.email.send": ("person", {"person", "relation", "email_address"}),
    "order.food.place": ("item", {"food_type", "meal_type", "business_name"}),
    "transport.book": ("place", {"place_name"}),
}

_CLINC_PRIVATE = [
    "freeze_account",
    "routing",
    "pin_change",
    "bill_due",
    "pay_bill",
    "account_blocked",
    "min_payment",
    "bill_balance",
    "transfer",
    "order_checks",
    "balance",
    "spending_history",
    "transactions",
    "report_fraud",
    "expiration_date",
    "damaged_card",
    "report_lost_card",
    "card_declined",
    "credit_limit_change",
    "redeem_rewards",
    "credit_limit",
    "rewards_balance",
    "application_status",
    "credit_score",
    "new_card",
    "replacement_card_duration",
    "interest_rate",
    "pto_request_status",
    "pto_balance",
    "pto_request",
    "pto_used",
    "payday",
    "income",
    "w2",
    "direct_deposit",
    "insurance",
    "insurance_change",
    "rollover_401k",
    "order_status",
    "last_maintenance",
]
_CLINC_CHITCHAT = [
    "greeting",
    "thank_you",
    "tell_joke",
    "fun_fact",
    "meaning_of_life",
    "who_made_you",
    "where_are_you_from",
    "what_are_your_hobbies",
    "do_you_have_pets",
    "how_old_are_you",
    "are_you_a_bot",
    "what_is_your_name",
    "who_do_you_work_for",
]
CLINC: dict[str, Rule] = {
    "alarm": (["alarm.set"], "execute", []),
    "timer": (["alarm.set"], "execute", []),
    "reminder": (["calendar.schedule.create"], "execute", ["private_data"]),
    "schedule_meeting": (["calendar.schedule.create"], "execute", ["private_data"]),
    "calendar": (["calendar.schedule.query"], "execute", ["private_data"]),
    "meeting_schedule": (["calendar.schedule.query"], "execute", ["private_data"]),
    "weather": ([SEARCH], "execute", []),
    "traffic": ([SEARCH], "execute", []),
    "exchange_rate": ([SEARCH], "execute", []),
    "flight_status": ([SEARCH], "execute", []),
    "travel_alert": ([SEARCH], "execute", []),
    "restaurant_suggestion": ([SEARCH], "execute", []),
    "restaurant_reviews": ([SEARCH], "execute", []),
    "play_music": (["media.play"], "execute", []),
    "next_song": (["media.control"], "execute", []),
    "change_volume": (["device.volume.adjust"], "execute", []),
    "shopping_list_update": (["list.update"], "execute", []),
    "todo_list_update": (["list.update"], "execute", []),
    "uber": (["transport.book"], "execute", []),
    "book_flight": (["transport.book"], "execute", []),
    "goodbye": (["session.terminate"], "execute", ["chitchat"]),
    "what_can_i_ask_you": ([], "execute", ["capability_question"]),
    "smart_home": ([], "mask", None),
    "calendar_update": ([], "mask", None),
    "reminder_update": ([], "mask", None),
    "order": ([], "mask", None),
    "oos": ([], "execute", None),
    **{k: ([], "execute", ["chitchat"]) for k in _CLINC_CHITCHAT},
    **{k: ([], "connect", ["private_data"]) for k in _CLINC_PRIVATE},
}
CLINC_SKIP = {"yes", "no", "maybe", "cancel", "repeat"}  # answers to an unseen previous turn

SNIPS: dict[str, Rule] = {
    "GetWeather": ([SEARCH], "execute", []),
    "PlayMusic": (["media.play"], "execute", []),
    "AddToPlaylist": ([], "execute", []),
    "BookRestaurant": ([], "execute", []),
    "RateBook": ([], "execute", []),
    "SearchCreativeWork": ([SEARCH], "execute", []),
    "SearchScreeningEvent": ([SEARCH], "execute", []),
}

XSID: dict[str, Rule] = {
    "weather/find": ([SEARCH], "execute", []),
    "alarm/set_alarm": (["alarm.set"], "execute", []),
    "alarm/cancel_alarm": (["alarm.manage"], "execute", []),
    "alarm/show_alarms": (["alarm.manage"], "execute", []),
    "alarm/snooze_alarm": (["alarm.manage"], "execute", []),
    "alarm/time_left_on_alarm": (["alarm.manage"], "execute", []),
    "reminder/set_reminder": (["calendar.schedule.create"], "execute", ["private_data"]),
    "reminder/cancel_reminder": (["calendar.schedule.delete"], "execute", ["private_data"]),
    "reminder/show_reminders": (["calendar.schedule.query"], "execute", ["private_data"]),
    **{k: v for k, v in SNIPS.items()},
}

# Sources without slot annotations (CLINC): a conservative surface test for a time or place.
TIME_RE = re.compile(
    r"\d|\b(am|pm|noon|midnight|morning|afternoon|evening|tonight|tomorrow|today|minutes?|"
    r"hours?|seconds?|monday|tuesday|wednesday|thursday|friday|saturday|sunday|week|month|"
    r"o'?clock|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|half|quarter)\b",
    re.I,
)
PLACE_RE = re.compile(r"\b(to|from|for)\s+(the\s+)?[a-z0-9]", re.I)
