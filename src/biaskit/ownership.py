"""Folder ownership (part of the output layer, :mod:`biaskit.output`): which files biaskit may replace.

A folder belongs to biaskit only if its marker file is well-formed, says it was written by biaskit (for this
kind of output) and lists the folder's biaskit files with their sha256. Everything else in the folder is the
user's: it is never replaced or deleted. ``{}`` or any other marker biaskit did not write, or a listed file whose
content changed since (an edited README), is error E006 unless the caller passes ``overwrite``; even then only
biaskit's own unchanged files are replaced, and a user's file in the way is kept as ``<name>.user-<n>``.

:func:`write_owned_folder` stages the new files in a temporary sibling, moves each into place (the marker, last,
lists the new files), and removes the earlier files of biaskit that were not written again and are unchanged.
A side file (``<stem>.annotators.parquet`` next to ``--out``) is owned the same way through its manifest, which
records its sha256 (:func:`check_side_file`).
"""

from __future__ import annotations

import os
import re
import shutil
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from biaskit import hashing  # (as a module: tests patch hashing.sha256_file)
from biaskit.errors import BiaskitError
from biaskit.formats.markers import MARKER_FIELDS, MARKER_FILE_FIELDS
from biaskit.inputs import check_record
from biaskit.io import MANIFEST_SUFFIX
from biaskit.jsonread import read_back
from biaskit.output import write_json

WRITTEN_BY = "biaskit"
_SHA = re.compile(r"^[0-9a-f]{64}$")


@dataclass
class FolderClaim:
    """What biaskit may do in an output folder: ``owned`` are its unchanged files (relative path -> sha256)."""

    out: Path
    marker: str
    kind: str
    overwrite: bool = False
    owned: dict[str, str] = field(default_factory=dict)
    previous: dict[str, Any] = field(default_factory=dict)  # the earlier marker's content, when it is biaskit's


def read_marker(path: Path, kind: str) -> dict[str, str] | None:
    """The ``files`` (relative path -> sha256) of a well-formed marker of ``kind``; None when it is not one."""
    try:  # (the marker's declaration is the input layer's: MARKER_FIELDS; one that does not keep it is not biaskit's)
        m = check_record(_read_back(path), MARKER_FIELDS, source=str(path), unknown="keep")
    except BiaskitError as exc:
        if exc.code in ("E380", "E387"):
            raise
        return None
    files = m["files"]
    if m["written_by"] != WRITTEN_BY or m["kind"] != kind or not files:
        return None
    out = {}
    for rel, entry in files.items():
        if isinstance(entry, dict):  # {"bytes", "sha256"} (``sizes``) or the sha256
            try:
                entry = check_record(entry, MARKER_FILE_FIELDS, source=str(path), where=f"files[{rel!r}]")
            except BiaskitError:
                return None
        sha = entry.get("sha256") if isinstance(entry, dict) else entry
        p = Path(rel) if isinstance(rel, str) else None
        if p is None or p.is_absolute() or ".." in p.parts or not isinstance(sha, str) or not _SHA.match(sha):
            return None
        out[p.as_posix()] = sha
    return out


def escapes(out: str | os.PathLike, rel: str | os.PathLike) -> Path | None:
    """Where ``out/rel`` leads once every symbolic link on its way is followed, when that is outside ``out``
    (``link/thesis.tex`` with ``link -> ~/papers``); None when it stays inside (or does not exist yet and its
    existing parents stay inside)."""
    root = Path(out).resolve()
    try:
        target = (Path(out) / rel).resolve()
    except (OSError, RuntimeError):  # a link loop
        return Path(out) / rel
    return None if target == root or target.is_relative_to(root) else target


def refuse_escaping(out: str | os.PathLike, rels: Iterable[str | os.PathLike], *, what: str = "the folder") -> None:
    """E143 for the first of ``rels`` (paths relative to ``out``: listed in a marker, or about to be written)
    that leads outside ``out`` after symbolic links are followed: biaskit never writes or deletes through it."""
    for rel in rels:
        target = escapes(out, rel)
        if target is not None:
            raise BiaskitError(
                "E143",
                f"{Path(out) / rel} in {what} leads to {target}, outside {out}: biaskit neither writes nor deletes through a link",
                value=str(Path(rel).as_posix()),
                fix="remove the link (or replace it by a folder of its own), or choose a new --out folder",
            )


def _read_back(path: Path) -> Any:
    """A marker or manifest biaskit wrote, read through the one JSON reader (:func:`biaskit.jsonread.read_back`: too deep
    is E380, too large E387); None when it is missing or not JSON (then it is not one biaskit wrote)."""
    if not path.is_file():
        return None
    try:
        return read_back(path, what="marker")
    except BiaskitError as exc:
        if exc.code in ("E380", "E387"):
            raise
        return None


def _refuse(out: Path, what: str, fix: str) -> BiaskitError:
    return BiaskitError("E006", f"{out}: {what}", value=str(out), fix=fix)


