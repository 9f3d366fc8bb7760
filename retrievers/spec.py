"""Retriever specs as users type them: ``bm25``, ``bm25(k1=0.9,b=0.4)``, ``rrf(bm25,lsa(dims=50),k=60)``,
``my.module:MyRetriever``, a named system ``mine=my.module:MyRetriever``, and a run file
``run(runs/es.trec)`` or ``run(runs/es.trec, name=prod)``.

A spec is a name (registered, or ``module:Class``) with optional parentheses holding keyword
parameters and, for fusions, child specs. Values are converted by the ``__init__`` annotation of
the class, so a parameter's type is declared once, in the class. A parameter given twice is an
error, and so is nesting deeper than :data:`MAX_NESTING`. At the top level only, ``NAME=SPEC``
names the system: ``NAME`` is its label everywhere in the results (inside parentheses ``x=...`` is a
parameter).

A retriever that declares ``positional_parameter`` (``run``: ``"path"``) takes its first argument
in the parentheses as that parameter's value, written as it is: ``run(runs/es-v2.trec)``,
``run(runs/{collection}.trec.gz)``. A value holding a comma, a parenthesis, ``=``, a quote or
whitespace is written in single or double quotes: ``run('my runs/es (v2).trec')``; quotes are taken
as written by :func:`split_systems` too.
"""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Callable
from dataclasses import dataclass, field

from corpora import ParameterError, RetbenchError
from retrievers.base import Retriever, RetrieverFailed
from retrievers.registry import get_class, names

#: Deepest nesting of parentheses a spec may use (fusions of fusions of ...): far beyond any real
#: experiment, and well inside Python's recursion limit for parsing, building and labelling.
MAX_NESTING = 32
_LABEL = re.compile(r"\w[\w.+-]*")
_TOKEN = re.compile(r"\s*(?:(?P<punct>[(),=])|(?P<quoted>'[^']*'|\"[^\"]*\")|(?P<word>[^\s(),=]+))")


@dataclass
class Spec:
    target: str
    children: list[Spec] = field(default_factory=list)
    params: dict[str, str] = field(default_factory=dict)
    called: bool = False  # parentheses were written
    label: str | None = None  # the system's name, when written as NAME=SPEC at the top level
    #: parameters whose value was written in quotes: taken as written (a grid, :mod:`retrievers.grid`,
    #: reads no range or list in them)
    quoted: set[str] = field(default_factory=set, repr=False)


class SpecError(RetbenchError):
    pass


def _tokenize(text: str) -> list[str]:
    tokens, pos = [], 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise SpecError(f"retriever spec {text!r}: cannot read {text[pos:]!r}")
        tokens.append(m.group(0).strip())
        pos = m.end()
    return [t for t in tokens if t]


def parse(text: str) -> Spec:
    """Parse one spec string.

    >>> parse("rrf(bm25,lsa(dims=50),k=30)")
    Spec(target='rrf', children=[Spec(target='bm25', children=[], params={}, called=False, label=None), \
Spec(target='lsa', children=[], params={'dims': '50'}, called=True, label=None)], params={'k': '30'}, \
called=True, label=None)
    >>> parse("mine=bm25(k1=0.9)").label
    'mine'
    """
    tokens = _tokenize(text)
    if not tokens:
        raise SpecError("empty retriever spec. Fix: name a retriever, e.g. bm25")
    label = None
    if len(tokens) >= 2 and tokens[1] == "=":
        label, tokens = _check_label(tokens[0], text), tokens[2:]
        if not tokens:
            raise SpecError(f"system {label!r} names no retriever. Fix: write {label}=SPEC, e.g. {label}=bm25")
    _check_nesting(tokens, text)
    spec, pos = _parse_spec(tokens, 0, text)
    if pos != len(tokens):
        raise SpecError(f"retriever spec {text!r}: unexpected {tokens[pos]!r}")
    spec.label = label
    return spec


