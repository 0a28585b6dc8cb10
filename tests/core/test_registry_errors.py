import re
import subprocess
import sys
from pathlib import Path

import pytest

from biaskit.errors import CATALOGUE, BiaskitError, MissingDependencyError, check_choice, check_choices
from biaskit.registry import Registry

ROOT = Path(__file__).resolve().parents[2]


def test_unknown_name_suggests_close_matches():
    r = Registry("metric")
    r.register("vader", "json:dumps")
    r.register("regard", "json:loads")
    with pytest.raises(BiaskitError) as ei:
        r.get("vadr")
    assert ei.value.code == "E020"
    assert "did you mean 'vader'" in str(ei.value)
    assert "'regard'" in str(ei.value)  # all options listed


def test_lazy_entries_import_only_on_get():
    r = Registry("backend")
    r.register("fake", "biaskit_no_such_module:thing")
    assert "fake" in r and r.names() == ["fake"]
    with pytest.raises(ModuleNotFoundError):
        r.get("fake")
    r.register("dumps", "json:dumps")
    import json

    assert r.get("dumps") is json.dumps


def test_error_codes_must_be_catalogued():
    with pytest.raises(ValueError):
        BiaskitError("E999", "nope")


def test_check_choice_passes_a_member_and_names_value_options_and_fix_otherwise():
    assert (
        check_choice("E091", "unknown allocation", "equal", ("equal", "proportional"), fix="use --allocation equal") == "equal"
    )  # the member comes back, typed
    with pytest.raises(BiaskitError) as e:
        check_choice("E091", "unknown allocation", "eq", ("equal", "proportional"), fix="use --allocation equal")
    assert (e.value.code, e.value.what, e.value.value, e.value.options, e.value.fix) == (
        "E091",
        "unknown allocation",
        "eq",
        ["equal", "proportional"],
        "use --allocation equal",
    )
    with pytest.raises(BiaskitError) as e:  # options shown can differ from the members checked (a dict: its keys)
        check_choice("E091", "unknown task type", "x", {"sentiment": 1}, options=["sentiment", "<name>:<a>,<b>"], fix="f")
    assert e.value.options == ["sentiment", "<name>:<a>,<b>"] and "got 'x'" in str(e.value)


def test_check_choices_passes_members_and_names_only_the_values_not_allowed():
    assert check_choices("E070", "unknown parameter(s)", ["a", "b"], {"a": 1, "b": 2}, fix="f") is None
    assert check_choices("E070", "unknown parameter(s)", [], (), fix="f") is None  # nothing given, nothing to refuse
    with pytest.raises(BiaskitError) as e:  # a dict's keys are the options; the bad values keep their order
        check_choices("E070", "unknown parameter(s) for metric 'vader'", ["z", "a", "y"], {"a": 1, "b": 2}, fix="see the list")
    assert (e.value.code, e.value.what, e.value.value, e.value.options, e.value.fix) == (
        "E070",
        "unknown parameter(s) for metric 'vader': z, y",
        ["z", "y"],
        ["a", "b"],
        "see the list",
    )


def test_every_raised_code_is_in_the_catalogue():
    codes = set()
    for f in (ROOT / "src" / "biaskit").rglob("*.py"):
        codes |= set(re.findall(r"(?:BiaskitError|check_choice)\(\s*\"(E\d{3})\"", f.read_text(encoding="utf-8")))
    assert codes, "no error codes found"
    assert codes <= set(CATALOGUE), codes - set(CATALOGUE)


def test_every_extra_named_in_messages_exists_in_pyproject():
    import tomllib

    extras = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    named = set()
    for f in (ROOT / "src" / "biaskit").rglob("*.py"):
        text = f.read_text(encoding="utf-8")
        named |= set(re.findall(r"biaskit\[([a-z_,-]+)\]", text))
        named |= set(re.findall(r"require\(\s*\"[\w.]+\",\s*\"([a-z_-]+)\"", text))
        named |= set(re.findall(r"MissingDependencyError\(\s*\"[\w.]+\",\s*\"([a-z_-]+)\"", text))
    named = {n for group in named for n in group.split(",")}
    assert named, "no extras found in messages"
    assert named <= extras, f"messages name extras that pyproject.toml lacks: {named - extras}"


def test_missing_dependency_error_names_the_extra():
    e = MissingDependencyError("label_studio_sdk", "annotate", "Label Studio rounds")
    assert "pip install 'biaskit[annotate]'" in str(e) and isinstance(e, ImportError)


def test_import_biaskit_and_cli_do_not_import_heavy_libraries():
    code = (
        "import sys, biaskit, biaskit.schema, biaskit.io, biaskit.assets, biaskit.cli, biaskit.pool\n"
        "from typer.testing import CliRunner\n"
        "r = CliRunner().invoke(biaskit.cli.app, ['--help'])\n"
        "assert r.exit_code == 0, r.output\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'transformers', 'spacy', 'tensorflow', 'gensim', 'ray'))\n"
        "print(','.join(heavy))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "", f"heavy modules imported: {r.stdout}"


def test_biaskit_error_survives_pickling():
    """Ray returns an actor's exception to the driver pickled; it must come back as the same error."""
    import pickle

    from biaskit.errors import BiaskitError

    e = BiaskitError("E060", "model path does not exist", value="/x", options=["a", "b"], fix="check the path")
    back = pickle.loads(pickle.dumps(e))
    assert type(back) is BiaskitError and str(back) == str(e)
    assert (back.code, back.what, back.value, back.options, back.fix) == ("E060", "model path does not exist", "/x", ["a", "b"], "check the path")
