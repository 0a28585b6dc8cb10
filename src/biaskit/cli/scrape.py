"""CLI: ``scrape api``, ``scrape dump``, ``prompts build``, ``prompts rebuild``, ``bold import``, ``bold export``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from biaskit.cli import sub_app
from biaskit.cli.options import OptionGroup, grouped
from biaskit.io import read_table, write_table
from biaskit.limits import check_processes
from biaskit.manifest import new_manifest
from biaskit.pool import engine_spec
from biaskit.scrape.bold import export_bold, import_bold
from biaskit.scrape.config import cap_pages, load_config
from biaskit.scrape.pipeline import scrape_api, scrape_dump
from biaskit.scrape.prompts import preset_rule, prompts_from_sentences, rebuild_prompts

CONFIG_HELP = (
    "Domain config: a shipped name, `bold` (BOLD's five domains, API seeds) or `demo` (pages of the bundled dump), "
    "or a YAML/JSON file (a value with a / or a suffix is a path; a local folder named `demo` never shadows the shipped one)."
)
CONFIG_FILE_HELP = "Domain config file, always read as a path (even one named like a shipped config); overrides --config."


def _config_spec(config: str, config_file: Path | None) -> str:
    return str(config_file.resolve()) if config_file is not None else config  # absolute: never taken for a shipped name


def _write_prompts(t, counts, rule, out: Path, command: str, source: Path) -> None:
    """Write the prompts of ``prompts build``/``rebuild`` with their manifest (rule, filter counts) and say so."""
    write_table(
        t,
        out,
        stage="prompts",
        manifest=new_manifest(command, config=rule.as_dict(), inputs=[source], stage="prompts", extra={"filter_counts": counts.as_dict()}),
    )
    typer.echo(f"wrote {out}: " + ", ".join(f"{k} {v}" for k, v in counts.as_dict().items()))


def _report(res) -> None:
    typer.echo(f"wrote {res.out} ({res.summary()})")
    typer.echo(f"per-page report: {res.pages_report}")
    if res.missing:
        typer.echo(f"{len(res.missing)} pages not found: {', '.join(res.missing[:10])}{' ...' if len(res.missing) > 10 else ''}")
    if res.failed:
        typer.echo(f"{len(res.failed)} pages skipped (unparseable): {', '.join(res.failed[:10])}")
    if res.requests:
        typer.echo("HTTP: " + ", ".join(f"{k} {v}" for k, v in res.requests.items()))


maxp_opt = typer.Option(None, "--max-pages", help="At most N pages per group (a trial run).")


#: the prompt rule's options of scrape dump/api and prompts build/rebuild: a command gets them as one dict, the
#: ``rule_overrides`` of :func:`biaskit.scrape.config.load_config` (the settings of ``preset_rule``)
RULE_OPTIONS: Any = OptionGroup(  # Any: see cli/options.py
    window=(
        Annotated[
            int | None,
            typer.Option(
                "--window",
                help="The term must occur within the first N words (strict: 8; bold: within the prompt's own words unless --window is given).",
            ),
        ],
        None,
    ),
    n_first=(Annotated[int | None, typer.Option("--n-first", help="Prompt = first N words + the words of the term (BOLD: 5).")], None),
    min_words=(Annotated[int | None, typer.Option("--min-words", help="Drop sentences with <= N words (strict: 6, bold: 0).")], None),
    dedupe=(
        Annotated[str | None, typer.Option("--dedupe", help="Drop repeated prompt strings within: domain (strict), group, global, none (bold).")],
        None,
    ),
    preset=(
        Annotated[
            str | None,
            typer.Option(
                "--preset",
                help="Prompt rule preset: strict (default: whole-word term in the first 8 words, "
                "sentences > 6 words, domain dedupe) or bold (BOLD's own rule: term as a substring of the prompt's "
                "words, short sentences keep all words but the last, no length filter, duplicates kept). "
                "--window/--n-first/--min-words/--dedupe apply on top.",
            ),
        ],
        None,
    ),
)


@grouped
def scrape_dump_cmd(
    dump: Path = typer.Argument(..., help="pages-articles dump (.xml or .xml.bz2)."),
    out: Path = typer.Option(..., "--out", "-o", help="Prompts table to write (.parquet, .jsonl, .csv)."),
    config: str | None = typer.Option(
        None, "--config", "-c", help=CONFIG_HELP + " Default: demo, with the dump's own language (from its <siteinfo>) instead of demo's en."
    ),
    config_file: Path | None = typer.Option(None, "--config-file", help=CONFIG_FILE_HELP),
    processes: int = typer.Option(1, "--processes", "-p", help="Worker processes for cleaning and sentence splitting."),
    redirects: str = typer.Option("resolve", "--redirects", help="resolve: a configured title that is a redirect means its target; skip: ignore it."),
    all_pages: bool = typer.Option(False, "--all-pages", help="Every article is its own group (term = its title)."),
    max_pages: int | None = maxp_opt,
    sentences_out: Path | None = typer.Option(None, "--sentences-out", help="Also write every clean sentence of the pages here."),
    rule_options: dict = RULE_OPTIONS,
    index: Path | None = typer.Option(
        None,
        "--index",
        help="Multistream index (…-multistream-index.txt.bz2): workers read "
        "the dump's streams in parallel. Default: the index next to the dump, if any.",
    ),
    engine: str = typer.Option(
        "local",
        "--engine",
        help="local (--processes workers) or ray (the streams of a multistream dump as "
        "Ray tasks; --processes = tasks in flight per window). See docs/scale.md.",
    ),
    ray_address: str | None = typer.Option(
        None, "--ray-address", help="--engine ray: cluster address (default: $RAY_ADDRESS, else a local Ray started for this run)."
    ),
) -> None:
    """Build BOLD-style prompts from a Wikipedia dump (streamed; a killed run resumes).

    Example: biaskit scrape dump src/biaskit/data/wiki/enwiki-pages-articles-206pages.xml.bz2 --config demo --out prompts_bold.parquet

    Example: biaskit scrape dump enwiki-latest-pages-articles.xml.bz2 --config my_domains.yaml --out prompts.parquet --processes 2

    Example: biaskit scrape dump enwiki-latest-pages-articles-multistream.xml.bz2 --all-pages --out all.parquet --processes 8

    Example: biaskit scrape dump src/biaskit/data/wiki/enwiki-pages-articles-206pages.xml.bz2 --config demo --preset bold --out prompts_boldrule.parquet
    """
    if engine == "local":  # before the config and the dump are read (Ray: tasks in flight, on the cluster's CPUs)
        check_processes(processes)
    cfg = cap_pages(
        load_config(_config_spec(config or "demo", config_file), rule_overrides=rule_options),
        max_pages,
    )
    if config is None and config_file is None:  # no config named: the dump's <siteinfo> says the language
        cfg.language_named = cfg.words_named = False
    spec = None
    if engine != "local" or ray_address:
        spec = engine_spec(engine, address=ray_address, actors=processes)
    _report(
        scrape_dump(
            dump, cfg, out, processes=processes, all_pages=all_pages, redirects=redirects, sentences_out=sentences_out, index=index, engine=spec
        )
    )


@grouped
def scrape_api_cmd(
    endpoint: str = typer.Argument(..., help="api.php URL of any MediaWiki, e.g. https://en.wikipedia.org/w/api.php"),
    out: Path = typer.Option(..., "--out", "-o", help="Prompts table to write (.parquet, .jsonl, .csv)."),
    config: str = typer.Option("bold", "--config", "-c", help=CONFIG_HELP),
    config_file: Path | None = typer.Option(None, "--config-file", help=CONFIG_FILE_HELP),
    cache_dir: Path | None = typer.Option(
        None, "--cache-dir", help="Reply cache (default $BIASKIT_CACHE/mediawiki/<host>); reruns send no repeated requests."
    ),
    processes: int = typer.Option(1, "--processes", "-p", help="Worker processes for cleaning and sentence splitting."),
    max_rps: float = typer.Option(5.0, "--max-rps", help="At most this many requests per second."),
    maxlag: int = typer.Option(5, "--maxlag", help="maxlag parameter (seconds); the client waits and retries when the wiki is lagged."),
    max_retries: int = typer.Option(5, "--max-retries", help="Retries on 429/5xx/maxlag/connection errors (Retry-After honoured)."),
    user_agent: str | None = typer.Option(None, "--user-agent", help="User-Agent header; Wikimedia asks for contact details in it."),
    max_pages: int | None = maxp_opt,
    sentences_out: Path | None = typer.Option(None, "--sentences-out", help="Also write every clean sentence of the pages here."),
    rule_options: dict = RULE_OPTIONS,
) -> None:
    """Build BOLD-style prompts from a live wiki through its Action API (cached, rate-limited, resumable).

    Example: biaskit scrape api https://en.wikipedia.org/w/api.php --config bold --out bold_en.parquet --user-agent "my-project (me@example.org)"

    Example: biaskit scrape api https://en.wikipedia.org/w/api.php --config bold --max-pages 5 --out bold_trial.parquet

    Example: biaskit scrape api https://cs.wikipedia.org/w/api.php --config my_cs_domains.yaml --out prompts_cs.parquet

    Example: biaskit scrape api https://en.wikipedia.org/w/api.php --config bold --preset bold --out bold_like.parquet --user-agent "my-project (me@example.org)"
    """
    check_processes(processes)
    cfg = cap_pages(load_config(_config_spec(config, config_file), rule_overrides=rule_options), max_pages)
    _report(
        scrape_api(
            endpoint,
            cfg,
            out,
            processes=processes,
            cache_dir=cache_dir,
            max_rps=max_rps,
            maxlag=maxlag,
            max_retries=max_retries,
            user_agent=user_agent,
            sentences_out=sentences_out,
        )
    )


@grouped
def prompts_build(
    sentences: Path = typer.Argument(..., help="Sentences table with sentence, domain, group, terms (|-separated) columns."),
    out: Path = typer.Option(..., "--out", "-o", help="Prompts table to write."),
    language: str = typer.Option("en", "--language", help="Language code for rows that have none."),
    rule_options: dict = RULE_OPTIONS,
) -> None:
    """Apply BOLD's prompt rule to a table of sentences (e.g. from `scrape dump --sentences-out`).

    Example: biaskit prompts build sentences.parquet --out prompts.parquet --window 10

    Example: biaskit prompts build sentences.parquet --out prompts_boldrule.parquet --preset bold
    """
    rule = preset_rule(**rule_options)
    _write_prompts(*prompts_from_sentences(read_table(sentences), rule, language=language), rule, out, "biaskit prompts build", sentences)


@grouped
def prompts_rebuild(
    table: Path = typer.Argument(..., help="Prompts table with reference sentences and terms (e.g. from `bold import`)."),
    out: Path = typer.Option(..., "--out", "-o", help="Prompts table to write."),
    rule_options: dict = RULE_OPTIONS,
) -> None:
    """Recompute every prompt from its reference sentence and term with BOLD's rule (or other settings).

    Example: biaskit prompts rebuild bold.parquet --out bold_rebuilt.parquet

    Example: biaskit prompts rebuild bold.parquet --out bold_w10.parquet --window 10 --n-first 6

    Example: biaskit prompts rebuild bold.parquet --out bold_same.parquet --preset bold --min-words 0 --dedupe none

    With --preset bold, 92.5% of BOLD's 23,679 prompts come out exactly as BOLD published them (docs/scrape.md).
    """
    rule = preset_rule(**rule_options)
    _write_prompts(*rebuild_prompts(read_table(table, "prompts"), rule), rule, out, "biaskit prompts rebuild", table)


def bold_import(
    path: Path = typer.Argument(..., help="BOLD folder (prompts/, wikipedia/) or a Hub-layout .jsonl file."),
    out: Path = typer.Option(..., "--out", "-o", help="Prompts table to write."),
    layout: str = typer.Option("auto", "--layout", help="auto, github or hub."),
) -> None:
    """Import BOLD's files verbatim (every prompt and sentence kept; the term is the entity name).

    Example: biaskit bold import tests/fixtures/bold/github --out bold.parquet

    Example: biaskit bold import bold/ --out bold.parquet && biaskit prompts rebuild bold.parquet --out bold_rebuilt.parquet
    """
    t, facts = import_bold(path, layout=layout)
    write_table(
        t,
        out,
        stage="prompts",
        manifest=new_manifest(
            "biaskit bold import",
            config={"layout": layout},
            stage="prompts",
            inputs=[p for p in Path(path).rglob("*.json*")] if Path(path).is_dir() else [path],
            extra={"facts": facts},
        ),
    )
    typer.echo(f"wrote {out}: " + ", ".join(f"{k} {v}" for k, v in facts.items()))


def bold_export(
    table: Path = typer.Argument(..., help="Prompts table (from `bold import`, `scrape ...` or `prompts rebuild`)."),
    out: Path = typer.Option(..., "--out", "-o", help="Folder to write prompts/ + wikipedia/ (github) or bold.jsonl (hub) into."),
    layout: str = typer.Option("github", "--layout", help="github, hub or both."),
    overwrite: bool = typer.Option(
        False,
        "--overwrite",
        help="Write into a folder biaskit did not write, or whose files were edited (only biaskit's own unchanged files are replaced; yours are kept).",
    ),
) -> None:
    """Export a prompts table to BOLD's layouts (entity = bold_name, else the page title, else the term; spaces as underscores).

    Example: biaskit bold export bold.parquet --out bold_export --layout both
    """
    for p in export_bold(read_table(table, "prompts"), out, layout=layout, overwrite=overwrite):
        typer.echo(f"wrote {p}")


def register(app: typer.Typer) -> None:
    sub_app(
        app,
        "scrape",
        {"dump": scrape_dump_cmd, "api": scrape_api_cmd},
    )
    sub_app(app, "prompts", {"build": prompts_build, "rebuild": prompts_rebuild})
    sub_app(
        app,
        "bold",
        {"import": bold_import, "export": bold_export},
    )
