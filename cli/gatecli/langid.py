"""Language of a user message (en | zh | fr | other) in microseconds, on the hot path.

A library detector costs ~0.3 ms a call (shared/notes/libraries.md), a sizeable share of a
2 ms turn; the gate only needs to tell its three languages apart (to pick the template
language of a clarifying question and to slice evaluation), so a script count plus French
and English stop words does. Code-switched text goes to the language that carries more of
it: Han characters are weighed against Latin words. Scripts we do not serve (kana, Hangul,
Cyrillic, Arabic, ...) and Latin text with clear non-French diacritics give ``other``.
Only the first :data:`MAX_CHARS` characters are read.
"""

from __future__ import annotations

import re

MAX_CHARS = 400

_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ebef]")
_KANA_HANGUL = re.compile(r"[\u3040-\u30ff\u31f0-\u31ff\u1100-\u11ff\uac00-\ud7af]")
# Letters of scripts other than Latin and CJK (Greek .. Ethiopic, Thai, Devanagari etc.).
_OTHER_SCRIPT = re.compile(r"[\u0370-\u03ff\u0400-\u052f\u0590-\u08ff\u0900-\u0dff\u0e00-\u0eff]")
_WORD = re.compile(r"[a-zà-öø-ÿœæ]+")
_FR_CHARS = re.compile(r"[àâçéèêëîïôûùœ]")
_NON_FR_LATIN = re.compile(r"[ñ¿¡ßäöåøãõąćęłńśźżčďěňřšťůžşğı]")

# Frequent words that are unambiguous between the two languages (no "on", "me", "a", "en").
_FR_TEXT = """
    le la les des du un une et est je tu il elle nous vous ils elles pour pas que qui
    dans sur avec mon ma mes ton ta tes son sa ses ce cette ces au aux ne moi toi lui
    leur mais ou où donc très plus peux peut veux voudrais fais faire mets met demain
    aujourd hui quel quelle quels quelles comment pourquoi quand combien merci bonjour
    bonsoir salut plaît svp rappelle allume éteins monte baisse envoie réserve commande
    réveil musique temps heure heures avez êtes suis sont été chez lumière
"""
_FR_WORDS = frozenset(_FR_TEXT.split())
_EN_TEXT = """
    the is are was were to of and in for my you your it its what how why when where who
    please can could would should will with this that these those be do does did have
    has had i at from about set turn play send book order remind tell show find get
    give make want need tomorrow today weather music lights alarm up down off some any
    there here just not no yes hi hello thanks thank goodbye bye
"""
_EN_WORDS = frozenset(_EN_TEXT.split())
# Elisions: l'heure, j'ai, qu'il, n'est, d'accord, c'est, s'il.
_FR_ELISION = re.compile(r"\b(?:l|j|qu|n|d|c|s|m|t)['’][a-zà-ÿ]")


def detect(text: str) -> str:
    """Return ``"en"``, ``"zh"``, ``"fr"`` or ``"other"`` for a short user message.

    Latin text with no signal either way (``"ok"``, ``"90"``) is ``en``; text without
    any letter at all is ``other``.

    Example:
        >>> detect("声音调到90"), detect("monte le son"), detect("turn it up")
        ('zh', 'fr', 'en')
    """
    t = text[:MAX_CHARS].lower()
    han = len(_HAN.findall(t))
    words = _WORD.findall(t)
    if han and han >= len(words):
        return "zh" if len(_KANA_HANGUL.findall(t)) * 4 < han else "other"
    if len(_KANA_HANGUL.findall(t)) + len(_OTHER_SCRIPT.findall(t)) > sum(map(len, words)):
        return "other"
    if not words:
        return "zh" if han else "other"
    fr = en = 0
    for w in words:
        if w in _FR_WORDS:
            fr += 1
        elif w in _EN_WORDS:
            en += 1
    if fr == en == 0 and _NON_FR_LATIN.search(t):
        return "other"
    fr += len(_FR_CHARS.findall(t)) + 2 * len(_FR_ELISION.findall(t))
    return "fr" if fr > en else "en"