def claim_folder(out: str | os.PathLike, marker: str, kind: str, *, overwrite: bool = False, exclusive: bool = False) -> FolderClaim:
    """Check that biaskit may write the folder ``out`` (see the module doc); E006 otherwise.

    ``exclusive``: the folder is published as a whole (``hub stage``: every file in it is uploaded), so a file
    its marker does not list is E006 too unless ``overwrite``."""

    out = Path(out)
    claim = FolderClaim(out, marker, kind, overwrite)
    if not out.exists():
        return claim
    if not out.is_dir():
        raise _refuse(out, "--out is an existing file, not a folder", "choose a new --out folder")
    entries = [p for p in out.iterdir() if not p.name.startswith(".")]
    if not entries:
        return claim
    files = read_marker(out / marker, kind)
    how = "pass --overwrite to write into it anyway (only biaskit's own unchanged files are replaced; yours are kept)"
    if files is not None:
        refuse_escaping(out, files, what=f"the files its {marker} lists")
        claim.previous = read_back(out / marker, what=f"the marker {marker}")
    if files is None:
        if not overwrite:
            what = f"its {marker} was not written by biaskit" if (out / marker).exists() else f"the folder holds files and no {marker}"
            raise _refuse(out, f"not a folder biaskit wrote ({what})", f"choose a new --out folder, or {how}")
        return claim
    edited = []
    for rel, sha in files.items():
        p = out / rel
        if not p.is_file() or p.is_symlink():
            continue
        if hashing.sha256_file(p) == sha:
            claim.owned[rel] = sha
        else:
            edited.append(rel)
    if edited and not overwrite:
        raise _refuse(
            out,
            f"file(s) biaskit wrote were changed since: {', '.join(sorted(edited)[:5])}",
            f"move your changes away, or {how} (changed files are kept)",
        )
    if exclusive and not overwrite:
        _refuse_unlisted(out, marker, files)
    return claim


def _refuse_unlisted(out: Path, marker: str, files: dict[str, str]) -> None:
    """E006 when the folder holds a (non-hidden) file its marker does not list: it would be published with it."""
    foreign = sorted(
        rel
        for p in out.rglob("*")
        if (p.is_file() or p.is_symlink())
        and (rel := p.relative_to(out).as_posix()) not in files
        and rel != marker
        and not any(part.startswith(".") for part in p.relative_to(out).parts)
    )
    if foreign:
        raise _refuse(
            out,
            f"it holds {len(foreign)} file(s) biaskit did not write ({', '.join(foreign[:5])}), which would be published with it",
            "move those files out of the folder, or choose a new --out folder",
        )


def claim_stagewise(
    out: str | os.PathLike,
    marker: str,
    written_by: str,
    *,
    unmarked_ok: bool = False,
    writes: tuple[str, ...] = (),
    folders: tuple[str, ...] = (),
) -> dict[str, str]:
    """Check a folder that a command fills file by file (the demo's run folder, a report folder): it is biaskit's
    when it is missing or empty, or when its ``marker`` is a JSON object whose ``written_by`` is ``written_by``.
    A marker of that name that biaskit did not write (``{}``) is E006, and so is a file the marker lists
    (:func:`mark_stagewise`: path -> sha256) that was changed since. A folder with files and no marker is E006
    too unless ``unmarked_ok`` (the command then writes beside the user's files and removes none), and even then
    one of the files the command would write (``writes``) already there is E006: it is the user's.
    Any of ``writes``, ``folders`` (subfolders the command writes into: a report's ``figures``) or the marker's files
    that leads outside ``out`` through a symbolic link is E143, before anything is written.
    Returns the files the marker lists (relative path -> sha256; {} for none)."""
    out = Path(out)
    if not out.exists():
        return {}
    if not out.is_dir():
        raise _refuse(out, "--out is an existing file, not a folder", "choose a new --out folder")
    if not any(not p.name.startswith(".") for p in out.iterdir()):
        return {}
    m = out / marker
    refuse_escaping(out, [*writes, *folders, marker], what="the files it would write")
    if m.exists():
        data = _read_back(m)
        ours = isinstance(data, dict) and data.get("written_by") == written_by
        if not ours:
            raise _refuse(out, f"not a folder biaskit wrote (its {marker} was not written by {written_by})", "choose a new --out folder")
        listed = _listed(data.get("files"))
        refuse_escaping(out, listed, what=f"the files its {marker} lists")
        edited = sorted(rel for rel, sha in listed.items() if (out / rel).is_file() and hashing.sha256_file(out / rel) != sha)
        if edited:
            raise _refuse(
                out,
                f"file(s) biaskit wrote were changed since: {', '.join(edited[:5])}",
                "move your changed files away (biaskit would replace them), or choose a new --out folder",
            )
        return listed
    if not unmarked_ok:
        raise _refuse(out, f"not a folder biaskit wrote (it holds files and no {marker})", "choose a new or empty --out folder")
    mine = [n for n in writes if (out / n).exists()]
    if mine:
        raise _refuse(
            out, f"it holds {', '.join(mine)}, which biaskit did not write (no {marker})", "move those files away, or choose a new --out folder"
        )
    return {}


