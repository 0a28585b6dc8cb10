"""Reading and writing stage tables, atomically, with a manifest next to every output.

Formats are chosen by suffix: ``.parquet``, ``.jsonl`` (also ``.json`` lines), ``.csv``, or a folder
written with ``datasets.Dataset.save_to_disk`` (any path without one of those suffixes, or ending in
``/``). Every write goes to a temporary sibling first and is renamed into place, so a killed run never
leaves a half-written file under the final name. :class:`ShardedWriter` gives long jobs resumable output.
Only one process writes an output at a time (:func:`output_lock`, ``<out>.lock``; E140 names the holder),
and error texts (and known secret values in any text column) are redacted (:func:`redact_error_columns`) by
every writer here.
"""

from __future__ import annotations

import codecs
import datetime as _dt
import functools
import inspect
import json
import os
import shutil
import socket
import sys
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.json as pajson
import pyarrow.parquet as pq

from biaskit.arrow import to_arrow
from biaskit.errors import BiaskitError
from biaskit.jsonread import loads_json, read_back
from biaskit.log import get_logger
from biaskit.output import (
    atomic_path,
    clean_table,
    write_frame_csv,
    write_json,
    write_text,
)
from biaskit.schema import STAGES, conform, validate
from biaskit.secrets import redact
from biaskit.spreadsheet import neutralize_frame

try:  # POSIX advisory locks; the lock file's pid is checked instead where there are none
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

SUFFIXES = (".parquet", ".jsonl", ".csv")
MANIFEST_SUFFIX = ".manifest.json"
LOCK_SUFFIX = ".lock"


def table_format(path: str | os.PathLike) -> str:
    p = str(path)
    low = p.lower()
    for suf in SUFFIXES:
        if low.endswith(suf):
            return suf[1:]
    if low.endswith(".json"):
        return "jsonl"
    if low.endswith("/") or Path(p).suffix == "" or Path(p).is_dir():
        return "arrow_dir"
    raise BiaskitError(
        "E002",
        "unsupported table file type",
        value=p,
        options=[*SUFFIXES, "<folder> (datasets save_to_disk)"],
        fix="name the file with one of the supported suffixes",
    )


# --------------------------------------------------------------------------- atomic primitives


