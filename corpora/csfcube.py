"""CSFCube (Mysore et al., NeurIPS 2021): faceted query-by-example over computer-science abstracts.

Files read
    ``queries-release.csv`` (``pid,facet,year,title,paper type``), ``test-pid2anns-csfcube-<facet>.json``
    (per query paper: ``cands`` and the parallel grade lists) and ``readable_annotations/*.txt``, the
    only place the titles and abstracts are stored here (blocks separated by ``=====`` lines, the
    first one the query paper, then every candidate; each abstract sentence begins with a predicted
    ``<facet>_label:`` that is removed). ``evaluation_splits.json`` is read for ``--split``.
Queries
    One query per (paper, facet) pair, id ``<pid>_<facet>`` as in ``evaluation_splits.json``. Its text
    is the query paper's title followed by its whole abstract; its facets are ``facet`` (background /
    method / result), ``year`` and ``paper_type``. ``--split test`` (the default) keeps all 50 queries;
    ``fold1_dev``, ``fold1_test``, ``fold2_dev`` and ``fold2_test`` keep one fold of the upstream
    2-fold cross-validation.
Grades
    ``relevance_adju``, the adjudicated grade upstream evaluates with: 0 irrelevant, 1 related,
    2 similar, 3 identical (the TREC 0-3 scale as it is).
Candidate pools
    CSFCube is a *re-ranking* task: each query is judged on its own pool of 88-253 candidates, and
    every pool member is judged. The corpus is the union of the judged pools (4,174 papers; the 31
    query papers that are no one's candidate are queries, not documents, and are left out so that
    a query cannot retrieve itself unjudged). ``Dataset.candidates`` maps each query id to its pool;
    a harness that honours it ranks each query within its pool, as upstream does. One that ignores
    it searches the whole union, where other queries' candidates count as unjudged (non-relevant).
    ``test-pid2pool-csfcube.json`` is not read: its pools add two unjudged papers (``5111924``,
    ``41022419``) to every query whose text is not stored.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

from corpora.errors import InputFileError
from corpora.model import Corpus, Dataset, Qrels, Queries
from corpora.number_grammar import check_grade
from corpora.readers import check_id, parse_json, read_text_lines

FACETS = ("background", "method", "result")
_LABEL = re.compile(r"^[a-z]+_label:\s*")
_SEPARATOR = re.compile(r"^=+$")
_PAPER_ID = re.compile(r"^paper_id:\s*([^;\s]+)")


def _read_json(path: Path) -> object:
    return parse_json(path, "\n".join(line for _, line in read_text_lines(path)))


def read_papers(folder: Path) -> tuple[dict[str, tuple[str, str]], list[str]]:
    """paper id -> (title, abstract) from every readable annotation file; warnings for disagreements."""
    papers: dict[str, tuple[str, str]] = {}
    differing: set[str] = set()
    files = sorted((folder / "readable_annotations").glob("*.txt"))
    if not files:
        raise InputFileError(folder / "readable_annotations", "no annotation text files (*.txt) found",
                             fix="add the readable_annotations folder of the CSFCube release")
    for path in files:
        block: list[tuple[int, str]] = []
        for number, line in [*read_text_lines(path), (0, "=====")]:
            if not _SEPARATOR.match(line):
                block.append((number, line))
                continue
            if any(text.strip() for _, text in block):
                paper_id, paper = _parse_block(path, block)
                if paper_id in papers and papers[paper_id] != paper:
                    differing.add(paper_id)
                papers.setdefault(paper_id, paper)
            block = []
    warnings = []
    if differing:
        warnings.append(f"{len(differing)} papers have different texts in different annotation files; "
                        f"the first file's text is used ({', '.join(sorted(differing)[:5])})")
    return papers, warnings


def _parse_block(path: Path, block: list[tuple[int, str]]) -> tuple[str, tuple[str, str]]:
    first_line = next(number for number, text in block if text.strip())
    paper_id = title = None
    abstract: list[str] = []
    in_abstract = False
    for _, text in block:
        match = _PAPER_ID.match(text)
        if match and paper_id is None:
            paper_id = match.group(1)
        elif text.startswith("TITLE:"):
            title, in_abstract = text[len("TITLE:"):].strip(), False
        elif text.startswith("ABSTRACT:"):
            in_abstract = True
            abstract.append(text[len("ABSTRACT:"):].strip())
        elif in_abstract and text.strip():
            abstract.append(text.strip())
    if paper_id is None:
        raise InputFileError(path, "paper block without a 'paper_id:' line", line=first_line)
    sentences = [_LABEL.sub("", s) for s in abstract if s]
    return paper_id, (title or "", " ".join(s for s in sentences if s))


def read_query_table(path: Path) -> list[tuple[int, dict[str, str]]]:
    """(line, row) for each row of ``queries-release.csv`` that names a paper."""
    text = "\n".join(line for _, line in read_text_lines(path))
    reader = csv.DictReader(io.StringIO(text))
    missing = {"pid", "facet"} - set(reader.fieldnames or [])
    if missing:
        raise InputFileError(path, f"missing column(s) {', '.join(sorted(missing))}", line=1,
                             fix="keep the header 'pid,facet,year,title,paper type'")
    return [(reader.line_num, row) for row in reader if (row.get("pid") or "").strip()]


def _grade(value: object, path: Path, query_id: str) -> int:
    """A ``relevance_adju`` entry as an integer grade; anything but a whole number is an error
    (``int(1.5)`` would silently read 1)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or \
            value in (float("inf"), float("-inf")) or value != int(value):
        raise InputFileError(path, f"query {query_id}: relevance_adju grade {value!r} is not an integer",
                             fix="use the integer grades 0-3 of the CSFCube release")
    return check_grade(int(value), path, None)


