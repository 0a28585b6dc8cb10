"""Stage biaskit tables as a Hugging Face Hub dataset folder.

Layout (the one ``Dataset.push_to_hub`` writes, so ``load_dataset`` and the Hub viewer read it as is)::

    DIR/README.md                                  dataset card: YAML header (configs, dataset_info, license,
                                                   language, task_categories, size_categories, ...) + body
    DIR/data/<config>/<split>-00000-of-00002.parquet
    DIR/biaskit_manifest.json                      what was staged from what (sha256 of inputs and shards)

Each input table becomes one config (``name``), or one config per value of ``config_by`` (e.g. prompts
per ``domain``); rows go to split ``train``, or one split per value of ``split_by`` (e.g. annotations per
``round``). Rows keep their order; nothing is dropped or rewritten (ClassLabel only where lossless).
"""

from __future__ import annotations

import hashlib
import math
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from biaskit.datasets.card import build_card, public, render_card
from biaskit.datasets.features import encode
from biaskit.datasets.validate import validate_folder
from biaskit.errors import BiaskitError, check_choice
from biaskit.io import locks_output, read_manifest, read_table, redact_error_columns, table_format
from biaskit.manifest import new_manifest
from biaskit.output import clean_table, write_text
from biaskit.ownership import claim_folder, write_owned_folder
from biaskit.schema import STAGES, conform, get_stage, validate
from biaskit.schema import validate as validate_stage

DEFAULT_SPLIT = "train"
DEFAULT_MAX_SHARD_BYTES = 500 << 20  # same default as datasets' push_to_hub
STAGING_MANIFEST = "biaskit_manifest.json"
#: the ``kind`` of the staging manifest, the folder's marker (:mod:`biaskit.ownership`)
MARKER_KIND = "hub stage"
_CONFIG_OK = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")
_SPLIT_OK = re.compile(r"^\w+(\.\w+)*$")

#: logical demo/table names -> stage schema
NAME_TO_STAGE = {
    "prompts_bold": "prompts",
    "prompts_holistic": "prompts",
    "prompts_slavic": "prompts",
    "prompts": "prompts",
    "generations": "generations",
    "likelihoods": "generations",
    "fillins": "generations",
    "scores": "scores",
    "samples": "samples",
    "annotations": "annotations",
    "agreement": "agreement",
}
#: stage detection order when a table has no manifest naming its stage (most specific first)
_DETECT_ORDER = ("annotations", "agreement", "samples", "generations", "prompts", "scores")


@dataclass
class TableSpec:
    """One input table: ``name`` is its config name (prefix when ``config_by`` is set)."""

    name: str
    table: pa.Table
    stage: str | None = None
    manifest: dict | None = None
    path: Path | None = None
    config_by: str | None = None
    split_by: str | None = None


@dataclass
class StagedSplit:
    name: str
    rows: int
    num_bytes: int
    files: list[str]
    file_bytes: int


@dataclass
class StagedConfig:
    name: str
    table_name: str
    stage: str | None
    features: Any
    splits: dict[str, StagedSplit]
    manifest: dict | None
    source: str | None
    selection: tuple[str, Any] | None = None  # (column, value) when made by config_by
    split_by: str | None = None
    columns: list[str] = field(default_factory=list)
    table: pa.Table | None = None  # the rows staged (all splits), for the card's counts

    @property
    def rows(self) -> int:
        return sum(s.rows for s in self.splits.values())


@dataclass
class StageResult:
    folder: Path
    configs: list[StagedConfig]
    card: str
    card_data: dict

    @property
    def files(self) -> list[str]:
        return sorted(f for c in self.configs for s in c.splits.values() for f in s.files)

    def config(self, name: str) -> StagedConfig:
        for c in self.configs:
            if c.name == name:
                return c
        raise KeyError(name)


