"""Importing this module registers the built-in retrievers."""

from retrievers import bm25, fusion, lsa  # noqa: F401
