"""Named analyzers: text -> list of tokens, each declared once as an :class:`Analyzer`.

An analyzer is declared in :data:`ANALYZERS` by what it does (lowercase, a token pattern, stop
words, a stemmer) and a one-line description. Everything reads the declaration: calling it
analyzes one text; the batch tokenizer (:mod:`corpora.tokenize`) implements the same steps over
many texts at once; the CLI's ``--analyzer`` choices and help list the names and descriptions;
and a cache key holds :func:`analyzer_fingerprint`, built from the declared fields. The list of
valid names is never typed twice.

``article`` (the default) is the analyzer of the retrieval-metrics article: lowercase, tokens
``[a-z0-9]+``, minus its stop list. ``english`` uses an English stop list and Snowball (Porter 2)
stemming. Code of your own may also register a plain function ``text -> tokens`` under a name: it
is called as it is (the batch tokenizer then calls it once per text).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

from corpora.errors import UnknownNameError

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

AnalyzerFunction = Callable[[str], list[str]]


@lru_cache(maxsize=None)
def _snowball(language: str):
    import snowballstemmer

    return snowballstemmer.stemmer(language)


# Stemming is a pure function of the word and a corpus has far fewer distinct words than tokens,
# so each word is stemmed once per language (the Snowball stemmers are pure Python, ~20 us a call).
_STEMS: dict[str, dict[str, str]] = {}
_MAX_CACHED_STEMS = 2_000_000


def stem(word: str, language: str) -> str:
    """Snowball stem of one lowercase word in ``language``, memoised.

    >>> stem("services", "english"), stem("running", "english")
    ('servic', 'run')
    """
    memo = _STEMS.setdefault(language, {})
    stemmed = memo.get(word)
    if stemmed is None:
        stemmed = _snowball(language).stemWord(word)
        if len(memo) < _MAX_CACHED_STEMS:
            memo[word] = stemmed
    return stemmed


def stem_english(word: str) -> str:
    """Snowball English stem of one lowercase word, memoised.

    >>> stem_english("services"), stem_english("running")
    ('servic', 'run')
    """
    return stem(word, "english")


@dataclass(frozen=True)
class Analyzer:
    """An analyzer as a declaration: lowercase the text, keep the matches of ``token_pattern``
    (a regular expression over the lowercased text), drop ``stop_words``, then stem each token with
    the Snowball stemmer of ``stemmer`` (a language such as ``"english"``; None: no stemming).

    >>> ARTICLE("Can I get my money back? The Pro plan costs 49 euros.")
    ['get', 'money', 'back', 'pro', 'plan', 'costs', '49', 'euros']
    >>> ENGLISH("Safety copies are made daily by the backup services")
    ['safeti', 'copi', 'made', 'daili', 'backup', 'servic']
    """

    name: str
    description: str
    token_pattern: str = r"[a-z0-9]+"
    stop_words: frozenset[str] = frozenset()
    stemmer: str | None = None
    _tokens: re.Pattern = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_tokens", re.compile(self.token_pattern))

    def __call__(self, text: str) -> list[str]:
        stop_words = self.stop_words
        tokens = [t for t in self._tokens.findall(text.lower()) if t not in stop_words]
        if self.stemmer is None:
            return tokens
        memo = _STEMS.get(self.stemmer, {})
        return [memo.get(t) or stem(t, self.stemmer) for t in tokens]

    def summary(self) -> str:
        """The description, then the declared steps, e.g. for ``--help``."""
        stemming = f", Snowball {self.stemmer} stemming" if self.stemmer is not None else ""
        return (f"{self.description} (lowercase {self.token_pattern} tokens minus {len(self.stop_words)} stop "
                f"words{stemming})")

    def stem(self, word: str) -> str:
        """``word`` as this analyzer's stemmer leaves it (unchanged when it has none)."""
        return word if self.stemmer is None else stem(word, self.stemmer)

    def fingerprint_parts(self) -> list[str]:
        """What its tokens depend on: the declared steps, and the stemmer's version."""
        parts = [self.name, " ".join(sorted(self.stop_words)), self.token_pattern]
        if self.stemmer is not None:
            import snowballstemmer

            parts.append(f"snowball-{self.stemmer}-{getattr(snowballstemmer, '__version__', '?')}")
        return parts


ARTICLE = Analyzer("article", "the analyzer of the article on retrieval metrics", stop_words=ARTICLE_STOP_WORDS)
ENGLISH = Analyzer("english", "English text, words reduced to their stems", stop_words=ENGLISH_STOP_WORDS,
                   stemmer="english")
#: The analyzers by name (the names of ``bm25(analyzer=...)``, ``--analyzer``, ...).
ANALYZERS: dict[str, Analyzer | AnalyzerFunction] = {analyzer.name: analyzer for analyzer in (ARTICLE, ENGLISH)}
DEFAULT_ANALYZER = "article"

# The names the rest of the code and its tests have always called.
article_analyzer = ARTICLE
english_analyzer = ENGLISH


def get_analyzer(name: str) -> Analyzer | AnalyzerFunction:
    """The analyzer registered under ``name``; an unknown name lists the valid ones."""
    try:
        return ANALYZERS[name]
    except KeyError:
        raise UnknownNameError("analyzer", name, sorted(ANALYZERS)) from None


def describe_analyzers() -> str:
    """``name: summary`` of every analyzer, for help texts, read from the declarations."""
    return "; ".join(f"{name}: {getattr(analyzer, 'summary', lambda: 'registered by other code')()}"
                     for name, analyzer in ANALYZERS.items())


def analyzer_fingerprint(name: str) -> str:
    """What the tokens of analyzer ``name`` depend on, as a short hash: a cache key ingredient.

    A declared :class:`Analyzer`: its name, stop words, token pattern and the stemmer's version.
    A plain function: its module, name and compiled code (a best effort: a change in a helper it
    calls is missed).
    """
    analyzer = get_analyzer(name)
    if isinstance(analyzer, Analyzer):
        parts = analyzer.fingerprint_parts()
    else:
        code = getattr(analyzer, "__code__", None)
        parts = [name, getattr(analyzer, "__module__", "?"), getattr(analyzer, "__qualname__", repr(analyzer)),
                 code.co_code.hex() + repr(code.co_consts) if code is not None else ""]
    return hashlib.sha256("\x00".join(parts).encode("utf-8")).hexdigest()[:16]
