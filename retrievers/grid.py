"""Grids of parameters written inside a retriever spec, for ``bench tune``.

Any parameter of any retriever in a spec, children included, may hold several values:

* a **range** ``start:stop:step`` -- start, start + step, start + 2 step, ... up to stop. Stop is a
  point when it lands on the grid within a tolerance of 1e-9 x step (``0:1:0.1`` ends at 1,
  ``0:1:0.3`` at 0.9). The points are computed in decimal from the digits typed, never accumulated
  in binary floating point, so ``0.6:1.8:0.2`` is 0.6, 0.8, ..., 1.8 and not 1.7999999999999998;
* a **list** ``x|y|z`` -- each item a value or a range (``k1=0.5|0.9:1.5:0.2``);
* a value written in **quotes** is taken as written (``dense(model='C:/models/x')``).

Examples: ``bm25(k1=0.6:1.8:0.2,b=0.3:0.9:0.1)``, ``weighted(bm25,dense,alpha=0:1:0.1)``,
``rrf(bm25,lsa,k=10|30|60|100)``, ``weighted(bm25(k1=0.9|1.2),lsa,alpha=0.3|0.5)``.

**Axes** are the swept parameters, depth first: a retriever's own parameters (in the order written)
before its children's. An axis is named by its parameter, prefixed for a child by the path of
targets from the top (``bm25.k1`` in ``weighted(bm25(k1=...),lsa,alpha=...)``); a target that
occurs more than once among its siblings gets its 1-based position among them (``bm25#2.b``).
**Grid order**: the cartesian product of the axes, the last axis varying fastest:
``bm25(k1=1|2,b=0.3|0.4)`` is (1, 0.3), (1, 0.4), (2, 0.3), (2, 0.4). The **default point** is the
spec with every swept parameter left out (each at its class default), the others as written.

Checks, each a :class:`~retrievers.spec.SpecError` with a fix, before anything is fitted: a range
that is empty (stop below start), a step that is 0 or negative, a range that is not three numbers,
an empty list item, a run file anywhere in the spec (``run(PATH)``: nothing to tune), a parameter the
retriever does not have, a value the retriever refuses (every
value of every axis is built once), two values of one axis that are the same setting
(``k1=1|1.0``), a spec with nothing to sweep, and more points than ``max_points``
(:data:`MAX_POINTS` unless raised).
"""

from __future__ import annotations

import copy
import itertools
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from corpora import RetbenchError
from retrievers.registry import get_class
from retrievers.run_file import RunSystem
from retrievers.spec import Spec, SpecError, _describe, build, parse

__all__ = ["MAX_POINTS", "Axis", "Grid", "read_grid", "spec_text"]

#: Grid points allowed unless the caller raises the limit (``--max-points``).
MAX_POINTS = 10_000
#: How close, in steps, the last point of a range must come to its stop for stop to be a point.
RANGE_TOLERANCE = Decimal("1e-9")
_SPECIAL = set("(),=|:'\" \t")


@dataclass(frozen=True)
class Axis:
    """One swept parameter: where it sits in the spec tree and its values, as a spec holds them."""

    name: str  # e.g. "k1", or "bm25.k1" for a child's
    path: tuple[int, ...]  # child positions from the top retriever to the one holding the parameter
    parameter: str
    values: tuple[str, ...]
    written: str  # as typed (or listed), for messages and the manifest


@dataclass(frozen=True)
class Grid:
    """A spec with swept parameters: ``base`` (the spec without them: the default point) and the axes."""

    text: str
    base: Spec
    axes: tuple[Axis, ...]

    def __len__(self) -> int:
        return math.prod(len(axis.values) for axis in self.axes)

    @property
    def label(self) -> str | None:
        """The name written as ``NAME=SPEC``, if any."""
        return self.base.label

    def points(self) -> Iterator[tuple[int, ...]]:
        """Every point as the index of its value on each axis, in grid order (the last axis fastest)."""
        return itertools.product(*(range(len(axis.values)) for axis in self.axes))

    def values(self, point: Sequence[int]) -> dict[str, str]:
        """Axis name -> the point's value on it."""
        return {axis.name: axis.values[i] for axis, i in zip(self.axes, point)}

    def spec(self, point: Sequence[int]) -> Spec:
        """The spec of one point (a fresh copy, without the system's name)."""
        spec = copy.deepcopy(self.base)
        spec.label = None
        for axis, i in zip(self.axes, point):
            _node(spec, axis.path).params[axis.parameter] = axis.values[i]
        return spec

    def default_spec(self) -> Spec:
        """The spec of the default point: every swept parameter at its class default."""
        spec = copy.deepcopy(self.base)
        spec.label = None
        return spec