def _split_ids(folder: Path, split: str) -> set[str] | None:
    if split in ("test", "all"):
        return None
    path = folder / "evaluation_splits.json"
    splits = _read_json(path) if path.is_file() else {}
    folds = splits.get("all", {}) if isinstance(splits, dict) else {}
    if split not in folds:
        raise InputFileError(path, f"unknown split {split!r}",
                             fix=f"use `split=test` (all queries) or one of {', '.join(sorted(folds))}")
    return set(folds[split])


def looks_like_csfcube(folder: Path) -> bool:
    return folder.is_dir() and (folder / "queries-release.csv").is_file() and \
        any((folder / f"test-pid2anns-csfcube-{f}.json").is_file() for f in FACETS)


def load_csfcube(folder: Path, *, split: str = "test") -> Dataset:
    """Load CSFCube; see the module docstring for queries, grades and candidate pools."""
    folder = Path(folder)
    papers, warnings = read_papers(folder)
    keep = _split_ids(folder, split)
    table_path = folder / "queries-release.csv"
    annotations: dict[str, dict] = {}
    for facet in FACETS:
        path = folder / f"test-pid2anns-csfcube-{facet}.json"
        if path.is_file():
            data = _read_json(path)
            if not isinstance(data, dict):
                raise InputFileError(path, "expected one JSON object keyed by query paper id")
            for pid, entry in data.items():
                annotations[f"{pid}_{facet}"] = entry

    ids: list[str] = []
    texts: list[str] = []
    facets: dict[str, list] = {"facet": [], "year": [], "paper_type": []}
    judgments: dict[str, dict[str, int]] = {}
    candidates: dict[str, list[str]] = {}
    for line, row in read_query_table(table_path):
        pid, facet = row["pid"].strip(), row["facet"].strip()
        query_id = f"{pid}_{facet}"
        check_id(query_id, "query id", table_path, line, starts_a_line=True)
        if keep is not None and query_id not in keep:
            continue
        if query_id not in annotations:
            warnings.append(f"{table_path}: query {query_id} has no judgments in test-pid2anns-csfcube-{facet}.json")
        title, abstract = papers.get(pid, ((row.get("title") or "").strip(), ""))
        ids.append(query_id)
        texts.append(f"{title}\n{abstract}".strip())
        year = (row.get("year") or "").strip()
        facets["facet"].append(facet)
        facets["year"].append(int(year) if year.isdigit() else year or None)
        facets["paper_type"].append((row.get("paper type") or "").strip() or None)
        entry = annotations.get(query_id, {})
        cands = [str(c) for c in entry.get("cands", [])]
        grades = entry.get("relevance_adju", [])
        judgments_path = folder / f"test-pid2anns-csfcube-{facet}.json"
        if len(grades) != len(cands):
            raise InputFileError(judgments_path,
                                 f"query {pid}: {len(cands)} candidates but {len(grades)} relevance_adju grades",
                                 fix="keep the grade list parallel to 'cands'")
        if cands:
            judgments[query_id] = {c: _grade(g, judgments_path, query_id) for c, g in zip(cands, grades)}
            candidates[query_id] = cands

    doc_ids = list(dict.fromkeys(c for pool in candidates.values() for c in pool if c in papers))
    for doc_id in doc_ids:  # paper ids hold no whitespace (the 'paper_id:' pattern), but may hold a control byte
        check_id(doc_id, "paper id", folder / "readable_annotations", None)
    if not doc_ids:
        raise InputFileError(folder / "readable_annotations", "no candidate paper has a title or abstract",
                             fix="add the readable_annotations files of the CSFCube release")
    corpus = Corpus(doc_ids, [papers[d][1] for d in doc_ids], [papers[d][0] for d in doc_ids],
                    name=folder.name, source=str(folder / "readable_annotations"))
    queries = Queries(ids, texts, facets, source=str(table_path))
    qrels = Qrels(judgments, source=str(folder / "test-pid2anns-csfcube-*.json"))
    known = set(doc_ids)
    pools = {q: [c for c in pool if c in known] for q, pool in candidates.items()}
    dataset = Dataset(folder.name, corpus, queries, qrels, source=str(folder), warnings=warnings,
                      format="csfcube", candidates=pools)
    return dataset
