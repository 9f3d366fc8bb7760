"""Data model, loaders and bundled corpora; the progress channel every layer reports to.

Imports neither ``retrievers`` nor ``harness``. The names below are the public ones; the modules
hold more, for the other layers of retbench.
"""

from corpora import progress
from corpora.analyzers import ANALYZERS, DEFAULT_ANALYZER, get_analyzer
from corpora.bundled import DEFAULT_CORPUS, bundled_names
from corpora.errors import InputFileError, ParameterError, RetbenchError, UnknownNameError
from corpora.facets import load_facets_file, with_facets
from corpora.inspection import DatasetStats, describe, summary_line
from corpora.loading import FORMATS, load_dataset
from corpora.model import Corpus, Dataset, JudgmentArrays, Qrels, Queries, Run, is_relevant
from corpora.trec_io import read_qrels, read_run, write_qrels, write_run

# The run file formats register themselves (corpora.run.RUN_FILE_FORMATS) when imported: TREC with
# trec_io above, Parquet and MS MARCO's TSV here (pyarrow itself is imported only when a Parquet file is read or written).
from corpora import parquet as _parquet  # noqa: F401
from corpora import tsv_run as _tsv_run  # noqa: F401

__all__ = [
    "ANALYZERS",
    "DEFAULT_ANALYZER",
    "DEFAULT_CORPUS",
    "FORMATS",
    "Corpus",
    "Dataset",
    "DatasetStats",
    "InputFileError",
    "JudgmentArrays",
    "ParameterError",
    "Qrels",
    "Queries",
    "RetbenchError",
    "Run",
    "UnknownNameError",
    "bundled_names",
    "describe",
    "get_analyzer",
    "is_relevant",
    "load_dataset",
    "load_facets_file",
    "progress",
    "read_qrels",
    "read_run",
    "summary_line",
    "with_facets",
    "write_qrels",
    "write_run",
]