def spec_text(spec: Spec) -> str:
    """The spec as text that :func:`~retrievers.spec.parse` reads back to the same retriever:
    children in order, then the parameters sorted by name (so one setting has one text), a value
    with a special character quoted.

    >>> spec_text(parse("rrf(bm25(b=0.4,k1=0.9),lsa,k=30)"))
    'rrf(bm25(b=0.4,k1=0.9),lsa,k=30)'
    """
    parts = [spec_text(child) for child in spec.children]
    parts += [f"{key}={_quoted(spec.params[key])}" for key in sorted(spec.params)]
    return f"{spec.target}({','.join(parts)})" if parts or spec.called else spec.target


def _quoted(value: str) -> str:
    if value and not (set(value) & _SPECIAL):
        return value
    return f'"{value}"' if "'" in value else f"'{value}'"


def _node(spec: Spec, path: Sequence[int]) -> Spec:
    for position in path:
        spec = spec.children[position]
    return spec


def _walk(spec: Spec, path: tuple[int, ...] = (), prefix: str = "") -> Iterator[tuple[Spec, tuple[int, ...], str]]:
    """Every retriever of the tree, depth first: (its spec, its path, the prefix of its axis names)."""
    yield spec, path, prefix
    targets = [child.target for child in spec.children]
    seen: dict[str, int] = {}
    for position, child in enumerate(spec.children):
        seen[child.target] = seen.get(child.target, 0) + 1
        name = child.target if targets.count(child.target) == 1 else f"{child.target}#{seen[child.target]}"
        yield from _walk(child, (*path, position), f"{prefix}{name}.")


def _shown(text: str) -> str:
    return text if len(text) <= 80 else text[:77] + "..."


def _number(text: str, where: str) -> Decimal:
    try:
        value = Decimal(text.strip())
    except InvalidOperation:
        value = None
    if value is None or not value.is_finite():
        raise SpecError(f"{where}: {text!r} is not a finite number. Fix: a range is start:stop:step with "
                        "numbers, e.g. 0.6:1.8:0.2 (quote the value to pass it as it is)")
    return value


def _decimal_text(value: Decimal) -> str:
    """``Decimal('0.60')`` -> ``'0.6'``, ``Decimal('1E+2')`` -> ``'100'``."""
    text = format(value.normalize(), "f")
    return "0" if text == "-0" else text


def _range(item: str, where: str, limit: int) -> list[str]:
    parts = item.split(":")
    if len(parts) != 3:
        raise SpecError(f"{where}: range {item!r} has {len(parts)} parts. Fix: write start:stop:step, e.g. "
                        "0.6:1.8:0.2 (quote the value to pass it as it is)")
    start, stop, step = (_number(part, where) for part in parts)
    if step <= 0:
        raise SpecError(f"{where}: range {item!r} has step {parts[2].strip()}; a step must be > 0. "
                        f"Fix: write e.g. {parts[0].strip()}:{parts[1].strip()}:0.1")
    if stop < start:
        raise SpecError(f"{where}: range {item!r} is empty: it stops ({parts[1].strip()}) below where it starts "
                        f"({parts[0].strip()}). Fix: write start:stop:step with start <= stop, e.g. "
                        f"{parts[1].strip()}:{parts[0].strip()}:{parts[2].strip()}")
    steps = int((stop - start) / step + RANGE_TOLERANCE)  # floor: both are >= 0
    if steps + 1 > limit:
        raise SpecError(f"{where}: range {item!r} alone has {steps + 1:,} points, more than the {limit:,} allowed. "
                        "Fix: a larger step, or raise the limit (`max_points`)")
    points = [start + i * step for i in range(steps + 1)]
    if abs(stop - points[-1]) <= step * RANGE_TOLERANCE:
        points[-1] = stop  # landed on stop within the tolerance: stop itself, as typed
    return [_decimal_text(p) for p in points]


