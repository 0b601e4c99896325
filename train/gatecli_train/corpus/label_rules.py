"""Text checks that refine an intent-map rule for one utterance (hand-check 2026 fixes).

Why: an intent label says what a dataset's annotators filed a sentence under, not what the
sentence asks for. "i'll be seeing my therapist on thursday" is filed under calendar_set but is
a statement; "i have a complaint" is filed under social_post but posts nothing. Each check below
is one documented rule (data card, "Text refinements"); :func:`refine` applies them in order.
"""

from __future__ import annotations

import re

from gatecli_train.corpus.intent_maps import Rule

# 5. anaphora: the referent lives in an earlier turn that single-utterance sources do not have.
_ANAPHORA_EN = re.compile(
    r"\b(what else|that one|this one|the other one|the same (one|thing)|(do|play|say) (it|that) "
    r"again|that again|it again|the last one|the previous one|the one before|that thing)\b",
    re.I,
)
_THE_LIST = re.compile(r"\b(on|in|to|from|read|check) the list\b", re.I)
_ANAPHORA_ZH = re.compile(r"再来一[次遍]|那个就行|就那个|同一个|刚才那")
# 4. scheduling cue: without one, a calendar_set/reminder sentence is a statement.
_SCHEDULE_EN = re.compile(
    r"\b(remind\w*|remember|add|schedule|set|setup|book|put|create|make|note|arrange|plan|"
    r"organi[sz]e|save|mark|enter|block|reserve|alert|notify|pencil|let me know|tell me|"
    r"don'?t (let me )?forget|calendar|invite|send)\b",
    re.I,
)
_SCHEDULE_ZH = re.compile(
    r"提醒|安排|添加|加[个一到入]|设置|设定|设[个一]|定[个一]|创建|新建|记[下住得一]|叫我|预约|日程|日历"
)
# 2. social_post really posts only with a post/tweet/share word or a network name.
_POST = re.compile(
    r"\b(post|posts|posting|tweet|tweets|tweeting|retweet|share|sharing|status|facebook|fb|"
    r"twitter|instagram|insta|linkedin|snapchat|whatsapp|tumblr|reddit|pinterest|tiktok|"
    r"social media|social network|timeline|wall)\b",
    re.I,
)
# 3. lists_query utterances that change the list.
_LIST_EDIT = re.compile(r"\b(add|adding|put|remove|delete|take off|cross off|insert)\b", re.I)
# 3. general_quirky: chit-chat only when it is plainly about the assistant or the user's mood.
_SMALL_TALK = re.compile(
    r"\b(you|your|yourself|olly|my day|bad day|cheer me up|bored|lonely|sad|happy|love|"
    r"how are|good morning|good night|hello|hi|hey)\b",
    re.I,
)
_SEARCHY = re.compile(
    r"\b(find|search|look up|lookup|show|news|deals?|price|buy|who won|details|know more|"
    r"navigate|tell me about|information|info|what is|what are|where)\b",
    re.I,
)
# 7. qa_factoid: a search only for a fact that changes ("when is the next lakers game"); "how
# many legs does a dog have" needs no tool, and HWU64/SLURP file both under qa_factoid.
_FRESH = re.compile(
    r"\b(today|tonight|tomorrow|yesterday|last night|right now|now|currently|current|latest|"
    r"newest|most recent|recent|recently|next|upcoming|this (week|weekend|month|year|season)|"
    r"going to|on tour|net worth|temperature|weather|sunset|sunrise|score|scores|stock|price)\b",
    re.I,
)
# 6. message.email.send: a content/topic cue, or any slot besides recipient/folder.
_CONTENT = re.compile(
    r"\b(about|saying|say|says|tell|telling|let \w+ know|that|regarding|asking|ask|thank|"
    r"thanks|wish\w*|invite|inviting|congratulat\w*|subject|with|re)\b|:",
    re.I,
)
_NOT_CONTENT_SLOTS = {"person", "relation", "email_address", "email_folder", "app_name"}
_PERSON_SLOTS = {"person", "relation", "email_address"}


def anaphoric(text: str, intent: str, lang: str) -> bool:
    """A single utterance that points at something only an earlier turn names.

    Example:
        >>> anaphoric("what else is on the list", "calendar_query", "en")
        True
        >>> anaphoric("what's on my shopping list", "lists_query", "en")
        False
    """
    if lang == "zh":
        return bool(_ANAPHORA_ZH.search(text))
    if _ANAPHORA_EN.search(text):
        return True
    return not intent.startswith("lists_") and bool(_THE_LIST.search(text))


def refine(
    intent: str, text: str, types: set[str] | None, rule: Rule, lang: str = "en"
) -> tuple[Rule | None, str]:
    """Adjust ``rule`` for this utterance; ``None`` drops the record. Returns (rule, why).

    ``types`` are the bracket slot types (None for sources without slot annotation).

    Example:
        >>> refine("social_post", "i have a complaint", set(), (["social.post"], "execute", []))
        (([], 'execute', ['complaint']), 'no post word or network: complaint')
        >>> refine("qa_factoid", "how many legs does a dog have", set(), (["x"], "execute", []))
        (([], 'mask', []), 'qa_factoid without a fresh-fact cue: events masked')
    """
    events, mode, tags = rule
    if mode == "skip":
        return rule, ""
    if anaphoric(text, intent, lang):
        return None, "anaphoric without context: dropped"
    if intent == "social_post" and not _POST.search(text):
        return ([], "execute", ["complaint"]), "no post word or network: complaint"
    if intent == "lists_query" and _LIST_EDIT.search(text):
        return (["list.update"], "execute", []), "lists_query that edits the list -> list.update"
    if intent == "general_quirky":
        if _SMALL_TALK.search(text) and not _SEARCHY.search(text):
            return rule, ""
        return ([], "mask", None), "general_quirky not plainly small talk: events masked"
    if intent == "qa_factoid" and not _FRESH.search(text):
        return ([], "mask", tags), "qa_factoid without a fresh-fact cue: events masked"
    if intent == "qa_definition" and types is not None and "definition_word" not in types:
        return ([], "ask_content", []), "qa_definition without a word: ask content"
    if "calendar.schedule.create" in events:
        cue = _SCHEDULE_ZH if lang == "zh" else _SCHEDULE_EN
        if not cue.search(text):
            return ([], "execute", ["statement"]), "no scheduling verb: statement"
    if (
        "message.email.send" in events
        and types is not None
        and types & _PERSON_SLOTS
        and not (types - _NOT_CONTENT_SLOTS)
        and not _CONTENT.search(text)
    ):
        return ([], "ask_content", tags), "email with a recipient but no content: ask content"
    return rule, ""
