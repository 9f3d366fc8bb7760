"""Named analyzers: text -> list of tokens.

An analyzer is declared once in :data:`ANALYZERS`; retrievers, the CLI and the diagnosis all look
names up there, so the list of valid names is never typed twice.

``article`` (the default) is the analyzer of the retrieval-metrics article: lowercase, tokens
``[a-z0-9]+``, minus a 60-word stop list. ``english`` adds an English stop list and Snowball
(Porter 2) stemming.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

from corpora.errors import UnknownNameError

_TOKEN = re.compile(r"[a-z0-9]+")

ARTICLE_STOP_WORDS = frozenset(
    "the a an of to in on for and or but that this is are was be can i my me you your do does did how what "
    "where when which much many it its with at by from as if there not no s".split()
)

# The stop list of Lucene's EnglishAnalyzer plus the article's conversational words.
ENGLISH_STOP_WORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their then there these "
    "they this to was will with i me my we our you your he she him her his its do does did how what where when "
    "which who whom why much many can from s".split()
)

Analyzer = Callable[[str], list[str]]


def article_analyzer(text: str) -> list[str]:
    """Lowercase ``[a-z0-9]+`` tokens minus the article's stop list.

    >>> article_analyzer("Can I get my money back? The Pro plan costs 49 euros.")
    ['get', 'money', 'back', 'pro', 'plan', 'costs', '49', 'euros']
    """
    return [t for t in _TOKEN.findall(text.lower()) if t not in ARTICLE_STOP_WORDS]


@lru_cache(maxsize=1)
def _english_stemmer():
    import snowballstemmer

    return snowballstemmer.stemmer("english")


# Stemming is a pure function of the word and a corpus has far fewer distinct words than tokens,
# so each word is stemmed once (the Snowball stemmer is pure Python, ~20 us a call).
_STEMS: dict[str, str] = {}
_MAX_CACHED_STEMS = 2_000_000


def stem_english(word: str) -> str:
    """Snowball English stem of one lowercase word, memoised.

    >>> stem_english("services"), stem_english("running")
    ('servic', 'run')
    """
    stem = _STEMS.get(word)
    if stem is None:
        stem = _english_stemmer().stemWord(word)
        if len(_STEMS) < _MAX_CACHED_STEMS:
            _STEMS[word] = stem
    return stem


def english_analyzer(text: str) -> list[str]:
    """Lowercase ``[a-z0-9]+`` tokens, an English stop list, Snowball English stemming.

    >>> english_analyzer("Safety copies are made daily by the backup services")
    ['safeti', 'copi', 'made', 'daili', 'backup', 'servic']
    """
    stems = _STEMS
    return [stems.get(t) or stem_english(t) for t in _TOKEN.findall(text.lower()) if t not in ENGLISH_STOP_WORDS]


ANALYZERS: dict[str, Analyzer] = {
    "article": article_analyzer,
    "english": english_analyzer,
}
DEFAULT_ANALYZER = "article"


def get_analyzer(name: str) -> Analyzer:
    """The analyzer registered under ``name``; an unknown name lists the valid ones."""
    try:
        return ANALYZERS[name]
    except KeyError:
        raise UnknownNameError("analyzer", name, sorted(ANALYZERS)) from None
