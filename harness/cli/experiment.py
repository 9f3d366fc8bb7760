"""Experiment files: a ``bench compare`` configuration in TOML (``bench compare --config FILE``).

Keys are the long options of ``bench compare`` (with dashes or underscores; the command hands its
options to :func:`load_experiment`, so a new option is a valid key at once) and the fields of
:class:`~harness.core.record.CompareConfig` that no option sets (``confidence``, ``cache``);
``systems``, ``metrics`` and ``facets`` may be lists, one item per spec or name, written exactly
as on the command line. Options given on the command line override the file::

    corpus = "article"
    systems = ["bm25", "bm25(k1=0.9,b=0.4)", "rrf(bm25,lsa,k=60)", "weighted(bm25,dense,alpha=0.3)"]
    metrics = ["ndcg@5", "mrr"]
    baseline = "bm25"
    bootstrap_samples = 2000
    no_cache = true

Called without ``options``, the keys are ``CompareConfig``'s fields and ``out``, the folder that
receives the results folder (``bench compare`` passes its options, and turns the values into the
objects :func:`harness.compare` takes). Relative paths in the file (``out``, ``cache_dir``,
``facets_file``, and a ``corpus`` that is not a bundled name) are read from the file's own folder,
so an experiment runs the same from any working directory; an empty one is an error (it would name
the file's folder). A UTF-8 byte-order mark at the start (as some Windows editors
write) is skipped. The file is read like every input (:func:`corpora.input_files.read_input_bytes`): a
device such as ``/dev/zero`` is refused, a line over 1 MiB is an error.

Every value is checked against the type of its field here, so a mistake names the file and line.
"""

from __future__ import annotations

import re
import sys
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from corpora import InputFileError, bundled_names
from corpora.loading import source_of
from corpora.input_files import MAX_JUDGMENT_LINE, decode_utf8, read_input_bytes

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["API_OPTIONS", "OptionKey", "config_keys", "load_experiment"]

_LIST_KEYS = ("systems", "metrics", "facets")
#: Keys holding paths (read from the file's folder) -> what each names.
_PATH_KEYS = {"corpus": "corpus (a bundled name or a folder)", "cache_dir": "folder", "out": "folder",
              "facets_file": "file"}


@dataclass(frozen=True)
class OptionKey:
    """A key of the file that is an option of the command reading it.

    ``kinds``: the TOML value types it accepts. ``check``: what else a value must satisfy (one
    of the option's choices, its range); it raises ``ValueError`` with the reason. None: nothing.
    """

    kinds: tuple[type, ...]
    check: Callable[[object], None] | None = None


#: The keys of the Python API (no command): the results folder of ``bench compare --out``.
API_OPTIONS: dict[str, OptionKey] = {"out": OptionKey((str,))}


def config_keys() -> list[str]:
    """The keys an experiment file may use (underscore spelling): ``CompareConfig``'s options by their
    own names (:meth:`~harness.core.record.CompareConfig.flat`, the option groups' fields included)."""
    from harness.core.record import CompareConfig

    return list(CompareConfig().flat())


def _hints() -> dict[str, object]:
    """Option name -> its annotation: ``CompareConfig``'s own fields and its option groups' fields."""
    from harness.core.record import OPTION_GROUPS, CompareConfig

    hints = {name: hint for name, hint in typing.get_type_hints(CompareConfig).items() if name not in OPTION_GROUPS}
    for group in CompareConfig().groups().values():
        hints.update(typing.get_type_hints(type(group)))
    return {name: hints[name] for name in config_keys()}


def _field_types() -> dict[str, tuple[type, ...]]:
    """Option name -> the TOML value types it accepts, read from the annotations."""
    accepted: dict[str, tuple[type, ...]] = {}
    for name, hint in _hints().items():
        options = typing.get_args(hint) if typing.get_args(hint) and typing.get_origin(hint) is not list else (hint,)
        kinds = tuple(k for k in options if k in (str, int, float, bool))
        if float in kinds:
            kinds += (int,)  # TOML writes 0.95 and 1 differently; both are numbers
        accepted[name] = kinds
    return accepted


