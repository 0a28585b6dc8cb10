"""The backend contract is typed at its edges: no public signature or attribute of the contract module mentions
``typing.Any``, each kind's settings type is part of it, dispatch is one explicit mapping, and ``BackendBase``
implements every member of the ``Backend`` protocol."""

from __future__ import annotations

import importlib
import inspect
import typing
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from biaskit.errors import BiaskitError
from biaskit.evaluate.cache import ResponseCache
from biaskit.evaluate.runners import backend as contract
from biaskit.evaluate.runners.backend import SETTINGS_TYPES, Backend, BackendBase, Capabilities, run_kind
from biaskit.evaluate.runners.common import FillMaskSettings, GenerationSettings, LikelihoodSettings, Unit
from biaskit.pool import EngineSpec


def mentions_any(tp: object) -> bool:
    """Whether the resolved annotation ``tp`` is or holds ``typing.Any`` (in a union, a generic's arguments, a
    ``Callable``'s parameter list, ...)."""
    if isinstance(tp, (list, tuple)):
        return any(mentions_any(a) for a in tp)
    return tp is Any or any(mentions_any(a) for a in typing.get_args(tp))


def hints(obj: object, module=contract) -> dict[str, object]:
    import pandas as pd  # the report's section model names DataFrame for type checkers only

    return typing.get_type_hints(obj, globalns={"pd": pd, **vars(module)})


def public_signatures(module, only: Sequence[str] | None = None) -> dict[str, dict[str, object]]:
    """``qualified name -> resolved annotations`` of every public function, class attribute, method and property
    defined in ``module`` (of the names in ``only`` when given)."""
    out: dict[str, dict[str, object]] = {}
    for name, obj in vars(module).items():
        if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__ or (only is not None and name not in only):
            continue
        if inspect.isfunction(obj):
            out[name] = hints(obj, module)
        elif inspect.isclass(obj):
            out[name] = hints(obj, module)
            for attr, member in vars(obj).items():
                if attr.startswith("_"):
                    continue
                fn = member.fget if isinstance(member, property) else member
                if inspect.isfunction(fn):
                    out[f"{name}.{attr}"] = hints(fn, module)
    return out


def annotations_with_any(sigs: dict[str, dict[str, object]]) -> list[str]:
    return sorted(f"{where}: {k}" for where, h in sigs.items() for k, tp in h.items() if mentions_any(tp))


def test_no_public_signature_of_the_backend_contract_mentions_any():
    sigs = public_signatures(contract)
    assert {"Backend.generate", "Backend.likelihood", "Backend.fill_mask", "BackendBase.batch_sizes_used", "JudgeSession.cache_identity"} <= set(sigs)
    assert annotations_with_any(sigs) == []
    aliases = {n: getattr(contract, n) for n in ("ResultRow", "Batches", "RunSettings")}
    assert not any(mentions_any(a) for a in aliases.values())
    # the check sees Any where it is: nested in a generic, in a union, in a Callable's parameters, and bare
    assert mentions_any(dict[str, Any]) and mentions_any(int | list[Any]) and mentions_any(Any) and not mentions_any(dict[str, object])
    assert mentions_any(Callable[[Any, int], None]) and not mentions_any(Callable[[object, int], None])


def test_the_run_options_the_settings_and_the_runner_api_mention_no_any():
    """The other half of a run's contract: :class:`RunOptions` (engine, cache and ready backend typed), the three
    settings types and the Python API that takes them whole."""
    from biaskit.evaluate.runners import api, common, options

    run_options = public_signatures(options)
    assert hints(options.RunOptions, options)["engine"] == str | EngineSpec | None
    assert hints(options.RunOptions, options)["cache"] == str | Path | ResponseCache | None
    assert hints(options.RunOptions, options)["backend_obj"] == Backend | None
    settings = public_signatures(common, only=("GenerationSettings", "LikelihoodSettings", "FillMaskSettings"))
    assert {"GenerationSettings.as_config", "FillMaskSettings.procedure"} <= set(settings)
    runner_api = public_signatures(api)
    assert {"generate", "fill_mask", "likelihood", "constructor_options"} <= set(runner_api)
    assert hints(api.generate, api)["settings"] is GenerationSettings and hints(api.generate, api)["options"] is options.RunOptions
    assert annotations_with_any({**run_options, **settings, **runner_api}) == []


def test_the_scrape_preset_contract_and_the_report_tables_mention_no_any():
    """A scrape preset is parsed into a :class:`DomainConfig` (its fields, ``parse_config``, ``load_config``); a report
    section gives its tables as :class:`TableOut` and finds them with ``find_table``."""
    from biaskit.evaluate.report import model
    from biaskit.scrape import config

    preset = public_signatures(config, only=("DomainConfig", "Domain", "Group", "parse_config", "load_config"))
    assert {"DomainConfig.settings", "parse_config", "load_config"} <= set(preset)
    tables = public_signatures(model, only=("TableOut", "Finding", "Section", "Figure", "find_table"))
    assert annotations_with_any({**preset, **tables}) == []