def _listed(files: Any) -> dict[str, str]:
    """A marker's ``files`` as relative path -> sha256 (a list, an older marker's form, lists paths without one)."""
    if isinstance(files, dict):
        pairs = [(k, v) for k, v in files.items() if isinstance(v, str) and _SHA.match(v)]
    else:
        pairs = []
    out = {}
    for rel, sha in pairs:
        p = Path(rel) if isinstance(rel, str) else None
        if p is not None and not p.is_absolute() and ".." not in p.parts:
            out[p.as_posix()] = sha
    return out


def mark_stagewise(out: str | os.PathLike, marker: str, written_by: str, files: Any, **extra: Any) -> Path:
    """Write the marker of a folder filled file by file: ``written_by`` and each of ``files`` (paths inside ``out``)
    with its sha256, so that :func:`claim_stagewise` finds a file changed since. Returns the marker's path."""
    out = Path(out)
    root = out.resolve()
    listed = {}
    for f in files:
        p = Path(f)
        p = p if p.is_absolute() else out / p
        if p.is_file() and not p.is_symlink() and p.name != marker:
            listed[p.resolve().relative_to(root).as_posix()] = hashing.sha256_file(p)
    return write_json(out / marker, {**extra, "written_by": written_by, "files": dict(sorted(listed.items()))})


def _keep_aside(p: Path) -> Path:
    n = 1
    while (p.parent / f"{p.name}.user-{n}").exists():
        n += 1
    dest = p.parent / f"{p.name}.user-{n}"
    os.replace(p, dest)
    return dest


def _remove_empty_parents(d: Path, out: Path) -> None:
    while d != out and d.is_dir() and not any(d.iterdir()):
        d.rmdir()
        d = d.parent


def write_owned_folder(
    claim: FolderClaim,
    fill: Callable[[Path], Any],
    marker_extra: dict[str, Any] | None = None,
    *,
    sizes: bool = False,
    keep: Iterable[str] = (),
) -> Any:
    """Run ``fill(staging_folder)``, then move what it wrote into ``claim.out`` (see the module doc) and write the
    marker listing the new files. Returns what ``fill`` returned. ``marker_extra`` (read after ``fill``, which may
    fill it in) goes into the marker too; ``sizes``: each file is listed as ``{"bytes": n, "sha256": ...}``.

    ``keep``: earlier files of biaskit's (in ``claim.owned``) that stay as they are and stay listed, for a folder
    committed in steps (``train classifier`` commits each finished run). Afterwards ``claim.owned`` lists what the
    new marker lists, so the same claim commits the next step."""

    out = claim.out
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.parent / f".{out.name}.tmp-{uuid.uuid4().hex[:8]}"
    tmp.mkdir()
    try:
        result = fill(tmp)
        new = sorted(p.relative_to(tmp).as_posix() for p in tmp.rglob("*") if p.is_file() and p.name != claim.marker)
        blocked = [rel for rel in new if (out / rel).exists() and rel not in claim.owned]
        if blocked and not claim.overwrite:
            raise _refuse(
                out, f"biaskit would replace file(s) it did not write: {', '.join(blocked[:5])}", "move them away, or choose a new --out folder"
            )
        refuse_escaping(out, [*new, *claim.owned], what="the files it would write or remove")
        kept = {rel: claim.owned[rel] for rel in sorted(set(keep) & set(claim.owned) - set(new)) if (out / rel).is_file()}
        hashes = dict(sorted({**kept, **{rel: hashing.sha256_file(tmp / rel) for rel in new}}.items()))
        listed = (
            {rel: {"bytes": ((tmp if rel in new else out) / rel).stat().st_size, "sha256": sha} for rel, sha in hashes.items()} if sizes else hashes
        )
        out.mkdir(parents=True, exist_ok=True)
        for rel in new:
            dest = out / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            if dest.exists() and rel not in claim.owned:
                _keep_aside(dest)
            os.replace(tmp / rel, dest)
        for rel in sorted(set(claim.owned) - set(hashes)):  # earlier files of biaskit, unchanged, not written again or kept
            p = out / rel
            if p.is_file() and hashing.sha256_file(p) == claim.owned[rel]:
                p.unlink()
                _remove_empty_parents(p.parent, out)
        write_json(out / claim.marker, {**(marker_extra or {}), "written_by": WRITTEN_BY, "kind": claim.kind, "files": listed})
        claim.owned = dict(hashes)
        return result
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def side_file_owned(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a table biaskit wrote and nobody changed since: its manifest records its sha256."""

    p = Path(path)
    m = _read_back(p.parent / (p.name + MANIFEST_SUFFIX))
    try:
        sha = m["output"]["sha256"]
    except (KeyError, TypeError):
        return False
    return isinstance(sha, str) and p.is_file() and hashing.sha256_file(p) == sha


def check_side_file(path: str | os.PathLike, *, beside: str | os.PathLike) -> None:
    """E006 when the side file ``path`` (written next to ``beside``) exists and is not biaskit's unchanged table."""
    p = Path(path)
    if p.exists() and not side_file_owned(p):
        raise BiaskitError(
            "E006",
            f"{p} (written next to {beside}) exists and is not a table biaskit wrote there, unchanged",
            value=str(p),
            fix="move that file away, or choose another --out (biaskit replaces only its own unchanged files)",
        )
