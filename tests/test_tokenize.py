"""Batch tokenisation gives exactly the analyzers' tokens, whatever the text and the chunking."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import corpora.analyzers as analyzers
from corpora.analyzers import analyzer_fingerprint, article_analyzer, english_analyzer
from corpora.tokenize import encode, tokenize

# Letters that tempt a byte-level tokenizer: ASCII case, digits, punctuation, NUL, the two non-ASCII
# characters that lowercase to ASCII (KELVIN SIGN -> k, DOTTED CAPITAL I -> i + combining dot),
# accented letters, a final sigma, an astral character and a lone surrogate.
ALPHABET = list("aZz09 .,-_'\n\t\x00") + ["\u212a", "\u0130", "é", "ß", "Σ", "ς", "\U0001f600", "\ud800", "ǅ"]
TEXT = st.lists(st.sampled_from(ALPHABET + ["the", "And", "RUNNING", "abcdefgh", "abcdefghi",
                                            "abcdefghijklmnop", "abcdefghijklmnopq", "x" * 25]),
                max_size=40).map("".join)
ANY_TEXT = st.one_of(TEXT, st.text(max_size=60))


def _check(texts: list[str], analyzer: str, chunk_texts: int) -> None:
    analyze = analyzers.get_analyzer(analyzer)
    tokens = tokenize(texts, analyzer, chunk_texts=chunk_texts)
    assert len(tokens) == len(texts)
    for i, text in enumerate(texts):
        assert tokens.tokens(i) == analyze(text), text
    assert tokens.vocabulary == sorted({t for text in texts for t in analyze(text)})


@settings(max_examples=300, deadline=None)
@given(st.lists(ANY_TEXT, max_size=12), st.integers(1, 5))
def test_article_tokens_are_the_analyzers(texts, chunk_texts):
    _check(texts, "article", chunk_texts)


@settings(max_examples=60, deadline=None)
@given(st.lists(ANY_TEXT, max_size=8), st.integers(1, 5))
def test_english_tokens_are_the_analyzers(texts, chunk_texts):
    _check(texts, "english", chunk_texts)


@pytest.mark.parametrize("text", [
    "", "   ", "the a an of", "K\u212aK", "\u0130stanbul", "caf\u00e9 na\u00efve", "x\x00y\x00",
    "abcdefgh abcdefghi abcdefgh abcdefghijklmnop abcdefghijklmnopq " + "y" * 40 + " " + "y" * 41,
    "12345678 123456789 0 007",
])
def test_edge_cases(text):
    for analyzer in ("article", "english"):
        _check([text, text.upper(), "filler words here"], analyzer, 1)


def test_vocabulary_is_sorted_and_ids_index_it():
    tokens = tokenize(["b a c", "c c zz", "aa"])
    assert tokens.vocabulary == ["aa", "b", "c", "zz"]
    assert tokens.term_ids.tolist() == [1, 2, 2, 2, 3, 0]
    assert tokens.offsets.tolist() == [0, 2, 5, 6]


@settings(max_examples=100, deadline=None)
@given(st.lists(TEXT, max_size=8), st.lists(TEXT, max_size=8))
def test_encode_keeps_known_terms_in_order(documents, queries):
    from retrievers.strings import SortedStrings, pack_strings

    words = tokenize(documents).vocabulary
    vocabulary = {t: i for i, t in enumerate(words)}
    offsets, ids = encode(queries, vocabulary)
    for i, text in enumerate(queries):
        expected = [vocabulary[t] for t in article_analyzer(text) if t in vocabulary]
        assert ids[offsets[i]:offsets[i + 1]].tolist() == expected
    table_offsets, table_ids = encode(queries, SortedStrings(*pack_strings(words)))  # looked up all at once
    assert table_offsets.tolist() == offsets.tolist() and table_ids.tolist() == ids.tolist()


def test_other_analyzers_take_the_slow_path(monkeypatch):
    def shout(text: str) -> list[str]:
        return [w.upper() for w in text.split()]

    monkeypatch.setitem(analyzers.ANALYZERS, "shout", shout)
    tokens = tokenize(["a b", "b c"], "shout")
    assert tokens.vocabulary == ["A", "B", "C"]
    assert [tokens.tokens(0), tokens.tokens(1)] == [["A", "B"], ["B", "C"]]
    assert analyzer_fingerprint("shout") != analyzer_fingerprint("article")


def test_fingerprints_name_what_tokens_depend_on():
    assert analyzer_fingerprint("article") == analyzer_fingerprint("article")
    assert analyzer_fingerprint("article") != analyzer_fingerprint("english")


def test_english_stems_the_vocabulary():
    tokens = tokenize(["Safety copies are made daily by the backup services"], "english")
    assert tokens.tokens(0) == english_analyzer("Safety copies are made daily by the backup services")


@settings(max_examples=100, deadline=None)
@given(st.lists(ANY_TEXT, max_size=12), st.integers(1, 4))
def test_merging_after_every_chunk_changes_nothing(texts, chunk_texts):
    """The global vocabulary grows chunk by chunk; ids given early must stay valid."""
    import corpora.tokenize as tokenize_module

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tokenize_module, "_MERGE_ROWS", 1)
        _check(texts, "article", chunk_texts)


def test_a_declared_analyzer_takes_the_fast_path_from_its_declaration(monkeypatch):
    """The fast path reads stop words and stemmer from the declaration, whatever the analyzer's name."""
    import corpora.tokenize as tokenize_module

    def no_fallback(texts, analyzer):
        raise AssertionError(f"{analyzer} went to the per-text fallback")

    terse = analyzers.Analyzer("terse", "stop words 'money' and 'plan'", stop_words=frozenset({"money", "plan"}))
    stems = analyzers.Analyzer("stems", "English stems, no stop word", stemmer="english")
    monkeypatch.setitem(analyzers.ANALYZERS, "terse", terse)
    monkeypatch.setitem(analyzers.ANALYZERS, "stems", stems)
    monkeypatch.setattr(tokenize_module, "_fallback", no_fallback)
    texts = ["Can I get my money back?", "The Pro plan costs 49 euros, running services"]
    for name, analyzer in (("terse", terse), ("stems", stems)):
        tokens = tokenize(texts, name)
        assert [tokens.tokens(0), tokens.tokens(1)] == [analyzer(texts[0]), analyzer(texts[1])]
    assert tokenize(texts, "terse").tokens(0) == ["can", "i", "get", "my", "back"]
    assert "servic" in tokenize(texts, "stems").tokens(1)


