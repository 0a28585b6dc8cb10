"""``biaskit export lm-eval`` and ``biaskit import lm-eval``: EleutherAI lm-evaluation-harness task folders out,
its logged samples back in (library: :mod:`biaskit.interop.lmeval`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from biaskit.cli import sub_app
from biaskit.interop.lmeval import export_lmeval, import_lmeval
from biaskit.io import write_table
from biaskit.manifest import new_manifest

TableArg = Annotated[
    Path, typer.Argument(help="Prompts table (.parquet/.jsonl/.csv/folder) with prompt_id and text: BOLD prompts, HolisticBias sentences, templates.")
]
TaskFolderOut = Annotated[Path, typer.Option("--out", "-o", help="Task folder to write (task YAMLs, group YAML, data/*.parquet, README.md).")]
NameOpt = Annotated[
    str | None, typer.Option("--name", help="Task group name (tasks are NAME_<config>); default biaskit_<source>, e.g. biaskit_bold.")
]
KindOpt = Annotated[
    str,
    typer.Option(
        "--kind", help="generate (generate_until), likelihood (loglikelihood_rolling) or auto (likelihood for HolisticBias, else generate)."
    ),
]
ConfigByOpt = Annotated[
    str | None, typer.Option("--config-by", help="One task per value of this column (default: domain for BOLD, axis for HolisticBias).")
]
MaxNewTokensOpt = Annotated[int, typer.Option("--max-new-tokens", help="Tokens to generate per continuation (lm-eval max_gen_toks).")]
DoSampleOpt = Annotated[bool, typer.Option("--do-sample/--greedy", help="Sample instead of greedy decoding.")]
TemperatureOpt = Annotated[float, typer.Option("--temperature", help="Sampling temperature (with --do-sample).")]
TopPOpt = Annotated[float | None, typer.Option("--top-p", help="Nucleus sampling (with --do-sample).")]
TopKOpt = Annotated[int | None, typer.Option("--top-k", help="Top-k sampling (with --do-sample).")]
SamplesOpt = Annotated[int, typer.Option("--samples", "-n", help="Samples per prompt (lm-eval repeats; needs --do-sample).")]
UntilOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--until",
        help="Stop string (repeatable), e.g. --until '\\n' (escapes \\n and \\t are read). Default: stop at EOS only, like biaskit generate.",
    ),
]
KeepSpaceOpt = Annotated[
    bool, typer.Option("--keep-trailing-space", help="Give prompts to the model with their trailing spaces (default: cut, like biaskit generate).")
]
DataRootOpt = Annotated[
    Path | None,
    typer.Option(
        "--data-root",
        help="Folder the task YAMLs name for their data files (default: OUT/data, absolute); the path on the machine that runs lm_eval.",
    ),
]
OverwriteOpt = Annotated[
    bool,
    typer.Option(
        "--overwrite",
        help="Write into an --out folder biaskit did not write (or whose files were changed): only biaskit's own unchanged files are replaced, yours are kept.",
    ),
]

OutputDirArg = Annotated[
    Path, typer.Argument(help="Folder lm_eval --output_path wrote (with --log_samples), or one samples_<task>_<date>.jsonl file.")
]
TableOut = Annotated[Path, typer.Option("--out", "-o", help="Generations table to write (.parquet/.jsonl/.csv).")]
TokenizerOpt = Annotated[
    str | None,
    typer.Option(
        "--tokenizer",
        help="Likelihood tasks: model folder, .gguf file, biaskit asset or Hub id whose tokenizer counts tokens (default: lm-eval's pretrained=).",
    ),
]
GroupOpt = Annotated[str | None, typer.Option("--group", help="Only the tasks of this exported group (the --name of the export) or this task.")]
ModelOpt = Annotated[str | None, typer.Option("--model", help="Value of the model column (default: lm-eval's model name).")]


def _unescape(s: str) -> str:
    return s.replace("\\n", "\n").replace("\\t", "\t")


def export_lm_eval(
    table: TableArg,
    out: TaskFolderOut,
    name: NameOpt = None,
    kind: KindOpt = "auto",
    config_by: ConfigByOpt = None,
    max_new_tokens: MaxNewTokensOpt = 20,
    do_sample: DoSampleOpt = False,
    temperature: TemperatureOpt = 1.0,
    top_p: TopPOpt = None,
    top_k: TopKOpt = None,
    samples: SamplesOpt = 1,
    until: UntilOpt = None,
    keep_trailing_space: KeepSpaceOpt = False,
    data_root: DataRootOpt = None,
    overwrite: OverwriteOpt = False,
) -> None:
    """Write an lm-evaluation-harness task folder for a prompts table: one task per config plus a group.

    Example: biaskit export lm-eval runs/demo/prompts_bold.parquet --out tasks/bold --name bold

    Example (BOLD sampling, 25 samples each): biaskit export lm-eval prompts.parquet --out tasks/bold --do-sample --temperature 1.0 --top-p 0.9 --samples 25 --until '\\n'

    Example (HolisticBias Likelihood Bias): biaskit export lm-eval holistic.parquet --out tasks/hb --name hb
    """
    res = export_lmeval(
        str(table),
        out,
        name=name,
        kind=kind,
        config_by=config_by,
        max_new_tokens=max_new_tokens,
        do_sample=do_sample,
        temperature=temperature,
        top_p=top_p,
        top_k=top_k,
        samples=samples,
        until=[_unescape(u) for u in until] if until else None,
        strip_trailing_space=not keep_trailing_space,
        data_root=data_root,
        overwrite=overwrite,
    )
    typer.echo(f"exported {sum(res.tasks.values())} prompts as {len(res.tasks)} lm-eval {res.kind} task(s) in group {res.group} -> {res.folder}")
    for t, n in res.tasks.items():
        typer.echo(f"  {t:<40} {n}")
    typer.echo(f"run: {res.command}")


def import_lm_eval(output_dir: OutputDirArg, out: TableOut, group: GroupOpt = None, tokenizer: TokenizerOpt = None, model: ModelOpt = None) -> None:
    """Read lm-eval --log_samples output (samples_*.jsonl, results_*.json) into a generations table keyed by prompt_id.

    Example: biaskit import lm-eval lm-eval-out --out generations.parquet

    Example (one group of a run that had two): biaskit import lm-eval lm-eval-out --group hb --out likelihoods.parquet

    Example (likelihood run made elsewhere): biaskit import lm-eval lm-eval-out --out likelihoods.parquet --tokenizer ./my-model
    """
    res = import_lmeval(output_dir, tokenizer=tokenizer, model=model, group=group)
    man = new_manifest(
        "biaskit import lm-eval",
        stage="generations",
        inputs=res.inputs,
        config={"source": str(output_dir), "group": group, "tokenizer": tokenizer, "model": model},
        extra=res.facts,
    )
    write_table(res.table, out, stage="generations", manifest=man)
    n_prompts = len(set(res.table.column("prompt_id").to_pylist()))
    skipped = f"; skipped {len(res.facts['skipped_tasks'])} task(s) not exported by biaskit" if res.facts.get("skipped_tasks") else ""
    typer.echo(
        f"imported {res.table.num_rows} {res.kind} rows for {n_prompts} prompts from "
        f"{len(res.facts['lm_eval']['tasks'])} lm-eval task(s) -> {out}{skipped}"
    )


def register(app: typer.Typer) -> None:
    """Attach ``export lm-eval`` and ``import lm-eval``."""
    exp = sub_app(app, "export")
    exp.command("lm-eval")(export_lm_eval)
    imp = sub_app(app, "import")
    imp.command("lm-eval")(import_lm_eval)
