"""bench judge runs on the serve extra's web stack (FastAPI, uvicorn: harness.web): without the extra
it says how to install it in one line and exits 2, before it reads or writes anything. The absence
is simulated here, so the test runs with or without the extra."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from harness.cli import main

INSTALL = "Fix: pip install 'retbench[serve]'"


def test_without_the_extra_judge_says_how_to_install_it(runner, monkeypatch, tmp_path: Path) -> None:
    for name in ("fastapi", "uvicorn"):  # a None entry in sys.modules: find_spec returns None, as without the extra
        monkeypatch.setitem(sys.modules, name, None)
    pool = tmp_path / "pool.tsv"
    pool.write_text("query_id\tdoc_id\nq01\tsso1\n")
    out = tmp_path / "judged.txt"
    done = runner.invoke(main, ["judge", str(pool), "--corpus", "article", "--out", str(out)])
    assert done.exit_code == 2
    assert done.stderr == f"error: bench judge needs fastapi and uvicorn, which are not installed. {INSTALL}\n"
    assert done.stdout == "" and not out.exists()  # nothing announced, nothing written


def test_in_a_venv_without_the_extra_judge_refuses_for_real(runner, tmp_path: Path) -> None:
    try:
        import fastapi  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("the serve extra is installed: its absence is simulated by the test above")
    pool = tmp_path / "pool.tsv"
    pool.write_text("query_id\tdoc_id\nq01\tsso1\n")
    done = runner.invoke(main, ["judge", str(pool), "--corpus", "article", "--out", str(tmp_path / "judged.txt")])
    assert done.exit_code == 2
    (line,) = done.stderr.splitlines()
    assert line.startswith("error: bench judge needs ") and line.endswith(INSTALL)
