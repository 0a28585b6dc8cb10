"""Coded error catalogue.

Every user-facing error is a :class:`BiaskitError` with a stable code (``E0xx``), saying what was wrong,
the value received, the valid options where there is a closed set, and the fix. The CLI prints
``error[E0xx]: ...`` on one line and exits with status 1.

Codes are grouped: E00x core/tables, E01x assets and extras, E02x registry/config, E03x scrape,
E04x templates, E05x hub, E06x models, E07x metrics, E08x statistics/reports, E09x annotation.
"""

from __future__ import annotations

import importlib
from collections.abc import Collection, Iterable
from typing import Any, TypeVar, cast

from biaskit.secrets import redact

_T = TypeVar("_T")

#: code -> short title. New codes are added here (a test checks every raised code is catalogued).
CATALOGUE: dict[str, str] = {
    "E001": "missing required columns",
    "E002": "unsupported table file type",
    "E003": "table file not found",
    "E004": "column has the wrong type",
    "E005": "invalid value",
    "E006": "output exists and is not a finished biaskit output",
    "E007": "duplicate key in table",
    "E008": "unknown stage",
    "E010": "asset not found",
    "E011": "optional dependency missing",
    "E012": "download failed or checksum mismatch",
    "E020": "unknown registry name",
    "E021": "invalid configuration",
    "E030": "MediaWiki API error",
    "E031": "MediaWiki endpoint unreachable or not an API",
    "E032": "malformed dump",
    "E033": "page not found",
    "E034": "invalid BOLD file",
    "E230": "unknown term_match in a domain config",
    "E231": "unknown words unit in a domain config",
    "E232": "no lemma dictionary for the language (term_match: lemma)",
    "E233": "invalid multistream index",
    "E234": "--engine ray needs a multistream dump",
    "E040": "invalid template file",
    "E041": "invalid translation sheet",
    "E420": "invalid counterfactual axis file",
    "E421": "unknown counterfactual axis",
    "E422": "the counterfactual axis cannot swap this language",
    "E423": "no text has a word of the counterfactual axis",
    "E424": "counterfactual metrics input error",
    "E050": "Hub staging/validation error",
    "E051": "Hub authentication missing",
    "E052": "Hub upload failed",
    "E053": "invalid Hub repository id or revision",
    "E054": "unknown or malformed dataset source",
    "E060": "model loading error",
    "E061": "endpoint error",
    "E062": "invalid runner settings",
    "E063": "resume state does not match the run",
    "E070": "metric input error",
    "E071": "lexicon error",
    "E080": "statistics input error",
    "E081": "report error",
    "E090": "Label Studio error",
    "E091": "annotation input error",
    "E092": "annotation round error",
    "E120": "invalid West Slavic subject list or import option",
    "E121": "unreadable West Slavic template spreadsheet",
    "E140": "output is being written by another process",
    "E141": "a name from the data would leave the output folder",
    "E142": "endpoint redirected the request",
    "E143": "a link in the folder points outside it",
    "E150": "file is not valid UTF-8 text",
    "E151": "labels outside the metric's vocabulary",
    "E152": "refusing to replace a table with fewer rows",
    "E153": "value of the wrong type in an input file",
    "E154": "name too long",
    "E155": "null key in table",
    "E156": "file system error on a path",
    "E160": "invalid engine settings (--engine, --ray-*)",
    "E161": "could not connect to or start Ray",
    "E162": "a Ray run returned different rows than it was given",
    "E170": "generation-bias input error",
    "E171": "training data error",
    "E172": "invalid training settings",
    "E173": "trained classifier folder error",
    "E210": "a value for a card or record field is not one line of text",
    "E211": "input file has no records",
    "E220": "generation-bias value or method out of range",
    "E240": "a plugin (metric, backend, report section, scrape preset) takes a name registered already",
    "E241": "a registered metric or report section cannot be imported, or declares no such label output",
    "E242": "an HTTP request failed after its retries (connection, timeout, a retryable status) or cannot be retried",
    "E260": "invalid lm-eval export settings",
    "E261": "not the lm-eval output of a biaskit task",
    "E262": "malformed lm-eval samples or results file",
    "E263": "lm-eval sample without biaskit ids",
    "E264": "duplicate lm-eval sample",
    "E265": "cannot count tokens for lm-eval log-likelihoods",
    "E270": "unknown baseline span",
    "E271": "local model folder not found",
    "E250": "no annotations to aggregate",
    "E251": "labels outside the task's label set",
    "E252": "annotations cannot support a label model (one annotator or no overlap)",
    "E253": "unknown label model",
    "E254": "not a labels table",
    "E255": "per-group validation input error",
    "E256": "round plan error",
    "E300": "the endpoint gives no log-probabilities for the prompt",
    "E310": "response cache folder cannot be used",
    "E311": "not a response cache",
    "E312": "backend does not take this option",
    "E313": "invalid prompt format or system prompt",
    "E314": "response cache not available here",
    "E315": "backend cannot judge (its capabilities lack chat_template or logprobs)",
    "E316": "chat template failed to render",
    "E317": "server response does not match its schema",
    "E318": "a --backend-option the backend does not declare, or a value not of its type",
    "E319": "a backend without a cache identity cannot run with --cache",
    "E320": "judge task error (task file, labels, instruction)",
    "E321": "judge option-order error",
    "E322": "judge model has no chat template",
    "E323": "judge label tokens cannot tell the labels apart",
    "E324": "judge parameter error",
    "E325": "judge report input error",
    "E330": "confidence level outside (0, 1)",
    "E331": "unknown interval method for a share",
    "E332": "a test family needs at least one test and 0 < alpha < 1",
    "E333": "unknown test family kind",
    "E334": "smallest gap of interest (--min-gap) outside (0, 1)",
    "E340": "cluster column not in the table",
    "E341": "clustered analysis input error",
    "E342": "prediction-powered inference input error",
    "E343": "group without a metric label (stats ppi)",
    "E344": "label not in the metric or human column (stats ppi)",
    "E345": "round does not match the scored table (stats ppi)",
    "E346": "conflicting or missing human-label options (stats ppi)",
    "E347": "paired template analysis input error",
    "E348": "PPI round plan error",
    "E430": "malformed CrowS-Pairs file",
    "E431": "not a pairs table (pair_id, variant or the score column missing)",
    "E432": "the pairs score column is not numeric",
    "E433": "a pair has more than two rows",
    "E434": "a pair's rows are in different groups, or a group is named all",
    "E435": "no axis declared for the pairs audit",
    "E436": "the pairs audit's --by column is not in the table",
    "E350": "human label column without any label (stats ppi)",
    "E380": "an input document is nested too deeply",
    "E381": "a value of the wrong type or out of range in an input file",
    "E382": "an unknown key in an input file",
    "E383": "more worker processes than the machine has CPUs",
    "E384": "the Ray address does not answer as Ray",
    "E385": "a multistream index does not match its streams",
    "E386": "an invalid label (not a label the task or metric declares)",
    "E387": "an input document is larger than biaskit reads",
    "E388": "a file the round ledger recorded was changed since (its checksum differs)",
    "E389": "refusing to replace an earlier round's samples table",
    "E390": "--out has a suffix the command does not write",
    "E395": "the text annotators saw is not the text the metric scored (validation not like for like)",
    "E410": "unknown slot in a BBQ template (or agreement with a person of no known grammatical gender)",
    "E411": "a BBQ template list (Names, Lexical_diversity, stereotyped groups) does not parse",
    "E412": "a vocabulary category a BBQ template needs is missing",
    "E413": "BBQ templates folder missing or incomplete",
    "E414": "unknown BBQ category",
    "E415": "invalid BBQ examples table",
    "E416": "BBQ prediction input error",
    "E417": "a BBQ translation does not keep the slots or lists of its source, or its agreement forms do not resolve",
}


