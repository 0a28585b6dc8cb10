"""The `bold` preset against BOLD's real published files: how many of its 23,679 prompts come out exactly.

The fixture is BOLD's GitHub files unchanged (CC BY-SA 4.0, tests/fixtures/bold/real/README.md). The shares
are what the rule reproduces today, read off this run and explained in docs/scrape.md; they are asserted as
exact counts, so a change of the rule that loses (or gains) a single prompt shows up here.
"""

from __future__ import annotations

import tarfile
from collections import Counter

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from biaskit.cli import app

from .conftest import FIXTURES

runner = CliRunner()
REAL = FIXTURES / "bold" / "real" / "bold_github.tar.xz"


@pytest.fixture(scope="module")
def bold_table(tmp_path_factory):
    d = tmp_path_factory.mktemp("bold_real")
    with tarfile.open(REAL) as tar:
        tar.extractall(d / "bold", **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    r = runner.invoke(app, ["--quiet", "bold", "import", str(d / "bold"), "--out", str(d / "b.parquet")])
    assert r.exit_code == 0, r.output
    assert "rows 23679, empty_prompts 5, duplicate_prompts 932, entities 7201" in r.output
    return d


def _shares(d, *args):
    """Rows of BOLD whose text the rebuild reproduces exactly (same prompt_id, same text), per domain."""
    r = runner.invoke(app, ["--quiet", "prompts", "rebuild", str(d / "b.parquet"), "--out", str(d / "r.parquet"), *args])
    assert r.exit_code == 0, r.output
    rebuilt = dict(zip(*pq.read_table(d / "r.parquet", columns=["prompt_id", "text"]).to_pydict().values()))
    total, same = Counter(), Counter()
    for pid, dom, text in zip(*pq.read_table(d / "b.parquet", columns=["prompt_id", "domain", "text"]).to_pydict().values()):
        total[dom] += 1
        same[dom] += rebuilt.get(pid) == text
    return {dom: (same[dom], total[dom]) for dom in sorted(total)}, r.output


def test_bold_preset_reproduces_bolds_prompts(bold_table):
    # the project's check: `prompts rebuild b.parquet --out r.parquet --min-words 0 --dedupe none --preset bold`
    shares, out = _shares(bold_table, "--min-words", "0", "--dedupe", "none", "--preset", "bold")
    # every sentence passes the rule; BOLD's 5 empty prompts ('"Communism."' -> '') are dropped as empty_prompt
    assert "sentences 23679, too_short 0, term_not_in_window 0, no_continuation 0, empty_prompt 5," in out
    assert shares == {
        "gender": (3197, 3204),  # 99.8%
        "political_ideology": (1980, 1984),  # 99.8% (the misses: 1 longer prompt, 3 empty prompts)
        "profession": (9389, 10195),  # 92.1%
        "race": (6705, 7657),  # 87.6%
        "religious_ideology": (637, 639),  # 99.7% (the misses are 2 empty prompts)
    }
    same = sum(s for s, _ in shares.values())
    assert same == 21908 and same / 23679 >= 0.92  # 92.5%


def test_preset_defaults_equal_the_check_and_strict_stays_the_default(bold_table):
    # --preset bold already means min_words 0 and no dedupe: same result without the two options
    assert _shares(bold_table, "--preset", "bold")[0]["race"] == (6705, 7657)
    # the default (strict) rule is unchanged: whole words within the first 8 words, short sentences dropped
    shares, out = _shares(bold_table, "--min-words", "0", "--dedupe", "none")
    assert "term_not_in_window 3774, no_continuation 501," in out
    assert sum(s for s, _ in shares.values()) == 17956  # 75.8% (the same count as before the presets)
