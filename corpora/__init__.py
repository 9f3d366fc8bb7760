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
from corpora.model import Corpus, Dataset, Qrels, Queries, Run

__all__ = [
    "ANALYZERS",
    "DEFAULT_ANALYZER",
    "DEFAULT_CORPUS",
    "FORMATS",
    "Corpus",
    "Dataset",
    "DatasetStats",
    "InputFileError",
    "ParameterError",
    "Qrels",
    "Queries",
    "RetbenchError",
    "Run",
    "UnknownNameError",
    "bundled_names",
    "describe",
    "get_analyzer",
    "load_dataset",
    "load_facets_file",
    "progress",
    "summary_line",
    "with_facets",
]