def _expand(written: str, where: str, limit: int) -> list[str]:
    """The values of one swept parameter, in the order written."""
    items = written.split("|")
    if any(not item.strip() for item in items):
        raise SpecError(f"{where}: list {written!r} has an empty item. Fix: separate values by single '|', "
                        "e.g. 10|30|60")
    values: list[str] = []
    for item in items:
        values.extend(_range(item, where, limit) if ":" in item else [item.strip()])
    return values


def _is_swept(spec: Spec, key: str) -> bool:
    raw = spec.params[key]
    return key not in spec.quoted and ("|" in raw or ":" in raw)


def _check_parameter(spec: Spec, key: str, text: str) -> None:
    cls = get_class(spec.target)
    parameters = cls.parameters()
    if key not in parameters:
        owner = cls.name or spec.target
        example = next(iter(parameters), None)
        fix = f"sweep one of them, e.g. {owner}({example}=...)" if example else f"{owner} has no parameter to sweep"
        raise SpecError(f"grid {_shown(text)!r}: {owner} has no parameter {key!r} (its parameters: "
                        f"{_describe(parameters)}). Fix: {fix}")


def read_grid(grid: str | Spec | Mapping[str, Mapping[str, Sequence[object]]], *, max_points: int = MAX_POINTS) -> Grid:
    """Read a grid: a spec string with ranges and lists, a parsed :class:`~retrievers.spec.Spec`, or
    a mapping ``{spec: {axis name: values}}`` (``{"bm25": {"k1": [0.9, 1.2], "b": [0.4, 0.75]}}``,
    ``{"weighted(bm25,lsa)": {"alpha": [0.3, 0.5], "bm25.k1": [0.9, 1.2]}}``), whose values are
    taken as written (``str`` of each). Every check of the module docstring runs here.

    >>> grid = read_grid("bm25(k1=0.6:1.0:0.2,b=0.4|0.75)")
    >>> [axis.name for axis in grid.axes], [axis.values for axis in grid.axes], len(grid)
    (['k1', 'b'], [('0.6', '0.8', '1'), ('0.4', '0.75')], 6)
    >>> spec_text(grid.spec((2, 0))), spec_text(grid.default_spec())
    ('bm25(b=0.4,k1=1)', 'bm25')
    """
    if isinstance(max_points, bool) or not isinstance(max_points, int) or max_points < 1:
        raise RetbenchError(f"`max_points` must be an int >= 1. Got {max_points!r} instead. Fix: pass e.g. "
                            f"`max_points={MAX_POINTS}`")
    if isinstance(grid, Mapping):
        return _from_mapping(grid, max_points)
    if isinstance(grid, Spec):
        spec, text = copy.deepcopy(grid), spec_text(grid)
    elif isinstance(grid, str):
        spec, text = parse(grid), grid.strip()
    else:
        raise RetbenchError(f"grid is a {type(grid).__name__}, not a spec string or a mapping. Fix: pass e.g. "
                            "'bm25(k1=0.6:1.8:0.2,b=0.3:0.9:0.1)' or {'bm25': {'k1': [0.9, 1.2]}}")
    _refuse_runs(spec, text)
    axes: list[Axis] = []
    for node, path, prefix in _walk(spec):
        for key in [k for k in node.params if _is_swept(node, k)]:
            _check_parameter(node, key, text)
            written = node.params.pop(key)
            node.called = bool(node.params or node.children)  # rrf(k=10|30) defaults to rrf, not rrf()
            where = f"grid {_shown(text)!r}, parameter {prefix}{key}"
            axes.append(Axis(f"{prefix}{key}", path, key, tuple(_expand(written, where, max_points)), written))
    return _checked(Grid(text, spec, tuple(axes)), max_points)


def _refuse_runs(spec: Spec, text: str) -> None:
    """A run file (``run(PATH)``) anywhere in the grid is refused: it is a fixed ranking, with nothing to tune."""
    if any(node.target == RunSystem.name for node, _, _ in _walk(spec)):
        raise SpecError(f"grid {_shown(text)!r} holds a run file, {RunSystem.name}(...), a fixed ranking with no parameter "
                        "to tune. Fix: tune the system that wrote it, or compare the run with bench compare")


