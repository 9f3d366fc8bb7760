"""Experiment files: `bench compare --config experiment.toml`, through the CLI."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from harness.cli import main
from harness.core.record import CompareConfig
from harness.core.inputs import build_systems
from harness.cli.experiment import config_keys, load_experiment

EXPERIMENT = """\
# the article's comparison plus two configurations of our own
corpus = "article"
systems = ["bm25", "bm25(k1=0.9,b=0.4)", "rrf(bm25,lsa,k=60)", "rrf(lsa(dims=5),bm25,k=30)"]
metrics = ["ndcg@5", "mrr"]
baseline = "bm25"
bootstrap-samples = 300
seed = 7
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "experiment.toml"
    path.write_text(text, encoding="utf-8")
    return path


def run(runner, tmp_path: Path, *args: str):
    return runner.invoke(main, ["compare", "--out", str(tmp_path / "out"), *args])


def only_folder(tmp_path: Path) -> Path:
    (folder,) = [p for p in (tmp_path / "out").iterdir() if p.is_dir()]
    return folder


def summary(folder: Path) -> list[dict[str, str]]:
    with open(folder / "summary.csv", newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_the_file_configures_the_whole_comparison(runner, tmp_path) -> None:
    result = run(runner, tmp_path, "--config", str(write(tmp_path, EXPERIMENT)))
    assert result.exit_code == 0, result.output
    rows = summary(only_folder(tmp_path))
    assert [r["system"] for r in rows] == ["bm25", "bm25(k1=0.9,b=0.4)", "rrf", "rrf(lsa(dims=5),bm25,k=30)"]
    assert list(rows[0]) == ["system", "ndcg@5", "mrr"]
    assert float(rows[0]["ndcg@5"]) == pytest.approx(0.691, abs=5e-4)
    manifest = json.loads((only_folder(tmp_path) / "manifest.json").read_text(encoding="utf-8"))
    assert "300" in json.dumps(manifest) and "bm25(k1=0.9,b=0.4)" in json.dumps(manifest)


def test_the_same_specs_work_from_the_python_api() -> None:
    from_file = load_experiment_text(EXPERIMENT)
    labels = [r.label for r in build_systems(from_file["systems"])]
    assert labels == [r.label for r in build_systems(",".join(from_file["systems"]))]
    assert labels == ["bm25", "bm25(k1=0.9,b=0.4)", "rrf", "rrf(lsa(dims=5),bm25,k=30)"]
    CompareConfig.from_options(from_file)  # every key is an option it records


def load_experiment_text(text: str) -> dict[str, object]:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        return load_experiment(write(Path(folder), text))


def test_flags_on_the_command_line_override_the_file(runner, tmp_path) -> None:
    result = run(runner, tmp_path, "--config", str(write(tmp_path, EXPERIMENT)), "--systems", "bm25,lsa",
                 "--metrics", "hit@3")
    assert result.exit_code == 0, result.output
    rows = summary(only_folder(tmp_path))
    assert [r["system"] for r in rows] == ["bm25", "lsa"]
    assert list(rows[0]) == ["system", "hit@3"]


def test_systems_may_be_one_comma_separated_string(runner, tmp_path) -> None:
    text = 'systems = "bm25,rrf(bm25,lsa(dims=5))"\nmetrics = "mrr"\nbootstrap_samples = 100\n'
    result = run(runner, tmp_path, "--config", str(write(tmp_path, text)))
    assert result.exit_code == 0, result.output
    assert [r["system"] for r in summary(only_folder(tmp_path))] == ["bm25", "rrf(bm25,lsa(dims=5))"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('corpus = "article"\nsystem = ["bm25"]\n',
         "experiment.toml:2: unknown key 'system'. Fix: use one of corpus, "),
        ('depth = "ten"\n', "experiment.toml:1: depth must be an integer, got 'ten'"),
        ("seed = true\n", "experiment.toml:1: seed must be an integer, got True"),
        ("confidence = 0.9\nmetrics = [5]\n",
         "experiment.toml:2: metrics must be a list of strings, got [5]. Fix: write each item in quotes"),
        ("baseline = 3\n", "experiment.toml:1: baseline must be a string, got 3"),
        ('corpus = "article"\nsystems = [bm25]\n', "experiment.toml:2: not valid TOML"),
        ('systems = ["bm25", "rrf()"]\n', "rrf() names no retrievers to fuse"),
        ('systems = ["bm25(k1=abc)"]\n', "The 'k1' parameter of bm25 must be a float. Got 'abc' instead."),
        # checked like the options they stand for: choices from the registries, ranges, flags
        ('systems = ["bm25"]\nformat = "nope"\n', "experiment.toml:2: format: 'nope' is not one of 'csfcube', "),
        ('analyzer = "porter"\n', "experiment.toml:1: analyzer: 'porter' is not one of 'article', 'english'"),
        ("show_failures = -1\n", "experiment.toml:1: show_failures: -1 is not in the range x>=0"),
        ("quiet = 1\n", "experiment.toml:1: quiet must be true or false, got 1"),
    ],
)
def test_mistakes_in_the_file_exit_2_with_one_message(runner, tmp_path, text: str, message: str) -> None:
    result = run(runner, tmp_path, "--config", str(write(tmp_path, text)))
    assert result.exit_code == 2
    errors = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(errors) == 1 and errors[0].startswith("error: ")
    assert message in errors[0]
    assert not (tmp_path / "out").exists()


