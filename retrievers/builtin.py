"""Importing this module registers the built-in retrievers (none of them imports a heavy library)."""

from retrievers import bm25, dense, fusion, lsa  # noqa: F401
