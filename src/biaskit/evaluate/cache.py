"""A response cache keyed by content: model answers stored in SQLite (WAL mode) under a folder.

Every model call of a run (``generate``, ``likelihood``, ``fill-mask``) and every row a model-based metric
scores (``score``) can be answered from a :class:`ResponseCache` given with ``--cache DIR``. An entry's key
is the sha256 of everything the answer depends on (see :func:`cache_key`), so a changed part is a miss and
never a stale hit:

- the backend (``hf``, ``openai``, or the metric's name and version);
- the model's identity: for local weights the sha256 of the weight files (:func:`weights_identity`,
  computed once and remembered by (path, size, mtime, ctime, inode) in the cache's database); for a Hub model
  its commit; for a server the model id and revision it reports plus ``--model-revision``;
- the tokenizer and its chat template (a hash of both);
- the decoding settings and the seed;
- the prompt (its text, span, prompt id and sample index).

The store is one SQLite file (``DIR/cache.sqlite``) in write-ahead-log mode: several processes may read and
write it at once (each write is one short transaction; a writer waits up to 60 s for another's lock).

Reuse from another metric (e.g. an LLM judge)::

    from biaskit.evaluate.cache import ResponseCache, cache_key

    cache = ResponseCache("runs/cache")
    keys = [cache_key({"backend": "judge", "model": model_identity, "settings": settings, "text": t}) for t in texts]
    found = cache.get_many(keys)             # {key: value} of the keys already answered (counted as hits)
    todo = [k for k in keys if k not in found]  # (counted as misses)
    cache.put_many({k: answer for k, answer in ...}, kind="judge")  # any JSON-serialisable value
    cache.stats()                            # {"hits": ..., "misses": ..., "damaged": ..., "path": ...} for the manifest

:func:`biaskit.evaluate.metrics.cached.score_cached` does this for any metric that declares a
``cache_identity()``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from biaskit import hashing
from biaskit.errors import BiaskitError
from biaskit.formats.cache_entries import DAMAGED, read_entry
from biaskit.log import get_logger
from biaskit.output import clean_obj

log = get_logger("cache")

#: bump when the layout of keys or values changes (old entries then never match)
CACHE_FORMAT = 1
DB_NAME = "cache.sqlite"
#: file name endings counted as model weights (the rest of a model folder is config and tokenizer)
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".gguf", ".h5", ".msgpack", ".onnx", ".npz")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (key TEXT PRIMARY KEY, kind TEXT NOT NULL, value TEXT NOT NULL, created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS weights (path TEXT NOT NULL, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
    ctime_ns INTEGER NOT NULL, inode INTEGER NOT NULL, sha256 TEXT NOT NULL, PRIMARY KEY (path, size, mtime_ns, ctime_ns, inode));
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


def cache_key(parts: Mapping[str, Any]) -> str:
    """The sha256 (hex) of ``parts`` written as canonical JSON (sorted keys), with the cache format."""
    text = json.dumps({"format": CACHE_FORMAT, **parts}, sort_keys=True, default=str, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


_KEY = re.compile(r"^[0-9a-f]{64}$")


def store_key(key: str) -> str:
    """The key as stored: a :func:`cache_key` is a sha256 already; any other string is stored as its sha256, so the
    store never holds a caller's text (a prompt, a name) as a key."""
    return key if _KEY.match(key) else hashlib.sha256(key.encode("utf-8")).hexdigest()


def _folder_error(path: Path, why: str) -> BiaskitError:
    return BiaskitError(
        "E310",
        f"cannot use {path} as a response cache: {why}",
        value=str(path),
        fix="give --cache a folder you can write (it is created when missing), or drop --cache",
    )


#: the tables of a store biaskit made; a database with any other table (or without the format row) is not one
_TABLES = {"entries", "weights", "meta"}


def _not_ours(db: Path, why: str) -> BiaskitError:
    return BiaskitError(
        "E311",
        f"{db} is not a response cache biaskit made ({why}); biaskit leaves it as it is",
        value=str(db),
        fix="give --cache a folder of its own (biaskit creates the cache in it), or remove the file if it is a cache biaskit made",
    )