def test_a_missing_file_exits_2(runner, tmp_path) -> None:
    result = run(runner, tmp_path, "--config", str(tmp_path / "nowhere.toml"))
    assert result.exit_code == 2
    assert "nowhere.toml: experiment file not found. Fix: check the path of the experiment file" in result.stderr


def test_every_config_field_is_a_key() -> None:
    assert "systems" in config_keys() and "bootstrap_samples" in config_keys()


def test_relative_paths_are_read_from_the_files_folder(runner, tmp_path, monkeypatch) -> None:
    """The experiment runs the same from any working directory: corpus, out and cache_dir are
    relative to the file, not to where `bench` was started."""
    from corpora.bundled import bundled_path

    project = tmp_path / "project"
    shutil.copytree(bundled_path("article"), project / "data" / "mini")
    config = project / "experiment.toml"
    config.write_text('corpus = "data/mini"\nsystems = ["bm25"]\nmetrics = ["ndcg@5"]\nout = "runs"\n'
                      'cache_dir = "cache"\nbootstrap_samples = 50\n', encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    result = runner.invoke(main, ["compare", "--config", str(config)])
    assert result.exit_code == 0, result.output
    (folder,) = (project / "runs").iterdir()
    assert summary(folder)[0]["system"] == "bm25"
    assert (project / "cache").is_dir() and not any(elsewhere.iterdir())


def test_out_on_the_command_line_overrides_the_file(runner, tmp_path) -> None:
    config = write(tmp_path, 'systems = ["bm25"]\nout = "from_file"\nbootstrap_samples = 50\n')
    result = run(runner, tmp_path, "--config", str(config))
    assert result.exit_code == 0, result.output
    assert only_folder(tmp_path).is_dir() and not (tmp_path / "from_file").exists()


def test_a_bundled_name_in_the_file_stays_a_name(tmp_path) -> None:
    assert load_experiment(write(tmp_path, 'corpus = "article"\n'))["corpus"] == "article"
    (tmp_path / "article").mkdir()  # a folder of that name beside the file wins, as on the command line
    assert load_experiment(write(tmp_path, 'corpus = "article"\n'))["corpus"] == str(tmp_path / "article")


def test_out_must_be_a_string(tmp_path) -> None:
    with pytest.raises(Exception, match="experiment.toml:1: out must be a string, got 3"):
        load_experiment(write(tmp_path, "out = 3\n"))


# ----- every long option is a key; the file's own quirks ------------------------------------------

def test_an_unknown_key_lists_every_long_option_of_compare(runner, tmp_path) -> None:
    from harness.cli.compare import command, file_keys

    result = run(runner, tmp_path, "--config", str(write(tmp_path, 'corpus = "article"\nsystem = ["bm25"]\n')))
    assert result.exit_code == 2
    (error,) = [line for line in result.stderr.splitlines() if line.strip()]
    valid = error.split("Fix: use one of ", 1)[1].rstrip(".").split(", ")
    assert set(file_keys(command)) <= set(valid)
    assert {"no_cache", "quiet", "show_failures", "out", "format"} <= set(valid)
    assert "config" not in valid  # an experiment file does not name another one


def test_flags_and_command_only_options_work_from_the_file(runner, tmp_path) -> None:
    text = ('systems = ["bm25"]\nmetrics = ["mrr"]\nfail_rank = 1\nbootstrap_samples = 50\nno_cache = true\n'
            'quiet = true\nshow_failures = 1\ncache_dir = "cache"\n')
    result = run(runner, tmp_path, "--config", str(write(tmp_path, text)))
    assert result.exit_code == 0, result.output
    assert "  … and 2 more in report.txt and diagnosis.csv" in result.stdout  # show_failures = 1 of 3
    assert not (tmp_path / "cache").exists()  # no_cache = true (bm25 is cached otherwise)
    again = run(runner, tmp_path, "--config", str(write(tmp_path, text)), "--show-failures", "3")
    assert "more in report.txt" not in again.stdout  # the command line wins


def test_a_file_that_starts_with_a_byte_order_mark_is_read(runner, tmp_path) -> None:
    path = tmp_path / "experiment.toml"
    path.write_bytes(b"\xef\xbb\xbf" + EXPERIMENT.encode("utf-8"))
    result = run(runner, tmp_path, "--config", str(path))
    assert result.exit_code == 0, result.output
    assert [r["system"] for r in summary(only_folder(tmp_path))][0] == "bm25"


def test_a_path_in_the_file_is_checked_where_it_points_not_in_the_working_directory(runner, tmp_path,
                                                                                      monkeypatch) -> None:
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    project.mkdir()
    elsewhere.mkdir()
    (elsewhere / "runs").write_text("a file that happens to share the name", encoding="utf-8")
    config = project / "experiment.toml"
    config.write_text('systems = ["bm25"]\nout = "runs"\nbootstrap_samples = 50\n', encoding="utf-8")
    monkeypatch.chdir(elsewhere)
    result = runner.invoke(main, ["compare", "--config", str(config)])
    assert result.exit_code == 0, result.output
    assert len(list((project / "runs").iterdir())) == 1
