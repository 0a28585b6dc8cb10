"""Validate a staged folder with the loader the Hub uses (``datasets.load_dataset(folder, config)``).

Every config and split declared in the card is loaded; its Features must equal the card's
``dataset_info`` features and its row count the declared ``num_examples``; every data file must exist
and every Parquet shard under ``data/`` must belong to a declared config.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from biaskit.datasets.card import parse_card
from biaskit.errors import BiaskitError
from biaskit.io import read_text_utf8


@dataclass
class ValidationReport:
    folder: Path
    configs: dict[str, dict[str, int]] = field(default_factory=dict)  # config -> split -> rows
    features: dict[str, Any] = field(default_factory=dict)

    @property
    def rows(self) -> int:
        return sum(n for s in self.configs.values() for n in s.values())


def read_card(folder: str | Path) -> tuple[dict, str]:
    p = Path(folder) / "README.md"
    if not p.is_file():
        raise BiaskitError(
            "E050", "staged folder has no README.md dataset card", value=str(folder), fix="stage it first: biaskit hub stage TABLE... --out DIR"
        )

    return parse_card(read_text_utf8(p, "dataset card", bom=False))


def load_config(folder: str | Path, config: str, *, cache_dir: str | Path | None = None):
    """``datasets.load_dataset(folder, config)`` (a DatasetDict), with a throwaway cache unless ``cache_dir``."""
    import datasets as hf_datasets

    own = cache_dir is None
    cache = Path(tempfile.mkdtemp(prefix="biaskit-hubcheck-")) if cache_dir is None else Path(cache_dir)
    was = hf_datasets.is_progress_bar_enabled()
    hf_datasets.disable_progress_bars()
    try:
        dd = hf_datasets.load_dataset(str(folder), config, cache_dir=str(cache))
        if own:  # keep the rows, drop the cache files
            dd = hf_datasets.DatasetDict(
                {k: hf_datasets.Dataset(v.data.table if hasattr(v.data, "table") else v.data, info=v.info) for k, v in dd.items()}
            )
            dd = hf_datasets.DatasetDict({k: v.flatten_indices(keep_in_memory=True) if v._indices is not None else v for k, v in dd.items()})
        return dd
    except BiaskitError:
        raise
    except Exception as exc:
        raise BiaskitError(
            "E050",
            f"datasets.load_dataset could not load config {config!r} of {folder}: {exc}",
            value=config,
            fix="restage the folder with biaskit hub stage (do not edit data files by hand)",
        ) from exc
    finally:
        if was:
            hf_datasets.enable_progress_bars()
        if own:
            shutil.rmtree(cache, ignore_errors=True)


def validate_folder(folder: str | Path, *, expected: Any = None) -> ValidationReport:
    """Load every config/split of ``folder`` and check Features and row counts against the card
    (and against ``expected``, a :class:`~biaskit.datasets.stage.StageResult`, when given)."""
    import datasets as hf_datasets

    folder = Path(folder)
    card, _ = read_card(folder)
    configs = card.get("configs") or []
    if not isinstance(configs, list) or not all(isinstance(c, dict) and isinstance(c.get("config_name"), str) for c in configs):
        raise BiaskitError(
            "E050",
            "dataset card `configs` is not a list of {config_name, data_files} entries",
            value=configs,
            fix="restage the folder with biaskit hub stage",
        )
    if not configs:
        raise BiaskitError(
            "E050", "dataset card declares no configs", value=str(folder / "README.md"), fix="restage the folder with biaskit hub stage"
        )
    raw = card.get("dataset_info") or []
    raw = [raw] if isinstance(raw, dict) else raw
    infos = {i.get("config_name", configs[0]["config_name"] if len(configs) == 1 else "default"): i for i in raw}
    declared: set[str] = set()
    report = ValidationReport(folder)
    for cfg in configs:
        name = cfg["config_name"]
        for df in cfg.get("data_files") or []:
            matches = sorted(folder.glob(df["path"]))
            if not matches:
                raise BiaskitError(
                    "E050",
                    f"config {name!r} split {df['split']!r}: no file matches {df['path']!r}",
                    value=df["path"],
                    fix="restage the folder; a data file is missing",
                )
            declared |= {str(m.relative_to(folder)) for m in matches}
        info = infos.get(name)
        if info is None:
            raise BiaskitError("E050", f"card has no dataset_info for config {name!r}", value=name, fix="restage the folder")
        want_features = hf_datasets.Features._from_yaml_list(info["features"])
        want_rows = {s["name"]: s["num_examples"] for s in info.get("splits") or []}
        dd = load_config(folder, name)
        got_rows = {k: v.num_rows for k, v in dd.items()}
        if got_rows != want_rows:
            raise BiaskitError(
                "E050",
                f"config {name!r}: load_dataset gives rows {got_rows}, the card says {want_rows}",
                value=got_rows,
                fix="restage the folder (the card and the data disagree)",
            )
        for split, ds in dd.items():
            if ds.features != want_features:
                raise BiaskitError(
                    "E050",
                    f"config {name!r} split {split!r}: loaded Features differ from the card's",
                    value=str(ds.features)[:300],
                    fix="restage the folder (the card and the data disagree)",
                )
        if expected is not None:
            exp = expected.config(name)
            if exp.features != want_features or {k: v.rows for k, v in exp.splits.items()} != got_rows:
                raise BiaskitError(
                    "E050", f"config {name!r}: staged Features/rows differ from the input table's", value=name, fix="report this as a biaskit bug"
                )
        report.configs[name] = got_rows
        report.features[name] = want_features
    stray = sorted(str(p.relative_to(folder)) for p in (folder / "data").rglob("*.parquet")) if (folder / "data").is_dir() else []
    stray = [s for s in stray if s not in declared]
    if stray:
        raise BiaskitError(
            "E050", f"{len(stray)} data file(s) belong to no config", value=stray, fix="remove them or restage the folder into an empty --out"
        )
    return report