def test_the_report_section_contract_mentions_no_any():
    """A section function takes the builder (:class:`ReportBuilder`: what it may write and read) and the loaded
    tables; ``register_section`` takes such a function. The builder the report passes implements the protocol."""
    import pandas as pd

    from biaskit.evaluate.report import build, model

    section = public_signatures(model, only=("ReportBuilder", "register_section"))
    assert {"ReportBuilder", "ReportBuilder.table", "ReportBuilder.figure", "register_section"} <= set(section)
    assert annotations_with_any(section) == []
    fn_type = hints(model.register_section, model)["fn"]
    assert not mentions_any(fn_type)
    section_fn, none = typing.get_args(fn_type)
    params, returns = typing.get_args(section_fn)
    assert none is type(None) and params == [model.ReportBuilder, dict[str, pd.DataFrame]] and returns == model.Section | None
    # the report's builder has every member the protocol declares
    members = {n for n in vars(model.ReportBuilder) if not n.startswith("_")} | set(model.ReportBuilder.__annotations__)
    made = build._Builder(Path("unused"), seed=0, n_boot=0, alpha=0.05)
    assert all(hasattr(made, m) for m in members)


def test_the_any_check_finds_a_planted_any_in_a_field_a_parameter_and_a_return(tmp_path, monkeypatch):
    (tmp_path / "planted_contract.py").write_text(
        "from __future__ import annotations\n"
        "from dataclasses import dataclass\n"
        "from typing import Any\n\n"
        "@dataclass\n"
        "class Options:\n"
        "    model: str\n"
        "    engine: Any = None\n\n"
        "    def settings(self) -> dict[str, Any]:\n"
        "        return {}\n\n"
        "def run(prompts: object, cache: str | Any) -> None:\n"
        "    pass\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    planted = importlib.import_module("planted_contract")
    assert annotations_with_any(public_signatures(planted)) == ["Options.settings: return", "Options: engine", "run: cache"]


def test_each_kind_takes_its_own_settings_type():
    assert SETTINGS_TYPES == {"generate": GenerationSettings, "likelihood": LikelihoodSettings, "fill_mask": FillMaskSettings}
    for kind, settings in SETTINGS_TYPES.items():
        assert hints(getattr(Backend, kind))["s"] is settings
        assert hints(getattr(BackendBase, kind))["s"] is settings
        assert hints(getattr(Backend, kind))["return"] == Iterator[list[dict[str, object]]]


class Recording(BackendBase):
    name = "recording"
    capabilities = Capabilities(kinds=("generate", "likelihood", "fill_mask"))

    def __init__(self) -> None:
        self.calls: list[tuple[str, object]] = []

    def generate(self, units, s, batch_size):
        self.calls.append(("generate", s))
        yield [{"_unit": u} for u in units]

    def likelihood(self, units, s, batch_size):
        self.calls.append(("likelihood", s))
        yield []

    def fill_mask(self, units, s, batch_size):
        self.calls.append(("fill_mask", s))
        yield []


def test_dispatch_calls_the_kinds_method_and_refuses_another_kinds_settings():
    be = Recording()
    u = Unit(0, "p0", "text")
    for kind, settings in SETTINGS_TYPES.items():
        list(run_kind(be, kind, [u], settings(), None))
        assert be.calls[-1][0] == kind and isinstance(be.calls[-1][1], settings)
    with pytest.raises(BiaskitError) as e:
        run_kind(be, "likelihood", [u], GenerationSettings(), None)
    assert e.value.code == "E062" and "LikelihoodSettings" in str(e.value)
    with pytest.raises(BiaskitError) as e:
        run_kind(be, "translate", [u], GenerationSettings(), None)
    assert e.value.code == "E062"


def test_backend_base_implements_every_member_of_the_protocol():
    members = set(Backend.__annotations__) | {n for n, v in vars(Backend).items() if inspect.isfunction(v) and not n.startswith("_")}
    assert {"batch_sizes_used", "judge_session", "cache_identity", "bos_policy"} <= members

    class Bare(BackendBase):
        name = "bare"

    one, two = Bare(), Bare()
    assert all(hasattr(one, m) for m in members) and isinstance(one, Backend)
    one.batch_sizes_used.append(4)
    assert one.batch_sizes_used == [4] and two.batch_sizes_used == []  # each instance its own list
    assert one.cache_identity() is None and one.truncated_count == 0
    with pytest.raises(BiaskitError) as e:
        list(one.generate([], GenerationSettings(), None))
    assert e.value.code == "E062" and "bare backend cannot run generate" in str(e.value)


def test_the_run_reads_its_options_by_name_not_through_forwarding():
    from biaskit.evaluate.runners import core

    assert "__getattr__" not in vars(core._Run)


def test_a_result_row_with_a_key_its_kind_has_no_column_for_is_refused(make_prompts):
    from biaskit.evaluate.runners.core import run
    from biaskit.evaluate.runners.options import RunOptions

    class Misspelt(BackendBase):
        name = "misspelt"
        capabilities = Capabilities(kinds=("generate",))

        def generate(self, units, s, batch_size):
            yield [{"_unit": u, "continuaton": "!"} for u in units]  # sic: the continuation would be null without an error

    with pytest.raises(BiaskitError) as e:
        run("generate", make_prompts(["a"]), GenerationSettings(), RunOptions("toy", backend_obj=Misspelt()))
    assert e.value.code == "E062" and "continuaton" in str(e.value) and "continuation" in e.value.options