def _fmt_options(options: Iterable[Any] | None, limit: int = 12) -> str:
    if options is None:
        return ""
    opts = [str(o) for o in options]
    if not opts:
        return "(none available)"
    shown = ", ".join(repr(o) for o in opts[:limit])
    if len(opts) > limit:
        shown += f", ... ({len(opts) - limit} more)"
    return shown


class BiaskitError(Exception):
    """A user-facing error with a code, the offending value, the valid options and the fix."""

    def __init__(
        self,
        code: str,
        what: str,
        *,
        value: Any = None,
        options: Iterable[Any] | None = None,
        fix: str | None = None,
    ) -> None:
        if code not in CATALOGUE:
            raise ValueError(f"unknown error code {code!r}; add it to biaskit.errors.CATALOGUE")
        self.code = code
        self.what = what
        self.value = value
        self.options = list(options) if options is not None else None
        self.fix = fix
        super().__init__(self.message)

    def __reduce__(self):
        # picklable (Ray sends an actor's error back to the driver pickled); subclasses keep their own way
        if type(self) is not BiaskitError:
            return super().__reduce__()
        return (_rebuild_error, (self.code, self.what, self.value, self.options, self.fix))

    @property
    def message(self) -> str:
        parts = [f"[{self.code}] {self.what}"]
        if self.value is not None:
            v = redact(repr(self.value))  # redact first, cut after (a secret across the cut would survive in part)
            if len(v) > 200:
                v = v[:197] + "..."
            parts.append(f"got {v}")
        if self.options is not None:
            parts.append(f"valid: {_fmt_options(self.options)}")
        if self.fix:
            parts.append(f"fix: {self.fix}")
        return "; ".join(parts)

    def __str__(self) -> str:
        return self.message