def detect_stage(table: pa.Table, manifest: Mapping | None = None, name: str | None = None) -> str | None:
    """The stage of a table: from its manifest, its logical name, or the first stage whose columns it has."""
    if manifest and manifest.get("stage") in STAGES:
        return manifest["stage"]
    if name and name in NAME_TO_STAGE:
        return NAME_TO_STAGE[name]
    cols = set(table.column_names)
    for st in _DETECT_ORDER:
        if set(STAGES[st].required) <= cols:
            return st
    return None


def spec_from_path(path: str | Path, name: str | None = None, *, config_by: str | None = None, split_by: str | None = None) -> TableSpec:
    """Read a table written by biaskit (any supported format) and its manifest into a :class:`TableSpec`."""
    p = Path(path)
    t = read_table(p)
    man = read_manifest(p)
    nm = name or _stem(p)
    st = detect_stage(t, man, nm)
    if st is not None:
        if table_format(p) == "csv":  # CSV has no types: read the stage's text columns as text ("10" stays "10")
            t = read_table(p, st)
        validate(t, st, where=str(p), keys=True)  # the checks of `schema --check`: never cast an int text column to "0"
    return TableSpec(nm, t, st, man, p, config_by, split_by)


def parse_table_arg(arg: str) -> tuple[str | None, str]:
    """``NAME=PATH`` or ``PATH`` (name from the file name)."""
    try:
        is_file = Path(arg).exists()
    except (OSError, ValueError):  # NAME=PATH with a NAME longer than a file name can be (cut and hashed below)
        is_file = False
    if "=" in arg and not is_file:
        name, _, path = arg.partition("=")
        return name.strip() or None, path
    return None, arg


def _stem(p: Path) -> str:
    name = p.name.rstrip("/")
    for suf in (".parquet", ".jsonl", ".json", ".csv"):
        if name.lower().endswith(suf):
            return name[: -len(suf)]
    return name


MAX_NAME_LEN = 64  # config and split names become folder and file names under data/


def _name_hash(value: Any) -> str:
    return hashlib.sha1(str(value).encode("utf-8")).hexdigest()[:8]


def _safe_name(value: Any, pattern: re.Pattern, what: str, where: str) -> str:
    """A config/split name from a value: ASCII letters, digits, ``_``, ``.``, ``-`` only (accents are
    transliterated, other characters and path separators become ``_``), no leading dot, at most
    :data:`MAX_NAME_LEN` characters (a longer or an all-symbol value gets a short hash of itself)."""
    raw = str(value).strip()
    text = raw
    if what == "config":
        text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    s = re.sub(r"[^\w.\-]" if what == "config" else r"[^\w]", "_", text, flags=re.ASCII if what == "config" else 0)
    s = re.sub(r"_{2,}", "_", s).strip("_.-")
    join = "-" if what == "config" else "_"
    if not s and raw:
        s = f"{what}{join}{_name_hash(raw)}"
    if len(s) > MAX_NAME_LEN:
        s = s[: MAX_NAME_LEN - 9].rstrip("_.-") + join + _name_hash(raw)
    if not pattern.match(s):
        raise BiaskitError(
            "E050", f"cannot make a {what} name from {value!r} ({where})", value=value, fix=f"rename the value, or stage without --{what}-by"
        )
    return s


def _split_masks(table: pa.Table, column: str | None, where: str, what: str = "split") -> list[tuple[Any, pa.Array | None]]:
    """``[(value, row mask)]`` per distinct value of ``column`` in first-appearance order; ``[(None, None)]`` without one."""
    if column is None:
        return [(None, None)]
    check_choice(
        "E050", f"--{what}-by column {column!r} is not in {where}", column, table.column_names, fix=f"pick one of the table's columns for --{what}-by"
    )
    col = table.column(column)
    if col.null_count:
        raise BiaskitError(
            "E050",
            f"{col.null_count} row(s) of {where} have no {column!r}, so they belong to no {what}",
            value=column,
            fix=f"fill {column!r} for every row, or stage without --{what}-by",
        )
    out = []
    for v in col.unique().to_pylist():  # first-appearance order
        out.append((v, pc.equal(col, pa.scalar(v, type=col.type))))
    return out