def _check_label(label: str, text: str) -> str:
    if not _LABEL.fullmatch(label):
        raise SpecError(f"system name {label!r} in {text!r}: expected letters, digits, '_', '.', '+' or '-' "
                        "(it names files and TREC run tags). Fix: write e.g. mine=bm25(k1=0.9)")
    if label in names():
        raise SpecError(f"system name {label!r} in {text!r} is the name of a retriever, so the results would "
                        f"mislabel it. Fix: choose another name, e.g. my_{label}")
    return label


def _check_nesting(tokens: list[str], text: str) -> None:
    """Parentheses nested at most :data:`MAX_NESTING` deep (counted without recursion)."""
    depth = deepest = 0
    for token in tokens:
        if token == "(":
            depth += 1
            deepest = max(deepest, depth)
        elif token == ")":
            depth -= 1
    if deepest > MAX_NESTING:
        shown = text if len(text) <= 60 else text[:57] + "..."
        raise SpecError(f"retriever spec {shown!r} nests parentheses {deepest} deep; at most {MAX_NESTING} are "
                        "read. Fix: flatten it, e.g. rrf(a,b,c) instead of rrf(a,rrf(b,c))")


def _parse_spec(tokens: list[str], pos: int, text: str) -> tuple[Spec, int]:
    target = tokens[pos]
    if target in "(),=":
        raise SpecError(f"retriever spec {text!r}: expected a retriever name, got {target!r}")
    spec = Spec(target)
    pos += 1
    if pos < len(tokens) and tokens[pos] == "(":
        spec.called = True
        pos += 1
        while pos < len(tokens) and tokens[pos] != ")":
            if pos + 1 < len(tokens) and tokens[pos + 1] == "=":
                if pos + 2 >= len(tokens) or tokens[pos + 2] in "(),=":
                    raise SpecError(f"retriever spec {text!r}: parameter {tokens[pos]!r} has no value")
                value = tokens[pos + 2]
                if value[:1] in "'\"":
                    value = value[1:-1]
                    spec.quoted.add(tokens[pos])
                if tokens[pos] in spec.params:
                    raise SpecError(f"retriever spec {text!r}: parameter {tokens[pos]!r} of {target} is given "
                                    f"twice ({spec.params[tokens[pos]]} and {value}). Fix: keep one")
                spec.params[tokens[pos]] = value
                pos += 3
            else:
                child, pos = _parse_spec(tokens, pos, text)
                spec.children.append(child)
            if pos < len(tokens) and tokens[pos] == ",":
                pos += 1
            elif pos < len(tokens) and tokens[pos] != ")":
                raise SpecError(f"retriever spec {text!r}: expected ',' or ')', got {tokens[pos]!r}")
        if pos >= len(tokens):
            raise SpecError(f"retriever spec {text!r}: missing ')'")
        pos += 1
    return spec, pos


def split_systems(text: str) -> list[str]:
    """Split a ``--systems`` list on top-level commas: ``bm25,rrf(bm25,lsa)`` -> 2 specs.

    >>> split_systems("bm25, rrf(bm25,lsa(dims=5)) ,lsa")
    ['bm25', 'rrf(bm25,lsa(dims=5))', 'lsa']
    """
    parts, depth, current = [], 0, []
    quote = ""
    for ch in text:
        if quote:  # inside quotes nothing splits or nests: run('a,b (1).trec')
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0 and not quote:
            parts.append("".join(current).strip())
            current = []
        else:
            current.append(ch)
    parts.append("".join(current).strip())
    return [p for p in parts if p]


def _convert(cls: type[Retriever], name: str, raw: str, annotation: object) -> object:
    owner = cls.name or cls.__name__
    origin = typing.get_origin(annotation)
    candidates = typing.get_args(annotation) if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)) else (annotation,)
    candidates = tuple(c for c in candidates if c is not type(None))
    if raw.lower() == "none" and type(None) in (typing.get_args(annotation) or ()):
        return None
    for kind in candidates:
        if kind is bool:
            if raw.lower() in ("true", "1", "yes"):
                return True
            if raw.lower() in ("false", "0", "no"):
                return False
            continue
        if kind is int:
            try:
                return int(raw)
            except ValueError:
                continue
        if kind is float:
            try:
                return float(raw)
            except ValueError:
                continue
        if kind is str:
            return raw
    expected = " or ".join(getattr(k, "__name__", str(k)) for k in candidates) or "a value"
    raise ParameterError(name, owner, f"{'an' if expected[0] in 'aeiou' else 'a'} {expected}", raw)