def _describe(kinds: tuple[type, ...], list_allowed: bool) -> str:
    names = {str: "a string", int: "an integer", float: "a number", bool: "true or false"}
    words = list(dict.fromkeys(names[k] for k in kinds))
    if list_allowed:
        words.append("a list of strings")
    return " or ".join(words)


def _line_of(text: str, key: str) -> int | None:
    """The line where ``key`` is assigned at the top level, for messages (None if not found)."""
    pattern = re.compile(rf"^\s*[\"']?{re.escape(key)}[\"']?\s*=")
    for number, line in enumerate(text.splitlines(), 1):
        if pattern.match(line):
            return number
    return None


def load_experiment(path: Path, options: Mapping[str, OptionKey] | None = None) -> dict[str, object]:
    """Read an experiment file: ``CompareConfig`` keyword arguments and command options.

    ``options``: the keys besides ``CompareConfig``'s fields (underscore spelling -> what they
    accept); default :data:`API_OPTIONS`. Returns a dict with one entry per key of the file
    (underscore spelling). Raises :class:`~corpora.InputFileError` naming the file (and line where
    known) for an unreadable file, invalid TOML, an unknown key (listing the valid ones) or a value
    of the wrong type.
    """
    path = Path(path)
    options = API_OPTIONS if options is None else options
    if not path.exists():
        raise InputFileError(path, "experiment file not found", fix="check the path of the experiment file")
    if path.is_dir():
        raise InputFileError(path, "is a folder, not an experiment file", fix="name a .toml file")
    # bounded like every input (a device such as /dev/zero is refused); -sig: a byte-order mark is not TOML
    text = decode_utf8(path, read_input_bytes(path, max_line=MAX_JUDGMENT_LINE, what="an experiment file"))
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line = getattr(exc, "lineno", None)
        if line is None:  # before Python 3.14 the line is only in the message
            found = re.search(r"line (\d+)", str(exc))
            line = int(found.group(1)) if found else None
        raise InputFileError(path, f"not valid TOML ({getattr(exc, 'msg', exc)})", line=line,
                             fix="see the example in the docs of `bench compare --config`") from None
    accepted = {**_field_types(), **{key: option.kinds for key, option in options.items()}}
    out: dict[str, object] = {}
    for key, value in data.items():
        name = key.replace("-", "_")
        line = _line_of(text, key)
        if name not in accepted:
            raise InputFileError(path, f"unknown key {key!r}", line=line, fix=f"use one of {', '.join(accepted)}")
        list_allowed = name in _LIST_KEYS
        if isinstance(value, list) and list_allowed:
            if not all(isinstance(v, str) for v in value):
                raise InputFileError(path, f"{key} must be a list of strings, got {value!r}", line=line,
                                     fix=f'write each item in quotes, e.g. {key} = ["bm25", "lsa"]')
        elif isinstance(value, bool) and bool not in accepted[name] or not isinstance(value, accepted[name]):
            raise InputFileError(path, f"{key} must be {_describe(accepted[name], list_allowed)}, got {value!r}",
                                 line=line)
        check = options[name].check if name in options else None
        if check is not None and not isinstance(value, list):
            try:
                check(value)
            except ValueError as exc:
                raise InputFileError(path, f"{key}: {exc}", line=line) from None
        out[name] = value
    for name in _PATH_KEYS:
        if isinstance(out.get(name), str):
            if not str(out[name]).strip():  # read from the file's folder, "" would be that folder
                raise InputFileError(path, f"{name} is empty", line=_line_of(text, name),
                                     fix=f"name the {_PATH_KEYS[name]}, "
                                         f"or leave the key out for the default")
            out[name] = _from_folder_of(path, name, str(out[name]))
    return out


def _from_folder_of(path: Path, key: str, value: str) -> str:
    """A relative path of the file, read from the file's folder; a bundled corpus name stays a name
    unless a folder of that name sits beside the file (an existing folder wins, as on the command line),
    and a source id (``irds:<id>``) stays an id, as ``load_dataset`` reads it first."""
    if key == "corpus" and source_of(value) is not None:
        return value
    beside = path.parent / Path(value).expanduser()
    if key == "corpus" and value in bundled_names() and not beside.exists():
        return value
    return str(beside)
