"""Query facets: columns such as ``type`` or ``popularity`` that describe each query.

Where facets come from
    The loaders keep them from the query files: BEIR's ``queries.jsonl`` (every field but the id and
    the text, with the fields of its ``metadata`` object lifted to the top level), the extra columns
    of a tabular ``queries.jsonl``/``queries.csv``, TREC topic fields (``description``, ...), CSFCube's
    ``facet``, ``year`` and ``paper_type``. For any layout, a side file adds more
    (:func:`load_facets_file`, then :func:`with_facets`), which is the only way for formats whose
    query files cannot hold them (TREC ``<top>`` topics, SMART).
A facet value is a scalar
    A string, a number, a boolean or missing (``None``). A JSON field whose value is a list or an
    object in any query is not a facet: :func:`scalar_facets` leaves the whole field out (so that a
    column never mixes values with structures) and says so in a warning that names the field.
The side file
    ``.csv`` (comma separated, RFC 4180 quoting, read strictly), ``.tsv`` (tab separated, no quoting)
    or ``.jsonl`` (one object per line). One column holds the query id and is named one of
    :data:`ID_COLUMNS`; every other column is a facet. In CSV and TSV an empty cell is missing, and a
    column whose every non-empty cell is written as a decimal number (``12``, ``-0.5``, ``1e3``;
    not ``007``, which is a code) is read as numbers, so that it can be cut into quantile buckets;
    any other column stays text. JSON values keep their JSON type.
Strictness
    A query id twice, an empty id, a nested JSON value, a row with more cells than the header: an
    error at ``file:line``. A query id the dataset does not have is an error too (at its line when
    :func:`load_facets_file` is given the dataset's query ids), since a misspelt or stale id would
    otherwise silently vanish from every facet table. A dataset query the file does not list gets
    a missing value. A facet name the queries already carry is an error (which value would count?).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Collection, Mapping
from pathlib import Path

from corpora.errors import InputFileError, RetbenchError
from corpora.model import Dataset, Queries
from corpora.readers import csv_rows, read_jsonl, read_text_lines
from corpora.wording import counted

#: Column names that hold the query id in a facets side file, in the order they are looked for.
ID_COLUMNS = ("query_id", "query-id", "qid", "id", "_id")
#: File name endings a facets side file may have, and how each is read.
FACET_FILE_FORMATS = {
    ".csv": "comma separated, a header row, RFC 4180 quoting",
    ".tsv": "tab separated, a header row, no quoting",
    ".jsonl": "one JSON object per line",
}
#: A decimal number as a CSV/TSV facet cell may write it; a leading zero (``007``) makes a code, not a number.
_DECIMAL = re.compile(r"[+-]?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?|[+-]?\.[0-9]+([eE][+-]?[0-9]+)?")
_INTEGER = re.compile(r"[+-]?(0|[1-9][0-9]*)")


def is_scalar(value: object) -> bool:
    """Whether ``value`` can be a facet value: a string, a number, a boolean or ``None``.

    >>> is_scalar("billing"), is_scalar(3), is_scalar(None), is_scalar(["a"]), is_scalar({"a": 1})
    (True, True, True, False, False)
    """
    return value is None or isinstance(value, (str, int, float, bool))


def scalar_facets(columns: Mapping[str, list], source: str) -> tuple[dict[str, list], list[str]]:
    """The columns whose every value is a scalar, and one warning naming the columns left out.

    A column holding a list or an object in any query is dropped whole, for every query.

    >>> kept, warnings = scalar_facets({"type": ["a", "b"], "tags": [["x"], None]}, "queries.jsonl")
    >>> kept
    {'type': ['a', 'b']}
    >>> print(warnings[0])
    queries.jsonl: query field 'tags' (in 1 query) holds a list or an object, which is not a facet value, so it is not a facet. Fix: give it a string or number, or a field per part
    """
    kept: dict[str, list] = {}
    dropped: list[tuple[str, int]] = []
    for name, values in columns.items():
        nested = sum(not is_scalar(v) for v in values)
        if nested:
            dropped.append((name, nested))
        else:
            kept[name] = values
    if not dropped:
        return kept, []
    fields = ", ".join(f"{name!r} (in {counted(count, 'query')})" for name, count in dropped)
    plural = len(dropped) > 1
    return kept, [f"{source}: query field{'s' if plural else ''} {fields} hold{'' if plural else 's'} a list or an "
                  f"object, which is not a facet value, so {'they are' if plural else 'it is'} not a facet. "
                  "Fix: give it a string or number, or a field per part"]


def _number(text: str) -> int | float:
    return int(text) if _INTEGER.fullmatch(text) else float(text)


def _typed_columns(columns: dict[str, dict[str, str | None]]) -> dict[str, dict[str, object]]:
    """CSV/TSV cells as written, except that a column of decimal numbers becomes numbers."""
    typed: dict[str, dict[str, object]] = {}
    for name, cells in columns.items():
        written = [v for v in cells.values() if v is not None]
        if written and all(_DECIMAL.fullmatch(v) for v in written):
            typed[name] = {q: None if v is None else _number(v) for q, v in cells.items()}
        else:
            typed[name] = dict(cells)
    return typed


def _id_column(path: Path, header: list[str], line: int) -> str:
    found = [c for c in ID_COLUMNS if c in header]
    if not found:
        raise InputFileError(path, f"no query id column in the header ({', '.join(header) or 'empty'})", line=line,
                             fix=f"name the query id column one of {', '.join(ID_COLUMNS)}")
    if len(found) > 1:
        raise InputFileError(path, f"the header has {len(found)} query id columns ({', '.join(found)})", line=line,
                             fix="keep one of them")
    return found[0]


def _check_header(path: Path, header: list[str], line: int) -> None:
    names = list(header)
    if any(not h for h in names):
        raise InputFileError(path, "a column of the header has no name", line=line, fix="name every column")
    repeated = sorted({h for h in names if names.count(h) > 1})
    if repeated:
        raise InputFileError(path, f"the header names {', '.join(map(repr, repeated))} twice", line=line,
                             fix="give every column its own name")
    if len(names) < 2:
        raise InputFileError(path, "the header names no facet column besides the query id", line=line,
                             fix="add one column per facet, e.g. query_id,type,popularity")


def _text_rows(path: Path) -> list[tuple[int, list[str]]]:
    if path.suffix.lower() == ".csv":
        return [(n, [c.strip() for c in row]) for n, row in csv_rows(path) if any(c.strip() for c in row)]
    return [(n, [c.strip() for c in line.split("\t")]) for n, line in read_text_lines(path) if line.strip()]


def load_facets_file(path: str | Path, query_ids: Collection[str] | None = None) -> dict[str, dict[str, object]]:
    """Read a facets side file: ``{facet: {query_id: value}}``, facets in column order.

    See the module docstring for the layouts, the typing of CSV/TSV cells and the checks. With
    ``query_ids`` (the dataset's), an id outside them is an error at its line.
    """
    path = Path(path)
    ending = path.suffix.lower()
    if ending not in FACET_FILE_FORMATS:
        raise InputFileError(path, f"a facets file must end in {', '.join(FACET_FILE_FORMATS)}, not {ending or 'nothing'}",
                             fix="rename it after its layout: " + "; ".join(
                                 f"{e}: {d}" for e, d in FACET_FILE_FORMATS.items()))
    known = None if query_ids is None else set(query_ids)
    seen: dict[str, int] = {}

    def register(query_id: str, line: int) -> None:
        if not query_id:
            raise InputFileError(path, "empty query id", line=line, fix="give every row its query id")
        if query_id in seen:
            raise InputFileError(path, f"query id {query_id!r} listed twice (first on line {seen[query_id]})",
                                 line=line, fix="give each query one row")
        if known is not None and query_id not in known:
            raise InputFileError(path, f"query id {query_id!r} is not a query of the dataset", line=line,
                                 fix="use the dataset's query ids (bench corpora show lists how many there are), "
                                     "or remove the row")
        seen[query_id] = line

    if ending == ".jsonl":
        facets: dict[str, dict[str, object]] = {}
        for number, record in read_jsonl(path):
            id_keys = [k for k in ID_COLUMNS if k in record]
            if not id_keys:
                raise InputFileError(path, f"record has no query id (expected a field named one of "
                                     f"{', '.join(ID_COLUMNS)})", line=number, fix="give every record its query id")
            if len(id_keys) > 1:
                raise InputFileError(path, f"record has {len(id_keys)} query id fields ({', '.join(id_keys)})",
                                     line=number, fix="keep one of them")
            id_key = id_keys[0]
            query_id = str(record[id_key]).strip() if record[id_key] is not None else ""
            register(query_id, number)
            for name, value in record.items():
                if name == id_key:
                    continue
                if not is_scalar(value):
                    raise InputFileError(path, f"facet {name!r} of query {query_id!r} is a {type(value).__name__}, "
                                         "not a string, number or boolean", line=number,
                                         fix="give one scalar per facet, or a facet per part")
                facets.setdefault(name, {})[query_id] = value
        if not facets:
            raise InputFileError(path, "the file holds no facet values", fix="add one object per query: "
                                 '{"query_id": "q1", "type": "lookup"}')
        return {name: {q: values.get(q) for q in seen} for name, values in facets.items()}

    rows = _text_rows(path)
    if not rows:
        raise InputFileError(path, "the file is empty", fix="write a header row (query_id and one column per facet), "
                             "then one row per query")
    header_line, header = rows[0]
    _check_header(path, header, header_line)
    id_column = _id_column(path, header, header_line)
    at = header.index(id_column)
    columns: dict[str, dict[str, str | None]] = {name: {} for name in header if name != id_column}
    for number, cells in rows[1:]:
        if len(cells) != len(header):
            raise InputFileError(path, f"{len(cells)} cells but the header has {len(header)}", line=number,
                                 fix="give every row one cell per column (an empty cell is a missing value)")
        query_id = cells[at]
        register(query_id, number)
        for name, cell in zip(header, cells):
            if name != id_column:
                columns[name][query_id] = cell or None
    if not seen:
        raise InputFileError(path, "the file has a header but no rows", fix="add one row per query")
    return _typed_columns(columns)


def with_facets(dataset: Dataset, facets: Mapping[str, Mapping[str, object]], source: str = "<memory>") -> Dataset:
    """A copy of ``dataset`` whose queries also carry ``facets`` (``{facet: {query_id: value}}``).

    A query the mapping does not list gets ``None`` (missing). Raises :class:`RetbenchError` when a
    query id is not the dataset's, a value is not a scalar, or a facet name is already a facet of
    the queries. The dataset given is left as it was.

    >>> from corpora.model import Corpus, Qrels
    >>> ds = Dataset("toy", Corpus(["d"], ["x"]), Queries(["q1", "q2"], ["a", "b"]), Qrels({"q1": {"d": 1}}), "<memory>")
    >>> with_facets(ds, {"type": {"q2": "lookup"}}).queries.facets
    {'type': [None, 'lookup']}
    """
    queries = dataset.queries
    known = set(queries.ids)
    for name, values in facets.items():
        if not isinstance(name, str) or not name:
            raise RetbenchError(f"{source}: facet name {name!r} is not a non-empty string. Fix: name every facet")
        if name in queries.facets:
            raise RetbenchError(f"{source}: facet {name!r} is already a facet of the queries ({queries.source}). "
                                "Fix: rename the column, or drop it from one of the two files")
        unknown = [q for q in values if q not in known]
        if unknown:
            shown = ", ".join(repr(q) for q in unknown[:5]) + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else "")
            raise RetbenchError(f"{source}: facet {name!r} names {counted(len(unknown), 'query')} "
                                f"not in the dataset ({shown}; the dataset's query ids look like "
                                f"{', '.join(repr(q) for q in queries.ids[:3])}). Fix: use the dataset's query ids")
        nested = next((q for q, v in values.items() if not is_scalar(v)), None)
        if nested is not None:
            raise RetbenchError(f"{source}: facet {name!r} of query {nested!r} is a {type(values[nested]).__name__}, "
                                "not a string, number or boolean. Fix: give one scalar per facet")
    added = {**queries.facets, **{name: [values.get(q) for q in queries.ids] for name, values in facets.items()}}
    extended = Queries(list(queries.ids), list(queries.texts), added, source=queries.source)
    return dataclasses.replace(dataset, queries=extended, warnings=list(dataset.warnings))