@dataclass(frozen=True)
class _Encoding:
    """How every config is written: with ClassLabel features (``class_labels``) and in shards of at most
    ``max_shard_bytes`` bytes (0: no byte limit) and ``max_shard_rows`` rows (None: no row limit)."""

    class_labels: bool
    max_shard_bytes: int
    max_shard_rows: int | None


@dataclass(frozen=True)
class _Config:
    """One config of an input table: its name, the value of ``config_by`` it holds (None: the whole table) and its rows."""

    name: str
    value: Any
    table: pa.Table


def _shard_count(nbytes: int, rows: int, max_shard_bytes: int, max_shard_rows: int | None) -> int:
    n = max(1, math.ceil(nbytes / max_shard_bytes)) if max_shard_bytes else 1
    if max_shard_rows:
        n = max(n, math.ceil(rows / max_shard_rows))
    return max(1, min(n, max(rows, 1)))


def _no_null_types(table: pa.Table) -> pa.Table:
    """``table`` with every column of Arrow type ``null`` (all values missing, so no type was ever inferred, e.g. an
    ``*_error`` column of a table where nothing failed) cast to ``string``: a ``null``-typed feature makes the Hub
    viewer and ``datasets`` schema merges fail, while a string column of nulls reads everywhere. Values stay null."""
    for i, f in enumerate(table.schema):
        if pa.types.is_null(f.type):
            table = table.set_column(i, pa.field(f.name, pa.string(), nullable=True, metadata=f.metadata), pa.nulls(table.num_rows, pa.string()))
    return table


def _check_stage_args(specs: Sequence[TableSpec], pretty_name: str | None) -> None:
    """The title and the input list, before anything is written."""
    if pretty_name is not None and (not pretty_name.strip() or any(ch in pretty_name for ch in "\r\n\x00") or not pretty_name.isprintable()):
        raise BiaskitError(
            "E050",
            "--pretty-name must be one line of printable text (it is the card's title and a YAML value)",
            value=pretty_name,
            fix="pass a one-line title, e.g. --pretty-name 'BOLD generations (gpt2)'",
        )
    if not specs:
        raise BiaskitError("E050", "nothing to stage", value=[], fix="give at least one table: biaskit hub stage prompts.parquet --out DIR")


def _prepared_table(spec: TableSpec, where: str) -> pa.Table:
    """The table as it is staged: error texts redacted, checked and conformed to its stage, no ``null``-typed column."""
    table = redact_error_columns(spec.table)  # an error text that quotes a key is never uploaded
    if table.num_rows == 0:
        raise BiaskitError(
            "E050",
            f"table {spec.name!r} has no rows (datasets.load_dataset cannot read an empty shard)",
            value=where,
            fix="leave the empty table out of the stage command",
        )
    if spec.stage:
        validate_stage(table, spec.stage, where=where, keys=True)  # same checks as `schema --check`
        table = conform(table, get_stage(spec.stage))
    return _no_null_types(table)


def _config_name(base: str, cval: Any, where: str, seen: dict[str, str]) -> str:
    """The config name for value ``cval`` of ``config_by`` (``base`` without one), unique without case;
    ``seen`` maps the lower-case names so far to the input they came from."""
    cname = base if cval is None else f"{base}-{_safe_name(cval, _CONFIG_OK, 'config', where)}"
    # names are compared without case: data/Female and data/female are one folder on case-insensitive
    # file systems (macOS, Windows) and in a clone of the Hub repository there
    if cval is not None and cname.lower() in seen and seen[cname.lower()] == where:
        # two values of --config-by that sanitise alike ("Česky" and "Cesky", "Female" and "female"):
        # the later one gets its hash
        cname = f"{cname}-{_name_hash(cval)}"
    if cname.lower() in seen:
        raise BiaskitError(
            "E050",
            f"two inputs give the config name {cname!r} (names are compared without case)",
            value=[seen[cname.lower()], where],
            fix="name the tables differently: biaskit hub stage NAME=PATH ...",
        )
    seen[cname.lower()] = where
    return cname


