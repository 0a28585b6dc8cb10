"""The metric interface, parameter handling and :func:`score_table`.

A metric is a small class with a name and version, the columns it reads and writes, declared parameters,
a heavy :meth:`Metric.setup` (models, lexicons, vectors) and a batched :meth:`Metric.score` that takes a
batch ``{column: [values]}`` and returns ``{output column: [values]}``. ``score`` is usable directly with
``datasets.Dataset.map(metric.score, batched=True)``. A row that cannot be scored gets nulls in every
value column and a non-null ``<name>_error``; never a plausible number.

Aggregation across groups is not done here (see the statistics/report stage).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pyarrow as pa

from biaskit.arrow import to_arrow
from biaskit.errors import BiaskitError, check_choices
from biaskit.evaluate.cache import open_cache
from biaskit.evaluate.metrics.cached import metric_identity, score_cached
from biaskit.evaluate.metrics.on_ray import score_metric_on_ray
from biaskit.labels import check_values
from biaskit.log import ProgressBar
from biaskit.pool import RayCluster, engine_spec
from biaskit.registry import metrics as reg
from biaskit.schema import check_columns

_MISSING = object()
_NEEDS_COLUMNS_FIX = "pass --text-column / the metric's column parameters, or add the columns"


@dataclass(frozen=True)
class Param:
    """A declared metric parameter (shown by ``biaskit metrics list``)."""

    name: str
    default: Any
    help: str
    type: str = "str"  # str | float | int | bool | path
    choices: tuple[str, ...] = ()
    required: bool = False

    def convert(self, metric: str, value: Any) -> Any:
        if value is None:
            return None
        try:
            if self.type == "float":
                out: Any = float(value)
            elif self.type == "int":
                out = int(value)
            elif self.type == "bool":
                if isinstance(value, bool):
                    out = value
                elif str(value).strip().lower() in {"1", "true", "yes", "on"}:
                    out = True
                elif str(value).strip().lower() in {"0", "false", "no", "off"}:
                    out = False
                else:
                    raise ValueError(value)
            else:
                out = value if not isinstance(value, str) else value.strip()
        except (TypeError, ValueError):
            raise BiaskitError(
                "E070", f"parameter {metric}.{self.name} must be a {self.type}", value=value, fix=f"give {metric}.{self.name} as a {self.type}"
            ) from None
        if self.choices and out not in self.choices:
            raise BiaskitError(
                "E070",
                f"invalid value for {metric}.{self.name}",
                value=out,
                options=self.choices,
                fix=f"use one of the listed values for {self.name}",
            )
        return out


@dataclass(frozen=True)
class LabelOutput:
    """What one label column of a metric means, declared once on the metric class (:attr:`Metric.label_outputs`).

    Annotation (:mod:`biaskit.annotate.metriccols`, :mod:`biaskit.annotate.tasks`), statistics
    (:mod:`biaskit.evaluate.stats.bold`), the report (label sections) and the plots (colours) read these
    declarations through :func:`biaskit.evaluate.metrics.catalog.label_outputs`; nothing else lists them.

    ``key``: the name ``--metric`` takes in ``biaskit annotate`` (the metric's name, or ``<name>_<variant>``
    for a second label column, e.g. ``gender_max``); ``column``: the label column; ``labels``: its closed
    vocabulary in display order; ``score``: the continuous score column (or ``"a-b"``, the difference of two
    columns), None when there is none; ``higher_is_better``: whether a higher score means a more favourable
    text (None: no direction, e.g. gender); ``ordinal``: the labels from the low to the high end of the score
    (empty: nominal); ``task``: the annotation task type these labels are judged in (None: not annotated);
    ``display``: the name the report and plots use; ``colours``: label -> colour in plots.
    ``report_label``: the report section of the label shares (None: no generic label section); ``test_label``:
    the label whose share the section compares between groups; ``noun``: what the label measures, in words;
    ``question``: the annotation question, for a ``task`` that no built-in task type defines.
    ``column_pattern``: a regular expression for further label columns with the same labels (a metric whose
    label columns depend on its data, e.g. one ``norms_<dimension>_class`` per lexicon dimension).
    """

    key: str
    column: str
    labels: tuple[str, ...]
    score: str | None = None
    higher_is_better: bool | None = None
    ordinal: tuple[str, ...] = ()
    task: str | None = None
    display: str = ""
    colours: Mapping[str, str] = field(default_factory=dict)
    report_label: str | None = None
    test_label: str | None = None
    noun: str = ""
    question: str = ""
    column_pattern: str = ""


#: the labels of a favourability score (positive, neutral, negative) and their plot colours
POLARITY_LABELS = ("positive", "neutral", "negative")
POLARITY_COLOURS = {"positive": "#2b9348", "neutral": "#adb5bd", "negative": "#d62828"}


def polarity_output(key: str, column: str, score: str, *, extra: Mapping[str, str] | None = None, **kw: Any) -> LabelOutput:
    """A :class:`LabelOutput` of positive / neutral / negative (then the ``extra`` labels, label -> colour) along a
    score that is higher the more favourable the text; ``kw``: the other fields."""
    extra = dict(extra or {})
    return LabelOutput(
        key,
        column,
        (*POLARITY_LABELS, *extra),
        score=score,
        higher_is_better=True,
        ordinal=POLARITY_LABELS[::-1],
        colours={**POLARITY_COLOURS, **extra},
        **kw,
    )


class Metric:
    """Base class of every per-text metric.

    Subclasses set :attr:`name`, :attr:`version`, :attr:`description`, :attr:`source`, :attr:`params`
    and implement :meth:`fields` (output value columns without the ``<name>_`` prefix, with Arrow types)
    and :meth:`_score_texts` (scores for the valid texts of a batch).
    """

    name: ClassVar[str] = ""
    version: ClassVar[str] = "1"
    description: ClassVar[str] = ""
    source: ClassVar[str] = ""
    params: ClassVar[tuple[Param, ...]] = ()
    #: extra input columns read besides the text column (param name -> column name param), see input_columns
    default_batch_size: ClassVar[int] = 256
    #: what the metric's label columns mean (labels, score column, annotation task, report section, colours)
    label_outputs: ClassVar[tuple[LabelOutput, ...]] = ()
    #: parameters left out of the response cache's key: how the model is reached or how fast, not what it
    #: answers (``batch_size`` and ``batch_tokens`` always are); see :mod:`biaskit.evaluate.metrics.cached`
    cache_ignores: ClassVar[tuple[str, ...]] = ()
    #: the value fields as ``biaskit metrics list`` shows them without building the metric: declare them when
    #: :meth:`fields` depends on parameters or on loaded data (a data-dependent field as a pattern, ``<dim>``, and
    #: a conditional one with its condition, ``n_predicted (with extension)``); None: :meth:`fields` as it is
    #: before ``__init__`` and setup (see :meth:`declared_columns`)
    listed_fields: ClassVar[tuple[str, ...] | None] = None

    @classmethod
    def declared_columns(cls) -> list[str]:
        """Every column the metric declares it writes (``<name>_<field>``, then ``<name>_error``), read from the
        class alone: nothing is built, loaded or set up. Fields that :meth:`fields` can only give after
        ``__init__`` or setup, and that :attr:`listed_fields` does not declare, show as ``<name>_...``."""
        fields: list[str] | tuple[str, ...] | None = cls.listed_fields
        if fields is None:
            try:
                fields = list(cls.fields(cls.__new__(cls)))
            except (AttributeError, KeyError):  # fields read parameters or loaded data: not declared statically
                fields = ["..."]
        return [f"{cls.name}_{f}" for f in fields] + [f"{cls.name}_error"]

    def __init__(self, text_column: str = "continuation", **params: Any) -> None:
        self.text_column = text_column
        known = {p.name: p for p in self.params}
        check_choices(
            "E070", f"unknown parameter(s) for metric {self.name!r}", params, known, fix=f"see `biaskit metrics list` for {self.name}'s parameters"
        )
        self.config: dict[str, Any] = {}
        for p in self.params:
            if p.name in params:
                self.config[p.name] = p.convert(self.name, params[p.name])
            elif p.required:
                raise BiaskitError(
                    "E070",
                    f"metric {self.name!r} needs the parameter {p.name!r}",
                    options=p.choices or None,
                    fix=f"pass {self.name}.{p.name}=... ({p.help})",
                )
            else:
                self.config[p.name] = p.default
        self._ready = False
        self.info: dict[str, Any] = {}  # facts found at setup (resolved model, lexicon size, CV correlation...)
        self._check_config()

    # ------------------------------------------------------------------ to override
    def _check_config(self) -> None:
        """Validate parameter combinations (cheap; no loading)."""

    def _check_param(self, key: str, ok: bool, must: str, fix: str) -> None:
        """E070 "``<metric>.<key>`` must ``must``" naming the parameter's value, unless ``ok``."""
        if not ok:
            raise BiaskitError("E070", f"{self.name}.{key} must {must}", value=self.config[key], fix=fix)

    def _setup(self) -> None:
        """Load models/lexicons (heavy imports live here)."""

    def fields(self) -> dict[str, pa.DataType]:
        raise NotImplementedError

    def extra_inputs(self) -> list[str]:
        """Input columns read besides the text column."""
        return []

    def _score_texts(self, texts: list[str], batch: Mapping[str, Sequence[Any]], rows: list[int]) -> tuple[dict[str, list], list[str | None]]:
        """Score valid (non-empty string) texts. Return (value columns by field, per-text error or None)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ public
    def setup(self) -> Metric:
        if not self._ready:
            self._setup()
            self._ready = True
        return self

    @property
    def error_column(self) -> str:
        return f"{self.name}_error"

    @property
    def input_columns(self) -> list[str]:
        return [self.text_column, *self.extra_inputs()]

    def output_columns(self) -> dict[str, pa.DataType]:
        """Every column this metric writes, with its type (after setup for data-dependent columns)."""
        cols = {f"{self.name}_{k}": t for k, t in self.fields().items()}
        cols[self.error_column] = pa.string()
        return cols

    def features(self, base: Any = None):
        """``datasets.Features`` of ``base`` (a Features/Dataset features) plus this metric's output columns.

        Pass it as ``features=`` to ``Dataset.map(metric.score, batched=True, ...)``: without it ``datasets``
        cannot type a column whose first batch is all null (e.g. ``<name>_error`` when nothing failed).
        """
        import datasets as hf_datasets

        self.setup()
        feats = dict(base or {})
        out = hf_datasets.Features.from_arrow_schema(pa.schema(list(self.output_columns().items())))
        feats.update(out)
        return hf_datasets.Features(feats)

    def map(self, dataset: Any, batch_size: int | None = None, **kwargs: Any):
        """``dataset.map(self.score, batched=True)`` with the output columns typed (a ``datasets.Dataset``)."""
        return dataset.map(
            self.score, batched=True, batch_size=batch_size or self.default_batch_size, features=self.features(dataset.features), **kwargs
        )

    def cache_identity(self, cache: Any) -> dict[str, Any] | None:
        """What identifies this metric's model for the response cache (``score --cache``), after setup; None
        (the default) means the metric is not cached. See :mod:`biaskit.evaluate.metrics.cached`."""
        return None

    def notes(self, scored: pa.Table) -> list[str]:
        """Cautions about this metric's columns in the scored table ``scored``, printed by ``biaskit score`` under the
        metric's summary line (the judge: degenerate labels, a smoke-test model); none by default."""
        return []

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "version": self.version, "config": dict(self.config), "text_column": self.text_column, "info": dict(self.info)}

    def score(self, batch: Mapping[str, Sequence[Any]]) -> dict[str, list]:
        """Score one batch ``{column: values}``; returns ``{output column: values}`` (same length)."""
        self.setup()
        check_columns(batch, self.input_columns, f"metric {self.name!r} needs column(s)", fix=_NEEDS_COLUMNS_FIX)
        texts = list(batch[self.text_column])
        n = len(texts)
        fields = self.fields()
        out: dict[str, list] = {f: [None] * n for f in fields}
        errors: list[str | None] = [None] * n
        ok_rows: list[int] = []
        for i, t in enumerate(texts):
            if t is None:
                errors[i] = "no text (null)"
            elif not isinstance(t, str):
                errors[i] = f"text is not a string ({type(t).__name__})"
            elif not t.strip():
                errors[i] = "empty text"
            else:
                ok_rows.append(i)
        if ok_rows:
            vals, errs = self._score_texts([texts[i] for i in ok_rows], batch, ok_rows)
            for f in fields:
                col = vals[f]
                for j, i in enumerate(ok_rows):
                    out[f][i] = col[j]
            for j, i in enumerate(ok_rows):
                errors[i] = errs[j]
        # a row with an error never carries values (no half-scored rows that look fine)
        for i, e in enumerate(errors):
            if e is not None:
                for f in fields:
                    if not _is_partial_ok(self, f):
                        out[f][i] = None
        result = {f"{self.name}_{f}": v for f, v in out.items()}
        result[self.error_column] = errors
        return result


