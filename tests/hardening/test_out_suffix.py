"""Every ``--out FILE`` picks its format by the file's suffix through one writer, or refuses the suffix with a
coded error: never a CSV under a ``.parquet`` name (``stats ppi --out ppi.parquet`` wrote CSV)."""

from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))

from test_command_matrix import MATRIX, _check, _out, _run, canaries, inputs  # noqa: E402,F401

SUFFIXES = (".parquet", ".jsonl", ".csv", ".txt")


def _reads_as(p: Path, suffix: str) -> bool:
    """Whether the bytes of ``p`` are a file of the format ``suffix`` names."""
    data = p.read_bytes()
    if suffix == ".parquet":
        return data[:4] == b"PAR1" and pq.read_table(p).num_rows >= 0
    if data[:4] == b"PAR1":
        return False
    text = data.decode("utf-8")
    if suffix == ".jsonl":
        return all(isinstance(json.loads(line), dict) for line in text.splitlines() if line.strip())
    if suffix == ".csv":
        rows = list(csv.reader(io.StringIO(text)))
        return bool(rows) and all(len(r) == len(rows[0]) for r in rows if r) and not text.lstrip().startswith(("{", "["))
    if suffix == ".json":
        return json.loads(text) is not None
    if suffix in (".yaml", ".yml"):
        return yaml.safe_load(text) is not None
    return False  # (.txt: no command writes a table as plain text)


FILE_OUTS = sorted(c for c, e in MATRIX.items() if e.out == "file" and not e.slow)


@pytest.mark.parametrize("suffix", SUFFIXES)
@pytest.mark.parametrize("command", FILE_OUTS)
def test_out_is_written_in_the_format_its_suffix_names_or_refused(command, suffix, inputs, canaries, tmp_path):  # noqa: F811
    d = tmp_path / "w"
    d.mkdir()
    args = MATRIX[command].argv(inputs, d)
    target = d / f"result{suffix}"
    args = _out(args, target)
    res = _run(args)
    shown = _check(res, args)
    if res.exit_code == 1:
        assert "error[E" in res.output, shown
        assert not target.exists(), shown
        return
    assert target.is_file(), shown
    assert _reads_as(target, suffix), f"{target.name} is not {suffix}\n{shown}\n{target.read_bytes()[:200]!r}"
