"""The real test collections (``../shared/data``, or ``$RETBENCH_DATA``) load with the counts their SOURCE.md states.

Each collection is detected with no ``--format``; counts are documents, queries, queries with a
relevant judgment (the ones averaged) and judged pairs, plus the quirks each SOURCE.md lists.
"""

from __future__ import annotations

from collections import Counter

import pytest

from corpora import load_dataset, summary_line
from corpora.model import Dataset
from tests.conftest import SHARED_DATA, absent, real_data

pytestmark = pytest.mark.skipif(not SHARED_DATA.is_dir(), reason=absent(SHARED_DATA))

_CACHE: dict[str, Dataset] = {}


def load(name: str) -> Dataset:
    folder = real_data(name)
    if name not in _CACHE:
        _CACHE[name] = load_dataset(str(folder))
    return _CACHE[name]


# name, format detected, documents, queries, queries with a relevant judgment, judged pairs
COUNTS = [
    ("vaswani", "trec", 11_429, 93, 93, 2_083),
    ("cranfield", "cranfield", 1_400, 225, 225, 1_837),
    ("cisi", "smart", 1_460, 112, 76, 3_114),
    ("med", "smart", 1_033, 30, 30, 696),
    ("adi", "smart", 82, 35, 35, 170),
    ("cystic_fibrosis", "cystic_fibrosis", 1_239, 100, 100, 4_819),
    ("csfcube", "csfcube", 4_174, 50, 50, 6_244),
]


@pytest.mark.parametrize(("name", "fmt", "n_docs", "n_queries", "n_judged", "n_pairs"), COUNTS,
                         ids=[c[0] for c in COUNTS])
def test_counts_match_source(name: str, fmt: str, n_docs: int, n_queries: int, n_judged: int, n_pairs: int) -> None:
    dataset = load(name)
    assert dataset.format == fmt
    assert len(dataset.corpus) == n_docs
    assert len(dataset.queries) == n_queries
    assert len(dataset.qrels.queries_with_relevant()) == n_judged
    assert dataset.qrels.n_judgments() == n_pairs
    # no judgment of these collections points to an unknown id: each loads without
    # --allow-unmatched-judgments, far inside the 5% that would need it
    assert dataset.warnings == [] and dataset.unmatched_judgments == []
    assert all(isinstance(i, str) for i in dataset.corpus.ids + dataset.queries.ids)
    assert f"{n_docs:,} documents" in summary_line(dataset)


def test_vaswani_text_and_ids() -> None:
    dataset = load("vaswani")
    assert dataset.corpus.ids[:2] == ["1", "2"]
    assert dataset.corpus.texts[0].startswith("compact memories have flexible capacities")
    assert dataset.queries.texts[0] == "MEASUREMENT OF DIELECTRIC CONSTANT OF LIQUIDS BY THE USE OF MICROWAVE TECHNIQUES"
    assert set(Counter(g for d in dataset.qrels.values() for g in d.values())) == {1}


def test_cranfield_positional_queries_and_codes() -> None:
    dataset = load("cranfield")
    # cran.qry ids are 001, 002, 004, 008 ...; cranqrel numbers them 1..225 by position
    assert dataset.queries.ids[:4] == ["1", "2", "3", "4"]
    assert dataset.queries.facets["original_id"][:4] == ["1", "2", "4", "8"]
    assert dataset.queries.facets["original_id"][-1] == "365"
    # codes 1,2,3,4 (1 = complete answer) -> grades 4,3,2,1; -1 (one per query) -> 0
    assert Counter(g for d in dataset.qrels.values() for g in d.values()) == {4: 128, 3: 387, 2: 734, 1: 363, 0: 225}
    assert dataset.qrels["1"]["184"] == 3  # "1 184 2 "
    assert dataset.qrels["1"]["486"] == 0  # "1 486 -1", the query's source paper
    ids = dataset.corpus.ids
    assert [ids[i] for i, t in enumerate(dataset.corpus.full_texts) if not t.strip()] == ["471", "995"]
    doc240 = ids.index("240")  # stray .A/.B lines inside the abstract stay abstract text
    assert dataset.corpus.metadata[doc240] == {"authors": "dean r. chapman", "source": "naca technote 3792"}
    assert "application to turbulent separations" in dataset.corpus.texts[doc240]
    assert "unity in low-speed flow" in dataset.corpus.texts[doc240]
    doc576 = ids.index("576")  # two .W sections, both kept
    assert "stagnation flow" in dataset.corpus.texts[doc576] and "part-speed" in dataset.corpus.texts[doc576]


def test_cisi_keeps_unjudged_queries_and_repeated_authors() -> None:
    dataset = load("cisi")
    unjudged = [q for q in dataset.queries.ids if q not in dataset.qrels]
    assert len(unjudged) == 36
    assert "\r" not in "".join(dataset.corpus.texts[:50])
    assert dataset.corpus.titles[1].startswith("Use Made of Technical Libraries")  # ".T " with a trailing space
    assert dataset.corpus.metadata[1]["authors"] == "Slater, M."  # ".A " with a trailing space
    assert ";" in dataset.corpus.metadata[dataset.corpus.ids.index("33")]["authors"]  # two .A blocks joined
    assert not any(t.strip() == "" for t in dataset.corpus.texts)


def test_med_uses_the_newer_rel_file_layout() -> None:
    dataset = load("med")
    assert dataset.qrels["1"]["13"] == 1  # MED.REL "1 0 13 1": the docid is column 3
    assert not any(t.endswith(" ") for t in dataset.corpus.texts)  # 72-column padding collapsed


def test_adi_counts_distinct_relevant_documents() -> None:
    dataset = load("adi")
    assert len({d for docs in dataset.qrels.values() for d in docs}) == 72


def test_cystic_fibrosis_sums_the_four_judges() -> None:
    dataset = load("cystic_fibrosis")
    assert dataset.qrels["1"]["139"] == 1 + 2 + 2 + 2  # "139 1222"
    assert dataset.qrels["1"]["166"] == 1  # "166 0001"
    histogram = Counter(g for d in dataset.qrels.values() for g in d.values())
    assert histogram == {1: 2280, 2: 744, 3: 251, 4: 202, 5: 250, 6: 297, 7: 330, 8: 465}
    assert dataset.corpus.ids[0] == "1"  # "RN 00001 " normalised to match RD's unpadded numbers
    assert sum(1 for t in dataset.corpus.texts if t) == 1239  # AB, or EX where there is no abstract


def test_csfcube_facets_grades_and_pools() -> None:
    dataset = load("csfcube")
    assert Counter(dataset.queries.facets["facet"]) == {"background": 16, "method": 17, "result": 17}
    assert Counter(g for d in dataset.qrels.values() for g in d.values()) == {0: 4400, 1: 1348, 2: 412, 3: 84}
    assert dataset.candidates is not None and len(dataset.candidates) == 50
    sizes = [len(pool) for pool in dataset.candidates.values()]
    assert (min(sizes), max(sizes)) == (88, 253)
    assert all(set(dataset.candidates[q]) == set(dataset.qrels[q]) for q in dataset.queries.ids)
    # SOURCE.md counts 4,205 distinct papers: the 4,174 candidates plus 31 query papers judged by no one
    query_papers = {q.split("_")[0] for q in dataset.queries.ids}
    assert len(set(dataset.corpus.ids) | query_papers) == 4_205
    assert "_label:" not in dataset.corpus.texts[0] and "_label:" not in dataset.queries.texts[0]


def test_csfcube_split_selects_a_fold() -> None:
    fold = load_dataset(str(real_data("csfcube")), split="fold1_test")
    assert len(fold.queries) == 26