def _is_partial_ok(metric: Metric, field: str) -> bool:
    """Fields that stay informative on an error row (e.g. coverage 0.0 when no lexicon word was found)."""
    return field in getattr(metric, "keep_on_error", ())


# ---------------------------------------------------------------------------------------------- helpers


def metric_class(name: str) -> type[Metric]:
    import biaskit.evaluate.metrics.builtin  # noqa: F401  (registers the built-in metrics)

    return reg.get(name)


def make_metric(spec: str | Metric, text_column: str = "continuation", params: Mapping[str, Any] | None = None) -> Metric:
    if isinstance(spec, Metric):
        return spec
    cls = metric_class(spec)
    return cls(text_column=text_column, **dict(params or {}))


def parse_param_args(items: Iterable[str]) -> dict[str, dict[str, str]]:
    """Turn CLI ``metric.key=value`` strings into ``{metric: {key: value}}``."""
    out: dict[str, dict[str, str]] = {}
    for item in items:
        head, sep, value = item.partition("=")
        metric, dot, key = head.partition(".")
        if not sep or not dot or not metric.strip() or not key.strip():
            raise BiaskitError("E070", "malformed --param", value=item, fix="write --param METRIC.KEY=VALUE, e.g. --param vader.preset=sheng")
        out.setdefault(metric.strip(), {})[key.strip()] = value
    return out