def write_text_atomic(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` atomically, cleaned of secrets (the output layer: :func:`biaskit.output.write_text`)."""
    return write_text(path, text)


def write_json_atomic(path: str | os.PathLike, obj: Any) -> Path:
    """Write ``obj`` as JSON atomically, cleaned of secrets (:func:`biaskit.output.write_json`)."""
    return write_json(path, obj)


# --------------------------------------------------------------------------- output locks
#
# One writer per output. ``<out>.lock`` (next to the output, like ``<out>.parts/``) holds the writer's pid,
# host, command and start time, and an exclusive ``flock`` on it while the writer runs. The kernel drops
# the flock when the process dies (even after ``kill -9``), so a lock file left behind by a dead process is
# taken over; on systems without ``flock`` a lock whose pid no longer exists on this host is taken over.
# A lock written from another host is never taken over automatically (its process cannot be checked).
# Locks are re-entrant within a process: the CLI holds the lock on ``--out`` for the whole command and the
# table writers below take it again around each write.

_held: dict[str, list] = {}  # absolute lock path -> [fd, depth, folders created for the lock]
_held_guard = threading.RLock()


def lock_path(path: str | os.PathLike) -> Path:
    """The lock file of an output: ``<out>.lock`` next to it."""
    p = Path(os.path.abspath(os.fspath(path)))
    return p.parent / (p.name + LOCK_SUFFIX)


def _pid_alive(pid: Any) -> bool:
    try:
        pid = int(pid)
    except (TypeError, ValueError):
        return False
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return True


def _read_lock(fd: int) -> dict:
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        raw = b""
        while chunk := os.read(fd, 65536):
            raw += chunk
        obj = loads_json(raw.decode("utf-8"), source="lock file") if raw.strip() else {}
        return obj if isinstance(obj, dict) else {}
    except (OSError, ValueError, BiaskitError):
        return {}


def _holder_text(h: dict) -> str:
    cmd = h.get("command") or "unknown command"
    return redact(f"pid {h.get('pid', '?')} on host {h.get('host', '?')} ({cmd}, since {h.get('since', '?')})")


def _locked_error(out: str | os.PathLike, lp: Path, holder: dict, *, other_host: bool = False) -> BiaskitError:
    fix = "wait until it has finished, or write to another --out"
    if other_host:
        fix += f"; if that process is no longer running, delete {lp}"
    return BiaskitError("E140", f"{out} is being written by another process: {_holder_text(holder)}", value=str(lp), fix=fix)


def _default_command() -> str:
    argv = [a for a in sys.argv[:2] if a]
    return " ".join([Path(argv[0]).name, *argv[1:]]) if argv else "python"


def acquire_output_lock(path: str | os.PathLike, *, command: str | None = None) -> Path:
    """Take the exclusive lock on output ``path`` (re-entrant in a process); raise E140 naming the holder.

    Release it with :func:`release_output_lock` (or use :func:`output_lock`).
    """
    lp = lock_path(path)
    key = str(lp)
    host = socket.gethostname()
    with _held_guard:
        if key in _held:
            _held[key][1] += 1
            return lp
        created = []  # folders made for the lock file: removed again on release if nothing else was put there
        d = lp.parent
        while not d.exists():
            created.append(d)
            d = d.parent
        lp.parent.mkdir(parents=True, exist_ok=True)
        for _ in range(20):
            fd = os.open(lp, os.O_RDWR | os.O_CREAT, 0o644)
            keep = False
            try:
                if fcntl is not None:
                    try:
                        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    except OSError:
                        raise _locked_error(path, lp, _read_lock(fd)) from None
                    try:  # the holder may have released (and removed) the file between our open and flock
                        same = os.fstat(fd).st_ino == os.stat(lp).st_ino
                    except FileNotFoundError:
                        same = False
                    if not same:
                        continue
                old = _read_lock(fd)
                if old.get("pid") is not None:
                    if old.get("host") != host:
                        raise _locked_error(path, lp, old, other_host=True)
                    if fcntl is None and int(old.get("pid", -1)) != os.getpid() and _pid_alive(old.get("pid")):
                        raise _locked_error(path, lp, old)
                    get_logger("io").warning("taking over the stale lock %s of %s, which is no longer running", lp, _holder_text(old))
                info = {
                    "pid": os.getpid(),
                    "host": host,
                    "command": redact(command or _default_command()),
                    "since": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                }
                data = (json.dumps(info) + "\n").encode("utf-8")
                os.ftruncate(fd, 0)
                os.lseek(fd, 0, os.SEEK_SET)
                os.write(fd, data)
                os.fsync(fd)
                _held[key] = [fd, 1, created]
                keep = True
                return lp
            finally:
                if not keep:
                    os.close(fd)
        raise BiaskitError(
            "E140",
            f"could not take the lock on {path} (it kept changing)",
            value=str(lp),  # pragma: no cover
            fix="check that no other process is writing this output",
        )


def release_output_lock(path: str | os.PathLike) -> None:
    """Release one level of the lock on ``path``; the last release removes the lock file."""
    key = str(lock_path(path))
    with _held_guard:
        ent = _held.get(key)
        if ent is None:
            return
        ent[1] -= 1
        if ent[1] > 0:
            return
        del _held[key]
        fd = ent[0]
        try:
            try:  # remove the file while still holding the flock, so a waiter sees it is gone
                if os.fstat(fd).st_ino == os.stat(key).st_ino:
                    os.unlink(key)
            except OSError:
                pass
        finally:
            os.close(fd)
        for d in ent[2]:  # deepest first; a folder the writer filled stays
            try:
                d.rmdir()
            except OSError:
                break


def holds_output_lock(path: str | os.PathLike) -> bool:
    with _held_guard:
        return str(lock_path(path)) in _held


@contextmanager
def output_lock(path: str | os.PathLike, *, command: str | None = None) -> Iterator[Path]:
    """Hold the exclusive lock on output ``path`` for the ``with`` block (see :func:`acquire_output_lock`)."""
    lp = acquire_output_lock(path, command=command)
    try:
        yield lp
    finally:
        release_output_lock(path)


def locks_output(param: str = "out"):
    """Decorator: the function holds :func:`output_lock` on its ``param`` argument (a path) while it runs."""

    def deco(fn):
        sig = inspect.signature(fn)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            target = sig.bind_partial(*args, **kwargs).arguments.get(param)
            if target is None:
                return fn(*args, **kwargs)
            with output_lock(target):
                return fn(*args, **kwargs)

        return wrapper

    return deco


# --------------------------------------------------------------------------- tables


def _utf8_error(path: Path, data_before: bytes, bad: bytes, what: str, code: str = "E150") -> BiaskitError:
    line = data_before.count(b"\n") + 1
    return BiaskitError(
        code,
        f"{what} {path} is not UTF-8 text: byte 0x{bad[:1].hex().upper()} on line {line}",
        value=str(path),
        fix="save the file as UTF-8 (spreadsheets: 'CSV UTF-8'; or iconv -f latin1 -t utf-8 FILE)",
    )


def check_utf8(path: str | os.PathLike, what: str = "file", chunk: int = 1 << 20) -> None:
    """Raise E150 naming the file and the line of the first byte that is not UTF-8 (streamed, any size)."""
    p = Path(path)
    dec = codecs.getincrementaldecoder("utf-8")()
    newlines = 0
    with open(p, "rb") as fh:
        while True:
            b = fh.read(chunk)
            try:
                dec.decode(b, final=not b)
            except UnicodeDecodeError as exc:
                raise _utf8_error(p, b"\n" * newlines + b[: max(exc.start, 0)], b[max(exc.start, 0) :] or b"?", what) from None
            if not b:
                return
            newlines += b.count(b"\n")


def decode_utf8(data: bytes, path: str | os.PathLike, what: str = "file", *, bom: bool = True, code: str = "E150") -> str:
    """``data`` (read from ``path``: all of the file, or its start) as UTF-8 text (a BOM is dropped), or error ``code``
    (E150 unless the caller's format has its own) naming the file and the line of the first bad byte."""
    if bom and data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]  # dropped here, not by "utf-8-sig": its error offsets would not count the BOM
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _utf8_error(Path(path), data[: exc.start], data[exc.start :], what, code) from None


def read_text_utf8(path: str | os.PathLike, what: str = "file", *, bom: bool = True, code: str = "E150") -> str:
    """The text of a UTF-8 file (a BOM is dropped), or error ``code`` (E150 unless the caller's format has its own)
    naming the file and the line of the first bad byte."""
    return decode_utf8(Path(path).read_bytes(), path, what, bom=bom, code=code)


def read_json_lines(path: str | os.PathLike, what: str, error: Callable[[int, str, bool], BiaskitError], accept: Callable[[Any], bool]) -> list:
    """The JSON value of every non-blank line of a UTF-8 file (``what`` names it in an encoding error); raises
    ``error(line number, line, parsed)`` for a line that is not JSON (``parsed`` False) or whose value ``accept``
    refuses (``parsed`` True), and E380 for a line nested too deep."""
    out = []
    for i, line in enumerate(read_text_utf8(path, what).splitlines(), 1):
        if not line.strip():
            continue
        try:  # (the one JSON reader: a line nested too deep is E380, never a RecursionError)
            obj = loads_json(line, source=str(path), line=i, nonfinite=True)
        except BiaskitError as exc:
            if exc.code == "E380":
                raise
            raise error(i, line, False) from None
        if not accept(obj):
            raise error(i, line, True)
        out.append(obj)
    return out


def read_table(path: str | os.PathLike, stage: str | None = None, *, require: Sequence[str] = (), keys: bool = False) -> pa.Table:
    """Read a table written by biaskit (or by hand) and validate it against ``stage`` if given."""
    p = Path(path)
    fmt = table_format(p)
    if not p.exists():
        raise BiaskitError("E003", "table file not found", value=str(p), fix="check the path, or run the stage that writes it first")
    if fmt in ("csv", "jsonl") and p.is_file():
        check_utf8(p, f"{fmt.upper()} table")  # pyarrow would read bad CSV bytes as a binary column, silently
    try:
        if fmt == "parquet":
            t = pq.read_table(p)
        elif fmt == "jsonl":
            t = _read_jsonl(p)
        elif fmt == "csv":
            t = _read_csv(p)
        else:
            import datasets as hf_datasets

            t = to_arrow(hf_datasets.load_from_disk(str(p)))
    except BiaskitError:
        raise
    except Exception as exc:
        raise BiaskitError(
            "E005", f"could not read {fmt} table {p}: {exc}", fix="check that the file is complete and in the format its suffix says"
        ) from exc
    if stage:
        validate(t, stage, where=str(p), require=require, keys=keys)
    return t


def csv_text_columns() -> dict[str, pa.DataType]:
    """The text columns of every stage (with the stages they extend): read from a CSV as text, whatever they
    look like (ids such as round "1" or annotator "2", an ISO ``retrieved_at``, a ``text`` of "10")."""
    return {c.name: pa.string() for st in STAGES.values() for c in st.columns if pa.types.is_string(c.type)}


def _read_csv(p: Path) -> pa.Table:
    """A CSV with the schema's text columns as text and no date/time inference (biaskit writes no date/time
    columns: a cell such as ``2026-11-30T05:00:00Z`` stays the text it was, so biaskit reads its own CSV output
    back exactly). A UTF-8 BOM and CRLF line ends are fine."""
    types = csv_text_columns()
    t = pacsv.read_csv(p, convert_options=pacsv.ConvertOptions(strings_can_be_null=True, quoted_strings_can_be_null=False, column_types=types))
    temporal = {f.name: pa.string() for f in t.schema if pa.types.is_temporal(f.type) and f.name not in types}
    if temporal:  # (a second pass only for a CSV with date-like cells in columns no stage knows)
        t = pacsv.read_csv(
            p, convert_options=pacsv.ConvertOptions(strings_can_be_null=True, quoted_strings_can_be_null=False, column_types={**types, **temporal})
        )
    return _text_cells_as_written(p, t)


def _text_cells_as_written(p: Path, t: pa.Table) -> pa.Table:
    """Text columns with only an empty cell as null: pyarrow also reads unquoted ``NaN``, ``NA``, ``null``, ``N/A``
    ... as null, so a label column holding ``NaN`` would lose those labels without a word (they are text, and a
    label check refuses them). Numeric columns keep pyarrow's reading (``NaN``, ``NA`` are missing numbers)."""
    redo = [f.name for f in t.schema if pa.types.is_string(f.type) and t.column(f.name).null_count]
    if not redo:
        return t
    again = pacsv.read_csv(
        p,
        convert_options=pacsv.ConvertOptions(
            strings_can_be_null=True,
            quoted_strings_can_be_null=False,
            null_values=[""],
            include_columns=redo,
            column_types={c: pa.string() for c in redo},
        ),
    )
    for c in redo:
        t = t.set_column(t.column_names.index(c), c, again.column(c))
    return t


def _read_jsonl(p: Path) -> pa.Table:
    """JSON Lines as written: JSON has no date/time type, so a string pyarrow would turn into a timestamp
    (an ISO ``retrieved_at``, an error text such as ``2026-11-30``) is read again as the string it is."""
    t = pajson.read_json(p)
    temporal = [f.name for f in t.schema if pa.types.is_temporal(f.type)]
    if temporal:
        opts = pajson.ParseOptions(explicit_schema=pa.schema([(n, pa.string()) for n in temporal]), unexpected_field_behavior="infer")
        t = pajson.read_json(p, parse_options=opts).select(t.column_names)  # (explicit fields come first)
    return t


def redact_error_columns(t: pa.Table) -> pa.Table:
    """``t`` with secrets redacted: error texts (columns ``error`` and ``*_error``) get the full redaction
    (known secret values and credential shapes), every other text column the known secret values, their
    8+ character prefixes and URL credentials (the output layer: :func:`biaskit.output.clean_table`).

    Error texts quote what a server or library said, which can echo a key ("Incorrect API key provided:
    Bearer sk-..."); a server can also answer with the key inside a normal completion (``continuation``,
    ``full_text``). Every table writer passes its rows through here (see :func:`biaskit.secrets.redact`).
    Data columns keep credential-shaped text that is not a known secret ("token=3" in a generated text).
    """
    return clean_table(t)


def _write_jsonl(t: pa.Table, path: Path) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        for batch in t.to_batches(max_chunksize=10_000):
            for row in batch.to_pylist():
                fh.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")


def write_table(
    table: Any,
    path: str | os.PathLike,
    *,
    stage: str | None = None,
    manifest: dict | None = None,
) -> Path:
    """Write ``table`` atomically to ``path`` (format by suffix) and its manifest next to it.

    If ``stage`` is given the table is validated and known columns are cast to the stage's types.
    """
    t = to_arrow(table)
    if stage:
        validate(t, stage, where=str(path), keys=True)  # the checks `schema --check` makes: an output always passes them
        t = conform(t, stage)
    t = redact_error_columns(t)
    p = Path(path)
    fmt = table_format(p)
    with output_lock(p):
        _write_table_locked(t, p, fmt, manifest)
    return p


#: the suffixes a result table (a statistics table: ``stats aggregate|ztest|family|ppi|validity --out``) may have
FRAME_SUFFIXES = (".csv", ".parquet", ".jsonl")


def check_out_suffix(path: str | os.PathLike, allowed: Sequence[str], *, option: str = "--out", what: str = "this command") -> str:
    """The suffix of ``path`` (lower case) when it is one of ``allowed``; else E390 naming the path, the suffixes
    ``what`` writes and the fix. The one check every ``--out`` of a fixed set of formats goes through, so a file is
    never written in one format under another's name."""
    suffix = Path(path).suffix.lower()
    if suffix not in allowed:
        raise BiaskitError(
            "E390",
            f"{option} {path}: {what} does not write {suffix or 'a file without a suffix'}",
            value=str(path),
            options=list(allowed),
            fix=f"name {option} with one of {', '.join(allowed)} (the suffix picks the format)",
        )
    return suffix


def write_frame(df: Any, path: str | os.PathLike, *, option: str = "--out", what: str = "this command") -> Path:
    """Write a pandas frame (a result table) in the format its suffix names: ``.csv`` for spreadsheets (formula-like
    text cells get a leading ``'``: :func:`biaskit.spreadsheet.neutralize_frame`), ``.parquet`` or ``.jsonl``
    (:func:`write_table`); any other suffix is E390 (:func:`check_out_suffix`)."""
    suffix = check_out_suffix(path, FRAME_SUFFIXES, option=option, what=what)
    if suffix == ".csv":
        return write_frame_csv(path, neutralize_frame(df))
    return write_table(pa.Table.from_pandas(df, preserve_index=False), path)


def _write_table_locked(t: pa.Table, p: Path, fmt: str, manifest: dict | None) -> None:
    drop_stale_manifest(p)
    if fmt == "arrow_dir":
        import datasets as hf_datasets

        if p.exists() and not _is_datasets_folder(p):
            raise BiaskitError(
                "E006",
                "the output path exists and is not a `datasets` save_to_disk folder (holding only its own files)",
                value=str(p),
                fix="choose a new path, or a file name ending in .parquet/.jsonl/.csv; biaskit replaces only its own folders",
            )
        with atomic_path(p, is_dir=True) as tmp:
            hf_datasets.Dataset(t).save_to_disk(str(tmp))
    else:
        with atomic_path(p) as tmp:
            if fmt == "parquet":
                pq.write_table(t, tmp)
            elif fmt == "jsonl":
                _write_jsonl(t, tmp)
            else:
                pacsv.write_csv(t, tmp)
    if manifest is not None:
        from biaskit.manifest import finish_manifest

        write_json_atomic(manifest_path(p), finish_manifest(manifest, p, t))


def _is_datasets_folder(p: Path) -> bool:
    """Whether ``p`` is a ``datasets`` save_to_disk folder and nothing else: its state.json and dataset_info.json
    are what ``datasets`` writes, and every other file is an Arrow shard or biaskit's manifest. A folder that also
    holds a user's files (or fake ``{}`` markers) is not one: replacing it would delete them."""
    if not p.is_dir() or p.is_symlink():
        return False
    try:
        state = read_back(p / "state.json", what="datasets state.json")
        info = read_back(p / "dataset_info.json", what="datasets dataset_info.json")
    except OSError:
        return False
    except BiaskitError as exc:
        if exc.code in ("E380", "E387"):  # (a hostile file: said, not taken for "not a datasets folder")
            raise
        return False
    if not (isinstance(state, dict) and isinstance(state.get("_data_files"), list) and isinstance(info, dict)):
        return False
    for f in p.iterdir():
        if not f.is_file() or f.is_symlink():
            return False
        if f.name not in ("state.json", "dataset_info.json", "biaskit_manifest.json") and not (
            f.suffix == ".arrow" and f.name.startswith(("data-", "cache-"))
        ):
            return False
    return True


def drop_stale_manifest(path: str | os.PathLike) -> None:
    """Remove the manifest of an output that is about to be replaced.

    The old manifest describes the old content: removing it first means a run killed between the new table
    and its new manifest leaves a table without a manifest (unfinished), never one with a stale manifest.
    """
    old = Path(path).parent / (Path(path).name + MANIFEST_SUFFIX)
    if old.is_file():
        old.unlink()


def manifest_path(path: str | os.PathLike) -> Path:
    p = Path(path)
    if table_format(p) == "arrow_dir":
        return p / "biaskit_manifest.json" if p.exists() else p.parent / (p.name + MANIFEST_SUFFIX)
    return p.parent / (p.name + MANIFEST_SUFFIX)


def read_manifest(path: str | os.PathLike) -> dict | None:
    for cand in (Path(path).parent / (Path(path).name + MANIFEST_SUFFIX), Path(path) / "biaskit_manifest.json"):
        if cand.is_file():
            return read_back(cand, what="manifest")
    return None


# --------------------------------------------------------------------------- resumable output


class ShardedWriter:
    """Resumable, append-only output for long jobs.

    Rows are written in Parquet shards (each written atomically) into ``<out>.parts/``. After a kill, a
    new writer on the same ``out`` sees which keys are done (:meth:`done_keys`) so the job can skip them;
    :meth:`finalize` merges the shards, drops duplicate keys (keeping the first), writes ``out`` atomically
    with its manifest and removes the parts folder. A shard is only ever visible complete.
    """

    def __init__(self, out: str | os.PathLike, key: Sequence[str], *, schema: pa.Schema | None = None) -> None:
        self.out = Path(out)
        self.key = tuple(key)
        self.parts = self.out.parent / (self.out.name + ".parts")
        # one writer per output: the lock on ``out`` is held until finalize() or close() (unless the caller
        # already holds it for a longer span, e.g. the runner for the whole run)
        self._locked = False
        if not holds_output_lock(self.out):
            acquire_output_lock(self.out)
            self._locked = True
        try:
            self.parts.mkdir(parents=True, exist_ok=True)
        except BaseException:
            self.close()
            raise
        self.schema = schema
        self._n = len(list(self.parts.glob("part-*.parquet")))

    def close(self) -> None:
        """Release the output lock (finalize() does it too); the shards stay for a resume."""
        if getattr(self, "_locked", False):
            self._locked = False
            release_output_lock(self.out)

    def __enter__(self) -> ShardedWriter:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # pragma: no cover - interpreter shutdown
            pass

    def shards(self) -> list[Path]:
        return sorted(self.parts.glob("part-*.parquet"))

    def done_keys(self) -> set[tuple]:
        keys: set[tuple] = set()
        for shard in self.shards():
            t = pq.read_table(shard, columns=list(self.key))
            cols = [t.column(k).to_pylist() for k in self.key]
            keys.update(zip(*cols))
        return keys

    def write(self, rows: Any) -> None:
        t = to_arrow(rows)
        if t.num_rows == 0:
            return
        if self.schema is not None:
            t = t.select(self.schema.names).cast(self.schema)
        t = redact_error_columns(t)
        name = f"part-{self._n:06d}-{uuid.uuid4().hex[:6]}.parquet"
        self._n += 1
        with atomic_path(self.parts / name) as tmp:
            pq.write_table(t, tmp)

    def read_all(self) -> pa.Table | None:
        shards = self.shards()
        if not shards:
            return None
        tables = [pq.read_table(s) for s in shards]
        return pa.concat_tables(tables, promote_options="permissive")

    def finalize(self, *, stage: str | None = None, manifest: dict | None = None, empty: pa.Table | None = None) -> Path:
        t = self.read_all()
        if t is None:
            if empty is None:
                raise BiaskitError("E005", "no rows were produced", value=str(self.out), fix="check the input table is not empty")
            t = empty
        t = drop_duplicate_keys(t, self.key)
        try:
            write_table(t, self.out, stage=stage, manifest=manifest)
            shutil.rmtree(self.parts, ignore_errors=True)
        finally:
            self.close()
        return self.out


def drop_duplicate_keys(t: pa.Table, key: Sequence[str]) -> pa.Table:
    if not key or t.num_rows == 0:
        return t
    seen: set[tuple] = set()
    keep: list[int] = []
    cols = [t.column(k).to_pylist() for k in key]
    for i, k in enumerate(zip(*cols)):
        if k not in seen:
            seen.add(k)
            keep.append(i)
    if len(keep) == t.num_rows:
        return t
    return t.take(pa.array(keep, type=pa.int64()))


def iter_batches(t: pa.Table, batch_size: int) -> Iterable[pa.Table]:
    for start in range(0, t.num_rows, batch_size):
        yield t.slice(start, batch_size)