def _rebuild_error(code: str, what: str, value: Any, options: Any, fix: Any) -> BiaskitError:
    return BiaskitError(code, what, value=value, options=options, fix=fix)


def check_choice(code: str, what: str, value: _T | None, allowed: Collection[Any], *, fix: str, options: Iterable[Any] | None = None) -> _T:
    """Error ``code`` (``what``, naming ``value``, the valid ``options``, by default ``allowed``, and the ``fix``)
    unless ``value`` is one of ``allowed``: the check of a value taken from a closed set. Returns ``value``,
    typed as one of them."""
    if value not in allowed:
        raise BiaskitError(code, what, value=value, options=allowed if options is None else options, fix=fix)
    return cast(_T, value)


def check_choices(code: str, what: str, values: Iterable[Any], allowed: Collection[Any], *, fix: str) -> None:
    """Error ``code`` unless every one of ``values`` is one of ``allowed``: the check of several values taken from
    a closed set (parameter names, metric names). The message is ``what`` followed by the values not allowed; the
    error's value is the list of those, its options ``allowed``."""
    bad = [v for v in values if v not in allowed]
    if bad:
        raise BiaskitError(code, f"{what}: {', '.join(map(str, bad))}", value=bad, options=list(allowed), fix=fix)


class MissingDependencyError(BiaskitError, ImportError):
    """An optional dependency is not installed; the message names the exact extra."""

    def __init__(self, module: str, extra: str, purpose: str = "") -> None:
        self.extra = extra
        self.module = module
        what = f"{module!r} is not installed" + (f" (needed for {purpose})" if purpose else "")
        BiaskitError.__init__(self, "E011", what, fix=f"pip install 'biaskit[{extra}]'")


def require(module: str, extra: str, purpose: str = ""):
    """Import and return ``module``, or raise :class:`MissingDependencyError` naming ``extra``."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:  # pragma: no cover - exercised by monkeypatching in tests
        raise MissingDependencyError(module, extra, purpose) from exc