def score_table(
    table: Any,
    metrics: Sequence[str | Metric] | str,
    text_column: str = "continuation",
    params: Mapping[str, Mapping[str, Any]] | None = None,
    *,
    batch_size: int | None = None,
    progress: bool | None = None,
    on_metric: Callable[[Metric], None] | None = None,
    engine: Any = None,
    engine_facts: dict | None = None,
    cache: Any = None,
) -> pa.Table:
    """Score ``table`` with ``metrics`` and return it with the metrics' columns added (rows unchanged).

    ``params`` maps a metric name to its parameters, e.g. ``{"vader": {"preset": "sheng"}}``. Existing
    columns of the same name are replaced (re-scoring). ``table`` may be a pyarrow Table, a
    ``datasets.Dataset``, a DataFrame or a list of dicts. ``engine="ray"`` (or an
    :class:`~biaskit.pool.EngineSpec`) scores on a pool of Ray actors, each setting the metric
    up once; the columns are the local engine's (rows in the same order, batches of the spec's batch size).
    ``engine_facts`` (a dict) receives the cluster facts for a manifest. ``cache`` (a folder or
    :class:`~biaskit.evaluate.cache.ResponseCache`) answers the rows a model-based metric scored before
    (:mod:`biaskit.evaluate.metrics.cached`).
    """
    spec = engine_spec(engine)
    cache = open_cache(cache)
    if spec.is_ray and cache is not None:
        raise BiaskitError(
            "E314", "--cache is not available with --engine ray for score", value="ray", fix="drop --cache, or score with --engine local"
        )
    if spec.is_ray:
        if any(not isinstance(m, str) for m in ([metrics] if isinstance(metrics, str) else metrics)):
            raise BiaskitError(
                "E160",
                "a ready metric object cannot be sent to Ray actors",
                fix="pass metric names (each actor builds its own metric), or use engine='local'",
            )
        with RayCluster(spec) as cluster:
            if engine_facts is not None:
                engine_facts.update(cluster.facts)
            return _score_table(table, metrics, text_column, params, batch_size=batch_size, progress=progress, on_metric=on_metric, cluster=cluster)
    return _score_table(table, metrics, text_column, params, batch_size=batch_size, progress=progress, on_metric=on_metric, cluster=None, cache=cache)