def _from_mapping(grid: Mapping[str, Mapping[str, Sequence[object]]], max_points: int) -> Grid:
    if len(grid) != 1:
        raise RetbenchError(f"a grid mapping holds one spec and its axes, got {len(grid)} keys. Fix: pass e.g. "
                            "{'bm25': {'k1': [0.9, 1.2], 'b': [0.4, 0.75]}}")
    (text, sweeps), = grid.items()
    if not isinstance(text, str) or not isinstance(sweeps, Mapping):
        raise RetbenchError(f"a grid mapping is {{spec: {{axis name: values}}}}, got {{{text!r}: {sweeps!r}}}. "
                            "Fix: pass e.g. {'bm25': {'k1': [0.9, 1.2]}}")
    base = read_grid(text, max_points=max_points) if any(_is_swept(n, k) for n, _, _ in _walk(parse(text))
                                                         for k in n.params) else None
    spec = base.base if base is not None else parse(text)
    _refuse_runs(spec, text)
    axes = list(base.axes) if base is not None else []
    nodes = list(_walk(spec))
    for name, values in sweeps.items():
        found = [(node, path, prefix) for node, path, prefix in nodes
                 if isinstance(name, str) and name.startswith(prefix) and "." not in name[len(prefix):]]
        if not found:
            names = ", ".join(f"{prefix}PARAMETER" for _, _, prefix in nodes)
            raise SpecError(f"grid {text!r}: axis {name!r} names no retriever of the spec. Fix: name a parameter "
                            f"as {names}")
        node, path, prefix = max(found, key=lambda entry: len(entry[2]))
        key = name[len(prefix):]
        _check_parameter(node, key, text)
        if key in node.params or any(axis.name == name for axis in axes):
            raise SpecError(f"grid {text!r}: parameter {name!r} is given in the spec and in the mapping. "
                            "Fix: give it in one place")
        if isinstance(values, (str, bytes)) or not isinstance(values, Sequence) or not values:
            raise SpecError(f"grid {text!r}: axis {name!r} must be a non-empty list of values, got {values!r}. "
                            "Fix: pass e.g. [0.9, 1.2]")
        written = [_value_text(v) for v in values]
        axes.append(Axis(name, path, key, tuple(written), "|".join(written)))
    return _checked(Grid(text, spec, tuple(axes)), max_points)


def _value_text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "none"
    return str(value)


def _checked(grid: Grid, max_points: int) -> Grid:
    """Refuse a grid with nothing to sweep, too many points, or a value its retriever refuses."""
    if not grid.axes:
        raise SpecError(f"grid {_shown(grid.text)!r} sweeps no parameter. Fix: give a parameter a range or a list, "
                        "e.g. bm25(k1=0.6:1.8:0.2,b=0.3:0.9:0.1) or rrf(bm25,lsa,k=10|30|60)")
    size = len(grid)
    if size > max_points:
        shape = " x ".join(f"{a.name} {len(a.values)}" for a in grid.axes)
        raise SpecError(f"grid {_shown(grid.text)!r} has {size:,} points ({shape}), more than the {max_points:,} "
                        f"allowed. Fix: coarsen a range or shorten a list, or raise the limit (`max_points={size}`)")
    try:
        build(grid.default_spec())
    except RetbenchError as exc:
        raise SpecError(f"grid {_shown(grid.text)!r}: {exc}") from exc
    for axis in grid.axes:
        labels: dict[str, str] = {}
        for value in axis.values:
            single = grid.default_spec()
            _node(single, axis.path).params[axis.parameter] = value
            try:
                label = build(single).label
            except RetbenchError as exc:
                fix = "" if "Fix:" in str(exc) else (f" Fix: give {axis.name} values that {single.target} takes "
                                                     "(`bench retrievers` lists each parameter and its default)")
                raise SpecError(f"grid {_shown(grid.text)!r}, {axis.name}={value}: {exc}{fix}") from exc
            if label in labels:
                raise SpecError(f"grid {_shown(grid.text)!r}: {axis.name} lists the same setting twice "
                                f"({labels[label]} and {value}). Fix: keep one")
            labels[label] = value
    return grid