def _write_split(arrow: pa.Table, folder: Path, cname: str, sname: str, how: _Encoding) -> StagedSplit:
    """Write one split's rows as ``data/<config>/<split>-NNNNN-of-NNNNN.parquet`` shards under ``folder``."""
    n = _shard_count(arrow.nbytes, arrow.num_rows, how.max_shard_bytes, how.max_shard_rows)
    files, fbytes, nbytes = [], 0, 0
    per = math.ceil(arrow.num_rows / n) if arrow.num_rows else 0
    for i in range(n):
        rel = f"data/{cname}/{sname}-{i:05d}-of-{n:05d}.parquet"
        dest = folder / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(clean_table(arrow.slice(i * per, per) if per else arrow), dest)  # (the output layer's redaction)
        files.append(rel)
        fbytes += dest.stat().st_size
        # num_bytes: the Arrow size of the rows as read back from the shard (what load_dataset
        # holds in memory), exact; the in-memory table before writing can differ by a few bytes
        nbytes += pq.read_table(dest).nbytes
    return StagedSplit(sname, arrow.num_rows, nbytes, files, fbytes)


def _stage_config(spec: TableSpec, config: _Config, folder: Path, how: _Encoding) -> StagedConfig:
    """Encode one config's rows (features) and write its splits (one per value of ``split_by``)."""
    ctable, cname, where = config.table, config.name, str(spec.path or spec.name)
    ds_all = encode(ctable, class_labels=how.class_labels)
    features = ds_all.features
    arrow_all = ds_all.data.table
    splits: dict[str, StagedSplit] = {}
    split_vals: dict[str, Any] = {}
    for sval, mask in _split_masks(ctable, spec.split_by, where):
        sname = DEFAULT_SPLIT if sval is None else _safe_name(sval, _SPLIT_OK, "split", where)
        if sname.lower() in split_vals:  # (without case: one file name on case-insensitive file systems)
            raise BiaskitError(
                "E050",
                f"values {split_vals[sname.lower()]!r} and {sval!r} of {spec.split_by!r} give the same split name {sname!r}"
                " (names are compared without case)",
                value=sval,
                fix="make the values differ in letters/digits, or stage without --split-by",
            )
        split_vals[sname.lower()] = sval
        arrow = arrow_all if mask is None else arrow_all.filter(mask)
        splits[sname] = _write_split(arrow, folder, cname, sname, how)
    return StagedConfig(
        name=cname,
        table_name=spec.name,
        stage=spec.stage,
        features=features,
        splits=splits,
        manifest=spec.manifest,
        source=str(spec.path) if spec.path else None,
        selection=None if config.value is None or spec.config_by is None else (spec.config_by, config.value),  # a value comes from config_by
        split_by=spec.split_by,
        columns=list(ctable.column_names),
        table=ctable,
    )


def _staging_manifest(specs: Sequence[TableSpec], staged: list[StagedConfig], config: dict[str, Any]) -> dict[str, Any]:
    """The folder's manifest: settings, inputs, configs with their splits (the ownership layer adds its ``files``,
    each with its size and sha256)."""
    return new_manifest(
        "biaskit hub stage",
        stage="hub",
        config=config,
        inputs=[s.path for s in specs if s.path is not None],
        extra={
            "configs": [
                {
                    "name": c.name,
                    "table": c.table_name,
                    "stage": c.stage,
                    "source": c.source,
                    "selection": list(c.selection) if c.selection else None,
                    "split_by": c.split_by,
                    "splits": {k: {"rows": v.rows, "files": v.files} for k, v in c.splits.items()},
                }
                for c in staged
            ],
        },
    )