def _metric_objects(metrics: Any, text_column: str, params: Any) -> list[Metric]:
    """The metrics to run (names, comma-separated names or objects), built with their parameters; parameters
    for a metric not being run are an error."""
    if isinstance(metrics, str):
        metrics = [m.strip() for m in metrics.split(",") if m.strip()]
    if not metrics:
        import biaskit.evaluate.metrics.builtin  # noqa: F401

        raise BiaskitError("E070", "no metrics given", options=reg.names(), fix="name at least one metric")
    params = dict(params or {})
    names = [m if isinstance(m, str) else m.name for m in metrics]
    check_choices("E070", "parameters given for metric(s) not being run", params, names, fix="add the metric to --metrics or drop its --param")
    return [make_metric(m, text_column, params.get(m if isinstance(m, str) else m.name)) for m in metrics]


def _put_column(t: pa.Table, name: str, arr: Any) -> pa.Table:
    """``t`` with column ``name`` replaced in place, or appended."""
    if name in t.column_names:
        return t.set_column(t.column_names.index(name), name, arr)
    return t.append_column(name, arr)


def _score_on_ray(t: pa.Table, m: Metric, params: Any, cluster: Any, progress: bool | None) -> dict[str, Any]:
    """One metric's output columns, scored by the cluster's actors (each builds the metric from its name and
    the parameters as given: no model in this process)."""
    check_columns(t.column_names, m.input_columns, f"metric {m.name!r} needs column(s)", fix=_NEEDS_COLUMNS_FIX)
    with ProgressBar(t.num_rows, desc=f"score {m.name} (ray)", disable=True if progress is False else None) as bar:
        return score_metric_on_ray(cluster, m, t, params, progress=bar, factory=make_metric)


