"""The one exception family for user mistakes.

Every error a user can cause (a missing file, a malformed line, an unknown name) is a
:class:`RetbenchError`. Its message names the input, the place (``file:line`` where there is one),
what was expected and how to fix it. The CLI prints the message without a traceback and exits 2.

It lives in ``corpora`` because data flows ``corpora -> retrievers -> harness`` and the loaders are
the first to need it; ``harness.errors`` re-exports it.
"""

from __future__ import annotations

from pathlib import Path


class RetbenchError(Exception):
    """A mistake in the user's input or command; the message says where and how to fix it."""

    exit_code = 2


class InputFileError(RetbenchError):
    """A file that is missing, unreadable or malformed.

    >>> str(InputFileError("qrels.tsv", "expected 3 tab-separated fields, got 2", line=7, fix="add the grade"))
    'qrels.tsv:7: expected 3 tab-separated fields, got 2. Fix: add the grade.'
    """

    def __init__(self, path: str | Path, problem: str, *, line: int | None = None, fix: str | None = None):
        self.path = str(path)
        self.line = line
        self.problem = problem
        self.fix = fix
        where = f"{self.path}:{line}" if line is not None else self.path
        message = f"{where}: {problem}"
        if fix:
            message += f". Fix: {fix}."
        super().__init__(message)


class UnknownNameError(RetbenchError):
    """A name (retriever, metric, corpus, analyzer) that is not registered.

    >>> str(UnknownNameError("metric", "ndgc@5", ["mrr", "ndcg@k"]))
    "unknown metric 'ndgc@5'. Valid: mrr, ndcg@k"
    """

    def __init__(self, kind: str, name: str, valid: list[str] | tuple[str, ...]):
        self.kind = kind
        self.name = name
        self.valid = list(valid)
        super().__init__(f"unknown {kind} {name!r}. Valid: {', '.join(self.valid)}")


class ParameterError(RetbenchError):
    """A parameter with a value outside its domain.

    >>> str(ParameterError("k", "ndcg@k", "an int >= 1", 0))
    "The 'k' parameter of ndcg@k must be an int >= 1. Got 0 instead."
    """

    def __init__(self, parameter: str, owner: str, expected: str, got: object):
        super().__init__(f"The {parameter!r} parameter of {owner} must be {expected}. Got {got!r} instead.")