def test_an_analyzer_with_another_token_pattern_is_called_text_by_text(monkeypatch):
    words = analyzers.Analyzer("words", "letters only, apostrophes kept", token_pattern=r"[a-z']+")
    monkeypatch.setitem(analyzers.ANALYZERS, "words", words)
    tokens = tokenize(["Don't panic, 42 times", "it's fine"], "words")
    assert [tokens.tokens(0), tokens.tokens(1)] == [["don't", "panic", "times"], ["it's", "fine"]]


def test_the_fingerprint_reads_every_declared_step(monkeypatch):
    base = analyzers.Analyzer("mine", "a test analyzer", stop_words=frozenset({"a"}))
    variants = [base, analyzers.Analyzer("mine", "a test analyzer", stop_words=frozenset({"b"})),
                analyzers.Analyzer("mine", "a test analyzer", stop_words=frozenset({"a"}), token_pattern=r"[a-z]+"),
                analyzers.Analyzer("mine", "a test analyzer", stop_words=frozenset({"a"}), stemmer="english")]
    prints = set()
    for variant in variants:
        monkeypatch.setitem(analyzers.ANALYZERS, "mine", variant)
        prints.add(analyzer_fingerprint("mine"))
    assert len(prints) == len(variants)
    monkeypatch.setitem(analyzers.ANALYZERS, "mine", analyzers.Analyzer("mine", "another description",
                                                                        stop_words=frozenset({"a"})))
    assert analyzer_fingerprint("mine") in prints  # the description does not change a token
