"""``bench compare``: run retrievers over a corpus, score, compare and diagnose them."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from harness.compare import DEFAULT_METRICS, DEFAULT_SYSTEMS, CompareConfig, run_compare
from harness.experiment import load_experiment
from harness.progress import Reporter
from corpora import summary_line
from harness.report import render
from harness.results import check_out, write_results


@click.command("compare")
@click.option("--corpus", default="article", show_default=True,
              help="A bundled corpus name (see `bench corpora`) or a corpus folder.")
@click.option("--format", "corpus_format", default=None, help="Force the corpus layout instead of detecting it.")
@click.option("--split", default="test", show_default=True, help="Qrels split of a BEIR folder.")
@click.option("--systems", default=DEFAULT_SYSTEMS, show_default=True,
              help="Comma-separated retriever specs, e.g. bm25,lsa(dims=50),rrf(bm25,lsa) or my.module:MyRetriever "
                   "(see `bench retrievers`).")
@click.option("--metrics", default=DEFAULT_METRICS, show_default=True,
              help="Comma-separated metrics: hit@k recall@k precision@k mrr mrr@k ndcg@k ndcg_exp@k map map@k rprec "
                   "(trec_eval names accepted).")
@click.option("--out", type=click.Path(path_type=Path), default=Path("results"),
              show_default=True, help="Folder that receives a new results folder per run.")
@click.option("--depth", type=int, default=1000, show_default=True, help="Results each retriever returns per query.")
@click.option("--rel-threshold", type=int, default=1, show_default=True,
              help="Binary metrics count grade >= this as relevant.")
@click.option("--bootstrap-samples", type=int, default=5000, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap and randomisation test.")
@click.option("--baseline", default=None, help="Compare every system with this one instead of all pairs.")
@click.option("--fail-rank", type=int, default=3, show_default=True,
              help="Diagnose queries whose first relevant document is missing or below this rank.")
@click.option("--analyzer", default=None, help="Analyzer for every retriever that takes one (default: article).")
@click.option("--config", "config_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="A TOML experiment file with any of these options; flags given here override it.")
@click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder of the index cache, where fitted retrievers are kept for the next run on the same "
                   "corpus [default: $RETBENCH_CACHE_DIR, else the user cache directory].")
@click.option("--no-cache", is_flag=True, help="Fit every retriever from scratch; read and write no cache.")
@click.option("--quiet", "-q", is_flag=True, help="No progress line on stderr (it only shows on a terminal).")
@click.pass_context
def command(ctx: click.Context, corpus: str, corpus_format: str | None, split: str, systems: str, metrics: str,
            out: Path, depth: int, rel_threshold: int, bootstrap_samples: int, seed: int, baseline: str | None,
            fail_rank: int, analyzer: str | None, config_file: Path | None, cache_dir: Path | None,
            no_cache: bool, quiet: bool) -> None:
    """Compare retrievers on a corpus: means, ranks, paired bootstrap and diagnosis."""
    options = dict(corpus=corpus, systems=systems, metrics=metrics, format=corpus_format, split=split,
                   depth=depth, rel_threshold=rel_threshold, bootstrap_samples=bootstrap_samples,
                   seed=seed, baseline=baseline, fail_rank=fail_rank, analyzer=analyzer,
                   cache_dir=str(cache_dir) if cache_dir is not None else None, cache=not no_cache)
    if config_file is not None:
        from_file = load_experiment(config_file)
        parameter_of = {"format": "corpus_format", "cache": "no_cache"}
        file_out = from_file.pop("out", None)  # an option of this command, not of CompareConfig
        if file_out is not None and ctx.get_parameter_source("out") is not click.core.ParameterSource.COMMANDLINE:
            out = Path(str(file_out))
        for key, value in from_file.items():
            source = ctx.get_parameter_source(parameter_of.get(key, key))
            if source is not click.core.ParameterSource.COMMANDLINE:
                options[key] = value
    config = CompareConfig(**options)

    def warn(message: str) -> None:
        click.echo(f"warning: {message}", err=True)

    check_out(out, warn)  # an unusable --out is found now, not after the whole run
    result = run_compare(config, on_loaded=lambda dataset: click.echo(summary_line(dataset)),
                         reporter=Reporter(enabled=False) if quiet else Reporter())
    for warning in result.warnings:
        click.echo(f"warning: {warning}", err=True)
    click.echo(render(result))
    folder = write_results(result, out, ["bench", *sys.argv[1:]], warn)
    click.echo("")
    click.echo(f"results: {folder}")