def _score_here(t: pa.Table, m: Metric, batch_size: int | None, progress: bool | None, cache: Any = None) -> dict[str, pa.Array]:
    """One (set-up) metric's output columns, scored in this process batch by batch (rows found in ``cache``
    are taken from it)."""
    identity = metric_identity(m, cache) if cache is not None else None
    bs = batch_size or m.default_batch_size
    cols = m.output_columns()
    acc: dict[str, list] = {c: [] for c in cols}
    needed = m.input_columns
    with ProgressBar(t.num_rows, desc=f"score {m.name}", disable=True if progress is False else None) as bar:
        for start in range(0, t.num_rows, bs):
            sl = t.slice(start, bs)
            batch = {c: sl.column(c).to_pylist() for c in needed if c in sl.column_names}
            res = m.score(batch) if identity is None else score_cached(m, batch, cache, identity)
            for c in cols:
                acc[c].extend(res[c])
            bar.advance(sl.num_rows)
    return {c: pa.array(acc[c], type=typ) for c, typ in cols.items()}


def _score_table(
    table: Any,
    metrics: Any,
    text_column: str,
    params: Any,
    *,
    batch_size: int | None,
    progress: bool | None,
    on_metric: Callable[[Metric], None] | None,
    cluster: Any,
    cache: Any = None,
) -> pa.Table:
    t = to_arrow(table)
    objs = _metric_objects(metrics, text_column, params)
    params = dict(params or {})
    if text_column not in t.column_names and any(o.text_column == text_column for o in objs):
        raise BiaskitError(
            "E001",
            f"the table has no text column {text_column!r}",
            value=sorted(t.column_names),
            fix="pass --text-column with one of the table's columns (e.g. continuation, full_text, text, token)",
        )
    for m in objs:
        if cluster is not None and t.num_rows:
            arrays = _score_on_ray(t, m, params.get(m.name), cluster, progress)
            if on_metric:
                on_metric(m)  # after the run: m.info holds what the actors found at set-up
        else:
            m.setup()
            if on_metric:
                on_metric(m)
            arrays = _score_here(t, m, batch_size, progress, cache)
        _check_declared_labels(m, arrays)
        for c, arr in arrays.items():
            t = _put_column(t, c, arr)
    return t


def _check_declared_labels(m: Metric, arrays: Mapping[str, Any]) -> None:
    """A metric's label columns hold only the labels it declares (E151; the one check of :mod:`biaskit.labels`),
    so a metric (a plugin) cannot write a label that statistics, annotation and the report do not know."""
    for lo in m.label_outputs:  # (the instance's: a metric whose labels come from a task file sets its own)
        if lo.labels and lo.column in arrays:
            arr = arrays[lo.column]
            vals = arr.to_pylist() if hasattr(arr, "to_pylist") else list(arr)
            if any(isinstance(v, bool) for v in vals):  # a flag column (honest_hurtful) read as "true"/"false"
                vals = [None if v is None else ("true" if v else "false") for v in vals]
            check_values(
                vals,
                lo.labels,
                what=f"metric {m.name!r} wrote",
                column=lo.column,
                fix=f"the metric {m.name!r} must write only its declared labels (its LabelOutput)",
            )