def check_store(db: Path) -> None:
    """E311 unless ``db`` is missing, an empty database, or a store biaskit made (only its tables, and its format
    row in ``meta``): another application's ``cache.sqlite`` gets no table added and nothing deleted. A store that
    is a symbolic link (or whose ``-wal``/``-shm`` file is one) is refused too: what it points at is not the
    cache folder's. The check opens the file read-only, before the WAL mode is set."""
    for p in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
        if p.is_symlink():
            raise _not_ours(db, f"{p.name} is a symbolic link to {p.resolve()}")
    if not db.exists():
        return
    if not db.is_file():
        raise _not_ours(db, "it is not a file")
    if db.stat().st_size == 0:
        return
    try:
        con = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
        try:
            tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            fmt = con.execute("SELECT value FROM meta WHERE name='format'").fetchone() if "meta" in tables else None
        finally:
            con.close()
    except sqlite3.DatabaseError as exc:
        raise _not_ours(db, f"not a readable SQLite database: {exc}") from None
    if not tables:
        return
    if not tables <= _TABLES or fmt is None:
        raise _not_ours(db, f"it holds the table(s) {', '.join(sorted(tables - _TABLES) or sorted(tables))} and no biaskit format row")


class ResponseCache:
    """The cache folder ``path`` (created when missing) and its SQLite store; counts hits and misses."""

    def __init__(self, path: str | os.PathLike, *, create: bool = True) -> None:
        if isinstance(path, str) and not path.strip():  # Path("") is the current folder: never taken silently
            raise _folder_error(Path(path), "the folder name is empty (it would be the current folder)")
        self.path = Path(path)
        try:
            is_file, has_db = self.path.exists() and not self.path.is_dir(), (self.path / DB_NAME).is_file()
        except OSError as exc:  # a name too long, a folder we may not read
            raise _folder_error(self.path, exc.strerror or str(exc)) from None
        if is_file:
            raise _folder_error(self.path, "it is a file, not a folder")
        if not create and not has_db:
            raise BiaskitError(
                "E311",
                f"{self.path} is not a biaskit response cache (no {DB_NAME} in it)",
                value=str(self.path),
                fix="give the folder that was passed as --cache to generate/likelihood/fill-mask/score",
            )
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise _folder_error(self.path, exc.strerror or str(exc)) from None
        self.db = self.path / DB_NAME
        check_store(self.db)
        self.hits = 0
        self.misses = 0
        self.damaged = 0
        #: {metric: {"tokens_in": N, "tokens_out": M}}: what the rows answered from the cache cost when first asked
        self.hit_tokens: dict[str, dict[str, int]] = {}
        self._local = threading.local()
        try:
            raw = self._conn().raw
            raw.executescript(_SCHEMA)
            raw.execute("INSERT OR IGNORE INTO meta VALUES ('format', ?)", (str(CACHE_FORMAT),))
        except sqlite3.DatabaseError as exc:
            raise BiaskitError(
                "E311",
                f"{self.db} is not a readable response cache ({exc})",
                value=str(self.db),
                fix="run `biaskit cache clear DIR` (or delete the folder) and run again",
            ) from None

    def _conn(self) -> _Tx:
        """This thread's connection (WAL mode, 60 s busy timeout)."""
        c = getattr(self._local, "conn", None)
        if c is None:
            c = sqlite3.connect(self.db, timeout=60.0, isolation_level=None)
            c.execute("PRAGMA journal_mode=WAL")
            c.execute("PRAGMA synchronous=NORMAL")
            self._local.conn = _Tx(c)
            c = self._local.conn
        return c

    # ------------------------------------------------------------------ entries
    def get_many(self, keys: Iterable[str], *, count: bool = True, shape: Callable[[Any], bool] | None = None) -> dict[str, Any]:
        """{key: value} of the keys found; with ``count`` the found keys are hits and the others misses.

        Each stored value is read through the input layer (:func:`read_entry`: JSON, depth and size limits) and
        checked with ``shape`` (the caller's entry schema: a dict of columns, a list of rows). A damaged entry (not
        JSON, ``42`` where rows were stored) is a miss: it is deleted, so the caller computes and stores it again,
        counted in :attr:`damaged` (the manifest's ``cache.damaged``) and named in a warning with E311."""
        keys = list(dict.fromkeys(keys))
        stored = {store_key(k): k for k in keys}
        found: dict[str, Any] = {}
        damaged: list[str] = []
        c = self._conn()
        names = list(stored)
        for i in range(0, len(names), 500):
            chunk = names[i : i + 500]
            q = f"SELECT key, value FROM entries WHERE key IN ({','.join('?' * len(chunk))})"
            for k, v in c.raw.execute(q, chunk):
                value = read_entry(v, source=f"{self.db} entry {k[:12]}")
                if value is DAMAGED or (shape is not None and not shape(value)):
                    damaged.append(k)
                else:
                    found[stored[k]] = value
        if damaged:
            self._drop_damaged(damaged)
        if count:
            self.hits += len(found)
            self.misses += len(keys) - len(found)
        return found

    def _drop_damaged(self, names: list[str]) -> None:
        self.damaged += len(names)
        log.warning(
            "[E311] %d damaged entr%s in the response cache %s (not JSON, or not the shape stored there): treated as misses and computed again",
            len(names),
            "y" if len(names) == 1 else "ies",
            self.db,
        )
        with self._conn() as tx:
            tx.executemany("DELETE FROM entries WHERE key=?", [(k,) for k in names])

    def put_many(self, items: Mapping[str, Any], *, kind: str) -> None:
        """Store ``items`` ({key: JSON-serialisable value}) in one transaction (a key already there is kept).

        The key is stored as a hash (:func:`store_key`) and the value goes through the output layer's redaction
        (:func:`biaskit.output.clean_obj`), as every byte biaskit writes: a secret in the data, in a rendered
        prompt or echoed by a server never reaches ``cache.sqlite``."""
        if not items:
            return
        now = time.time()
        rows = [(store_key(k), kind, json.dumps(clean_obj(v), sort_keys=True, ensure_ascii=False), now) for k, v in items.items()]
        with self._conn() as c:
            c.executemany("INSERT OR IGNORE INTO entries VALUES (?, ?, ?, ?)", rows)

    def count(self, hits: int = 0, misses: int = 0) -> None:
        """Add to the counters (for callers that count rows rather than keys)."""
        self.hits += hits
        self.misses += misses

    def count_hit_tokens(self, name: str, tokens_in: int = 0, tokens_out: int = 0) -> None:
        """Add to the tokens that the rows of metric ``name`` answered from the cache cost when first asked."""
        t = self.hit_tokens.setdefault(name, {"tokens_in": 0, "tokens_out": 0})
        t["tokens_in"] += tokens_in
        t["tokens_out"] += tokens_out

    def stats(self) -> dict[str, Any]:
        """What a manifest records: ``{"hits": N, "misses": M, "damaged": D, "path": DIR}``."""
        return {"hits": self.hits, "misses": self.misses, "damaged": self.damaged, "path": str(self.path)}

    def info(self) -> dict[str, Any]:
        """Entries per kind, the database size and the remembered weight hashes (``biaskit cache info``)."""
        c = self._conn().raw
        kinds = {k: n for k, n in c.execute("SELECT kind, COUNT(*) FROM entries GROUP BY kind ORDER BY kind")}
        size = sum(p.stat().st_size for p in self.path.glob(DB_NAME + "*") if p.is_file())
        n_w = c.execute("SELECT COUNT(*) FROM weights").fetchone()[0]
        return {"path": str(self.path), "entries": sum(kinds.values()), "kinds": kinds, "weight_hashes": n_w, "bytes": size}

    def clear(self) -> int:
        """Delete every entry and remembered weight hash; returns the number of entries deleted."""
        with self._conn() as c:
            n = c.execute("SELECT COUNT(*) FROM entries").fetchone()[0]
            c.execute("DELETE FROM entries")
            c.execute("DELETE FROM weights")
        self._conn().raw.execute("VACUUM")
        return n

    # ------------------------------------------------------------------ weights
    def file_sha256(self, f: Path) -> str:
        """sha256 of the file ``f``, remembered by (path, size, mtime, ctime, inode) in the database.

        A rewrite changes the mtime and the ctime; putting the old mtime back (``os.utime``) changes the ctime
        again, which no user call can set back, so a rewritten file is hashed afresh."""

        st = f.stat()
        memo = (str(f.resolve()), st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
        c = self._conn()
        row = c.raw.execute("SELECT sha256 FROM weights WHERE path=? AND size=? AND mtime_ns=? AND ctime_ns=? AND inode=?", memo).fetchone()
        if row:
            return row[0]
        digest = hashing.sha256_file(f)
        with c as tx:
            tx.execute("DELETE FROM weights WHERE path=?", (memo[0],))
            tx.execute("INSERT OR REPLACE INTO weights VALUES (?, ?, ?, ?, ?, ?)", (*memo, digest))
        return digest

    def close(self) -> None:
        c = getattr(self._local, "conn", None)
        if c is not None:
            c.raw.close()
            self._local.conn = None


class _Tx:
    """A connection whose ``with`` block is one ``BEGIN IMMEDIATE`` transaction (committed, or rolled back)."""

    def __init__(self, raw: sqlite3.Connection) -> None:
        self.raw = raw

    def __enter__(self) -> sqlite3.Connection:
        self.raw.execute("BEGIN IMMEDIATE")
        return self.raw

    def __exit__(self, exc_type: Any, *_: Any) -> None:
        self.raw.execute("ROLLBACK" if exc_type else "COMMIT")


def weight_files(path: str | os.PathLike) -> list[Path]:
    """The weight files of a model file or folder (every file when none has a weight suffix)."""
    p = Path(path)
    if p.is_file():
        return [p]
    files = sorted(x for x in p.rglob("*") if x.is_file())
    weights = [x for x in files if x.name.lower().endswith(WEIGHT_SUFFIXES)]
    return weights or files


def weights_identity(path: str | os.PathLike, cache: ResponseCache) -> str:
    """``sha256:<hex>`` over the weight files of ``path`` (their names relative to it and their sha256s)."""
    p = Path(path)
    h = hashlib.sha256()
    for f in weight_files(p):
        h.update(f"{f.relative_to(p) if p.is_dir() else f.name}\x1f{cache.file_sha256(f)}\n".encode())
    return "sha256:" + h.hexdigest()


#: tokenizer settings that are paths or names of files, not behaviour (left out of the tokenizer hash)
_TOKENIZER_PATHS = {"name_or_path", "vocab_file", "merges_file", "tokenizer_file", "special_tokens_map_file", "_commit_hash"}


def tokenizer_hash(tok: Any) -> str:
    """sha256 of a transformers tokenizer: its model (vocabulary, merges; the fast tokenizer's JSON), its
    settings and special tokens, and its chat template."""
    backend = getattr(tok, "backend_tokenizer", None)
    if backend is not None:
        spec = json.loads(backend.to_str())
        # the truncation and padding a call last set on the fast tokenizer: state, not the tokenizer itself
        spec.pop("truncation", None)
        spec.pop("padding", None)
        body = json.dumps(spec, sort_keys=True)
    else:
        body = json.dumps(sorted(tok.get_vocab().items()))
    kwargs = {k: v for k, v in (getattr(tok, "init_kwargs", None) or {}).items() if k not in _TOKENIZER_PATHS}
    parts = {
        "class": type(tok).__name__,
        "model": hashlib.sha256(body.encode("utf-8")).hexdigest(),
        "settings": json.dumps(kwargs, sort_keys=True, default=str),
        "special": json.dumps(getattr(tok, "special_tokens_map", {}), sort_keys=True, default=str),
        "chat_template": getattr(tok, "chat_template", None),
        "padding_side": getattr(tok, "padding_side", None),
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode("utf-8")).hexdigest()


def open_cache(cache: Any) -> ResponseCache | None:
    """``cache`` as a :class:`ResponseCache` (a folder path is opened; None stays None)."""
    if cache is None or isinstance(cache, ResponseCache):
        return cache
    return ResponseCache(cache)
