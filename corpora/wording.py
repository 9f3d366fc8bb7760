"""Counts in messages: ``1 query``, ``14 queries``, never ``1 queries``.

Every layer words its messages with :func:`counted` (it lives in ``corpora``, the lowest layer,
so that the loaders can use it too).
"""

from __future__ import annotations


def counted(n: int, noun: str, plural: str | None = None, *, spec: str = "") -> str:
    """``n`` and the noun, plural unless n is 1: ``1 system``, ``4 systems``, ``1 query``.

    The plural is ``plural`` where given, else the noun with ``s`` (``y`` after a consonant becomes
    ``ies``); ``spec`` formats the number (``","`` groups its thousands).

    >>> counted(1, "system"), counted(14, "query"), counted(0, "pair"), counted(2, "day")
    ('1 system', '14 queries', '0 pairs', '2 days')
    >>> counted(1_837, "judgment", spec=","), counted(1, "query lists", "queries list")
    ('1,837 judgments', '1 query lists')
    """
    if n == 1:
        word = noun
    elif plural is not None:
        word = plural
    elif noun.endswith("y") and noun[-2:-1] not in tuple("aeiou"):
        word = noun[:-1] + "ies"
    else:
        word = noun + "s"
    return f"{n:{spec}} {word}"