@locks_output("out")
def stage_tables(
    specs: Sequence[TableSpec],
    out: str | Path,
    *,
    pretty_name: str | None = None,
    license: str | None = None,
    info: Mapping[str, Any] | None = None,
    max_shard_bytes: int = DEFAULT_MAX_SHARD_BYTES,
    max_shard_rows: int | None = None,
    class_labels: bool = True,
    overwrite: bool = False,
    validate: bool = True,
) -> StageResult:
    """Write ``specs`` as a Hub-ready folder at ``out`` and, by default, validate it with ``datasets.load_dataset``
    before any file moves into ``out``. Returns what was staged (configs, splits, files, card).

    The folder is owned as every output folder is (:mod:`biaskit.ownership`, marker ``biaskit_manifest.json``):
    an earlier stage folder is restaged when it holds only hub stage's files, unchanged; anything else there is
    E006 unless ``overwrite`` (then only biaskit's unchanged files are replaced and the others are kept)."""
    out = Path(out)
    _check_stage_args(specs, pretty_name)
    # restaging replaces only hub stage's own unchanged files; any other file would be uploaded with the folder
    claim = claim_folder(out, STAGING_MANIFEST, MARKER_KIND, overwrite=overwrite, exclusive=True)
    settings = {
        "max_shard_bytes": max_shard_bytes,
        "max_shard_rows": max_shard_rows,
        "class_labels": class_labels,
        "license": license,
        "pretty_name": pretty_name,
    }
    manifest: dict[str, Any] = {}

    def fill(tmp: Path) -> StageResult:
        staged = _stage_specs(specs, tmp, _Encoding(class_labels, max_shard_bytes, max_shard_rows))
        card_data, body = build_card(staged, pretty_name=pretty_name, license=license, info=info)
        text = render_card(card_data, body)
        write_text(tmp / "README.md", text)
        manifest.update(public(_staging_manifest(specs, staged, settings)))  # uploaded with the data: no local folders
        result = StageResult(tmp, staged, text, card_data)
        if validate:  # before the files move into --out: a failed check leaves the folder as it was
            validate_folder(tmp, expected=result)
        return result

    result = write_owned_folder(claim, fill, manifest, sizes=True)  # the manifest, last, lists every file's size and sha256
    result.folder = out
    return result


def _stage_specs(specs: Sequence[TableSpec], folder: Path, how: _Encoding) -> list[StagedConfig]:
    """Write every config of every input table under ``folder``."""
    staged: list[StagedConfig] = []
    seen: dict[str, str] = {}
    for spec in specs:
        where = str(spec.path or spec.name)
        base = _safe_name(spec.name, _CONFIG_OK, "config", where)
        table = _prepared_table(spec, where)
        for cval, mask in _split_masks(table, spec.config_by, where, what="config"):
            ctable = table if mask is None else table.filter(mask)
            staged.append(_stage_config(spec, _Config(_config_name(base, cval, where, seen), cval, ctable), folder, how))
    return staged


def stage_paths(paths: Iterable[str], out: str | Path, *, config_by: str | None = None, split_by: str | None = None, **kw: Any) -> StageResult:
    """:func:`stage_tables` for table files given as ``PATH`` or ``NAME=PATH`` (what the CLI calls).

    ``config_by``/``split_by`` apply to the tables that have that column; it is an error if none has it.
    """
    specs = []
    for arg in paths:
        name, path = parse_table_arg(arg)
        specs.append(spec_from_path(path, name))
    for opt, col in (("config_by", config_by), ("split_by", split_by)):
        if col is None:
            continue
        having = [s for s in specs if col in s.table.column_names]
        if not having:
            raise BiaskitError(
                "E050",
                f"no input table has the --{opt.replace('_', '-')} column {col!r}",
                value=col,
                options=sorted({c for s in specs for c in s.table.column_names}),
                fix="pick a column the tables have, e.g. --split-by round for annotations",
            )
        for s in having:
            setattr(s, opt, col)
    return stage_tables(specs, out, **kw)
