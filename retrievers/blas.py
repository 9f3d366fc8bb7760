"""One thread for the computations whose last bits must not depend on the machine.

numpy's BLAS (OpenBLAS) splits a dense product among its threads, and how it splits it changes the
last bits of the result: the same fit and the same queries scored on a 2-core laptop, on a 16-core
server and on a Dask worker (which runs BLAS on one thread) would write different scores into the
run files. Retrievers whose scores come from dense products (``lsa``, ``dense``) compute them inside
:func:`one_blas_thread`, so a results folder is the same bytes wherever it was made.

torch's intra-op threads do the same to an encoder's vectors: ``dense`` on the bundled corpus gave
other last bits on two threads than on one, which is what a Dask worker runs (its nanny sets
``OMP_NUM_THREADS=1``), and what a process runs once a ``LocalCluster`` has set that variable before
torch loaded. ``dense`` encodes inside :func:`one_torch_thread`.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any

__all__ = ["one_blas_thread", "one_torch_thread"]


def one_blas_thread() -> Any:
    """A context manager running BLAS on one thread inside its ``with`` block (threadpoolctl, which
    scikit-learn already depends on)."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="blas")


@contextlib.contextmanager
def one_torch_thread() -> Iterator[None]:
    """torch on one intra-op thread inside the ``with`` block; the process's count is restored after.
    Nothing to pin where torch is not loaded (an encoder that does not use it)."""
    torch = sys.modules.get("torch")
    if torch is None:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)