def build(spec: Spec | str, make_child: Callable[[Spec], Retriever] | None = None) -> Retriever:
    """Instantiate the retriever a spec describes, type-checking every parameter.

    ``make_child`` builds each child spec (default: :func:`build` itself); a grid passes one that
    hands every point the same object for the same child (:mod:`retrievers.shared`).
    """
    if isinstance(spec, str):
        spec = parse(spec)
    cls = get_class(spec.target)
    owner = cls.name or spec.target
    signature = inspect.signature(cls.__init__)
    try:
        hints = typing.get_type_hints(cls.__init__)
    except Exception:
        hints = {}
    params = {n: p for n, p in signature.parameters.items() if n != "self"}
    spec = _positional_argument(cls, spec, owner)
    accepts_children = any(p.kind is p.VAR_POSITIONAL for p in params.values())
    keywords = {n: p for n, p in params.items() if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}
    if spec.children and not accepts_children:
        raise SpecError(f"{owner} takes no child retrievers, got {', '.join(c.target for c in spec.children)}. "
                        f"Its parameters: {_describe(keywords)}")
    if accepts_children and spec.called and not spec.children and not spec.params:
        raise SpecError(f"{owner}() names no retrievers to fuse. Fix: write {owner} for the defaults "
                        f"or list them, e.g. {owner}(bm25,lsa)")
    kwargs = {}
    for key, raw in spec.params.items():
        if key not in keywords:
            raise SpecError(f"{owner} has no parameter {key!r}. Its parameters: {_describe(keywords)}")
        annotation = hints.get(key, type(keywords[key].default) if keywords[key].default is not inspect.Parameter.empty else str)
        kwargs[key] = _convert(cls, key, raw, annotation)
    children = [(make_child or build)(c) for c in spec.children]
    try:
        retriever = cls(*children, **kwargs)
    except TypeError as exc:  # e.g. an abstract method left out, or an __init__ that rejects children
        raise SpecError(f"retriever {spec.target!r} cannot be created: {exc}") from exc
    except RetbenchError:
        raise
    except (Exception, SystemExit) as exc:  # a plugin's own __init__ failed (or exited): name it, as in fit/search
        raise RetrieverFailed(spec.target, "__init__", exc) from exc
    if spec.label is not None:
        retriever.label = spec.label
    return retriever


def _positional_argument(cls: type[Retriever], spec: Spec, owner: str) -> Spec:
    """``spec`` with its first child read as the class's ``positional_parameter`` (``run(PATH)``):
    the child's text as written, quotes removed."""
    parameter = getattr(cls, "positional_parameter", None)
    if parameter is None or not spec.children:
        return spec
    first, *rest = spec.children
    if rest or first.children or first.params or first.called:
        raise SpecError(f"{owner} takes one {parameter}, then keyword parameters. Fix: write e.g. "
                        f"{owner}(runs/es.trec, name=es), quoting a {parameter} that holds ',', '(', ')', '=' or a "
                        f"space: {owner}('my runs/es.trec')")
    if parameter in spec.params:
        raise SpecError(f"{owner}: {parameter} is given twice ({first.target} and {spec.params[parameter]}). Fix: keep one")
    value = first.target[1:-1] if first.target[:1] in "'\"" else first.target
    params = {parameter: value, **spec.params}
    return Spec(spec.target, [], params, spec.called, spec.label, {*spec.quoted, parameter})


def _describe(keywords: dict[str, inspect.Parameter]) -> str:
    if not keywords:
        return "none"
    return ", ".join(f"{n}={p.default!r}" if p.default is not inspect.Parameter.empty else n
                     for n, p in keywords.items())
