"""Parameters chosen for the collection: the one rule for every default that depends on the corpus.

A parameter whose ``__init__`` default is ``None`` is chosen when the retriever meets its data, in
this order (:func:`choose`):

1. the value given (``lsa(dims=50)``, ``LSA(dims=50)``) always wins;
2. else the value the corpus carries for this retriever (:attr:`corpora.Corpus.retriever_defaults`):
   the bundled article carries its own experiment's (``lsa`` 6 dimensions, ``rrf`` and ``weighted``
   10 deep), so that its table comes out as the article printed it;
3. else the retriever's rule from the collection: what a practitioner would pick for its size or
   for the run's depth. The built-in rules:

   * ``lsa`` ``dims``: :data:`LSA_DIMS` (100, scikit-learn's recommendation for LSA and the usual
     100-300 of the LSI literature), at most half the rank the collection allows,
     ``(min(documents, terms) - 1) // 2``, and at least 1 (:func:`lsa_dims`);
   * ``rrf`` and ``weighted`` ``depth``: as deep as the run (``--depth``, the ``k`` of the
     search): a fusion that reads less than it returns measures its own cut.

What was chosen is kept on the retriever (:func:`chosen`), and the harness shows it: the ``systems:``
line and the manifest give every system as it ran (:func:`as_run`, e.g. ``rrf(bm25,lsa(dims=100),depth=1000)``).
The label stays as written (``lsa``), so a label names what the user asked for, the as-run spec what ran.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from retrievers.base import Retriever, _format_value

if TYPE_CHECKING:
    from corpora import Corpus

__all__ = ["LSA_DIMS", "adopt_chosen", "as_run", "carried", "choose", "chosen", "lsa_dims"]

#: LSA's dimensions on a collection large enough for them (documents and terms above 200).
LSA_DIMS = 100
_CHOSEN = "_chosen_for_collection"


def lsa_dims(documents: int, terms: int) -> int:
    """LSA's dimensions for a collection of ``documents`` x ``terms`` when none is given or carried.

    >>> lsa_dims(1400, 4000), lsa_dims(82, 800), lsa_dims(3, 3), lsa_dims(2, 50)
    (100, 40, 1, 1)
    """
    return max(1, min(LSA_DIMS, (min(documents, terms) - 1) // 2))


def carried(corpus: Corpus | None, retriever: str, parameter: str) -> Any:
    """The value ``corpus`` carries for ``retriever``'s ``parameter``, or None."""
    table = getattr(corpus, "retriever_defaults", None) or {}
    return (table.get(retriever) or {}).get(parameter)


def choose(retriever: Retriever, parameter: str, corpus: Corpus | None, rule: Callable[[], Any]) -> Any:
    """The value of ``parameter`` for this fit or search: the one given, else the corpus's, else
    ``rule()``. A chosen value (not a given one) is remembered for :func:`chosen`."""
    given = getattr(retriever, parameter)
    if given is not None:
        return given
    value = carried(corpus, retriever.name, parameter)
    if value is None:
        value = rule()
    retriever.__dict__.setdefault(_CHOSEN, {})[parameter] = value
    return value


def chosen(retriever: Retriever) -> dict[str, Any]:
    """The parameters chosen for the collection at the retriever's last fit or search (name -> value)."""
    return dict(retriever.__dict__.get(_CHOSEN, {}))


def adopt_chosen(retriever: Retriever, values: dict[str, Any]) -> None:
    """Remember ``values`` (:func:`chosen` of a copy of ``retriever`` fitted elsewhere, on an engine's
    worker) as chosen by ``retriever`` itself, for the manifest and :func:`as_run`."""
    if values:
        retriever.__dict__.setdefault(_CHOSEN, {}).update(values)


def as_run(retriever: Retriever) -> str:
    """The spec of ``retriever`` as it ran: its name, its children as they ran, every parameter given
    or chosen for the collection (defaults that no collection changes left out).

    >>> from retrievers.fusion import RRF
    >>> from retrievers.lsa import LSA
    >>> from retrievers.bm25 import BM25
    >>> as_run(RRF(BM25(), LSA(dims=50), k=30))
    'rrf(bm25,lsa(dims=50),k=30)'
    """
    children = getattr(retriever, "children", None) or ()
    params = {**retriever.non_default_params(), **chosen(retriever)}
    parts = [as_run(c) for c in children]
    parts += [f"{k}={v!r}" if isinstance(v, float) else f"{k}={_format_value(v)}" for k, v in params.items()]
    return f"{retriever.name}({','.join(parts)})" if parts else retriever.name
