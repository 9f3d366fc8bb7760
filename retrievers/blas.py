"""One BLAS thread for the products whose last bits must not depend on the machine.

numpy's BLAS (OpenBLAS) splits a dense product among its threads, and how it splits it changes the
last bits of the result: the same fit and the same queries scored on a 2-core laptop, on a 16-core
server and on a Dask worker (which runs BLAS on one thread) would write different scores into the
run files. Retrievers whose scores come from dense products (``lsa``, ``dense``) compute them inside
:func:`one_blas_thread`, so a results folder is the same bytes wherever it was made.
"""

from __future__ import annotations

from typing import Any

__all__ = ["one_blas_thread"]


def one_blas_thread() -> Any:
    """A context manager running BLAS on one thread inside its ``with`` block (threadpoolctl, which
    scikit-learn already depends on)."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="blas")
