"""The user-error family, re-exported for the harness (defined in ``corpora.errors``)."""

from corpora.errors import InputFileError, ParameterError, RetbenchError, UnknownNameError

__all__ = ["InputFileError", "ParameterError", "RetbenchError", "UnknownNameError"]
