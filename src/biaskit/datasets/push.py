"""Upload a staged folder to the Hugging Face Hub, resumably.

The folder is validated first (:func:`biaskit.datasets.validate.validate_folder`). The token comes only
from the ``HF_TOKEN`` environment variable or the huggingface_hub login (``hf auth login``); it is never a
parameter of the CLI, never printed, logged or written anywhere (it is registered with
:mod:`biaskit.secrets` so any message that would contain it is redacted).

Resumable: the remote tree is listed first and every file whose content is already on the Hub (same
sha256 for LFS files, same git blob id for regular files) is skipped, so an interrupted push rerun uploads
only what is missing. Files are committed in batches (data shards first, the card last) so an interruption
loses at most one batch; each Hub operation (create the repository or branch, list the remote files, commit a
batch) is retried with exponential backoff on dropped connections, timeouts, 408/429 (respecting ``Retry-After``)
and 5xx (datasets #6392, #6257), under the shared retry policy of :mod:`biaskit.net` (``Backoff.call``): the
HTTP itself is huggingface_hub's, which also retries each LFS transfer and some calls on its own
(``http_backoff``: up to 5 retries, 1-8 s waits, on 408/429/5xx and network errors). Blobs uploaded before a failed commit are
not sent again: the LFS batch endpoint reports them as present.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from biaskit.assets import offline_vars_set
from biaskit.datasets.validate import validate_folder
from biaskit.errors import BiaskitError
from biaskit.log import get_logger
from biaskit.net import Backoff
from biaskit.ownership import escapes
from biaskit.secrets import redact, register_secret

log = get_logger("datasets.push")

_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.\-]{0,95}/[A-Za-z0-9][\w.\-]{0,95}$")
_RETRY_STATUS = (408, 429, 500, 502, 503, 504)
LAST = ("biaskit_manifest.json", "README.md")  # committed last, after the data they describe


@dataclass(frozen=True)
class LocalFile:
    path: str
    size: int
    sha256: str
    git_oid: str


@dataclass
class PushResult:
    repo_id: str
    revision: str
    files: list[LocalFile]
    uploaded: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    commits: list[str] = field(default_factory=list)
    url: str | None = None
    dry_run: bool = False

    @property
    def total_bytes(self) -> int:
        return sum(f.size for f in self.files)


def human_size(n: float) -> str:
    if n < 1024:
        return f"{int(n)} B"
    for unit in ("KB", "MB", "GB", "TB"):
        n /= 1024
        if n < 1024 or unit == "TB":
            return f"{n:.1f} {unit}"
    return f"{n:.1f} TB"  # pragma: no cover


def _hash(path: Path) -> tuple[str, str]:
    size = path.stat().st_size
    sha, git = hashlib.sha256(), hashlib.sha1()
    git.update(f"blob {size}\0".encode())
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            sha.update(chunk)
            git.update(chunk)
    return sha.hexdigest(), git.hexdigest()


def check_links(folder: str | Path) -> None:
    """Refuse (E143) a folder with a symbolic link that leads outside it: pushing would upload whatever the
    link points at (``data/x.parquet -> ~/.ssh/id_rsa``). Links that stay inside the folder are fine."""
    folder = Path(folder)
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        for name in sorted(dirnames + filenames):
            p = Path(dirpath) / name
            if not p.is_symlink():
                continue
            target = escapes(folder, p.relative_to(folder))
            if target is not None:
                raise BiaskitError(
                    "E143",
                    f"{p.relative_to(folder)} in the folder to push is a link to {target}, outside the folder",
                    value=str(p),
                    fix="replace the link by a copy of the file (or remove it) and stage again",
                )


def local_files(folder: str | Path) -> list[LocalFile]:
    """The files of a staged folder, data first and the card last (the order they are committed in).

    Links leading outside the folder are refused (:func:`check_links`)."""
    folder = Path(folder)
    check_links(folder)
    paths = [p for p in folder.rglob("*") if p.is_file() and not any(part.startswith(".") for part in p.relative_to(folder).parts)]
    rels = sorted((str(p.relative_to(folder)).replace("\\", "/") for p in paths), key=lambda r: (r in LAST, LAST.index(r) if r in LAST else 0, r))
    out = []
    for r in rels:
        sha, git = _hash(folder / r)
        out.append(LocalFile(r, (folder / r).stat().st_size, sha, git))
    return out


def check_repo_id(repo_id: str) -> str:
    if not isinstance(repo_id, str) or not _REPO_ID.match(repo_id) or ".." in repo_id or repo_id.endswith((".git", "-", ".")):
        raise BiaskitError(
            "E053",
            "invalid Hub dataset repository id",
            value=repo_id,
            fix="use ORG/NAME with letters, digits, '-', '_' or '.', e.g. --repo-id my-org/bold-pl",
        )
    return repo_id


def resolve_token() -> str:
    """The Hub token from ``HF_TOKEN`` or the huggingface_hub login; never from an argument."""
    from huggingface_hub import get_token

    token = get_token()
    if not token:
        raise BiaskitError(
            "E051",
            "no Hugging Face token found",
            fix="export HF_TOKEN=... (a write token from https://huggingface.co/settings/tokens) or run `hf auth login`",
        )
    register_secret(token)
    return token


def _status(exc: BaseException) -> int | None:
    resp = getattr(exc, "response", None)
    return getattr(resp, "status_code", None)


def _retryable(exc: BaseException) -> bool:
    st = _status(exc)
    if st is not None:
        return st in _RETRY_STATUS
    names = {c.__name__ for c in type(exc).__mro__}
    return bool(
        names
        & {
            "TransportError",
            "NetworkError",
            "TimeoutException",
            "RemoteProtocolError",
            "ConnectionError",
            "ProtocolError",
            "ReadError",
            "WriteError",
            "ConnectError",
        }
    ) or isinstance(exc, (ConnectionError, TimeoutError))


def _retry_after(exc: BaseException) -> str | None:
    """The ``Retry-After`` header of the failed reply (seconds or an HTTP-date; parsed by :mod:`biaskit.net`)."""
    resp = getattr(exc, "response", None)
    try:
        return resp.headers.get("Retry-After") if resp is not None else None
    except (AttributeError, TypeError):
        return None


def _fail(what: str, exc: BaseException, done: int, total: int) -> BiaskitError:
    st = _status(exc)
    if st in (401, 403):
        return BiaskitError(
            "E051",
            f"the Hub refused the token while trying to {what} (HTTP {st})",
            fix="use a token with write access to this namespace (HF_TOKEN or `hf auth login`)",
        )
    if type(exc).__name__ == "OfflineModeIsEnabled":
        return BiaskitError("E052", f"cannot {what}: huggingface_hub offline mode is on", fix=_online_fix("push") + ", or use --dry-run")
    detail = redact(f"{type(exc).__name__}: {exc}".splitlines()[0])[:300]
    return BiaskitError(
        "E052",
        f"could not {what}: {detail}; {done} of {total} files are on the Hub",
        fix="rerun the same command to resume (files already on the Hub are skipped)",
    )


class _Retrier:
    """Each Hub operation under the shared retry policy (:class:`biaskit.net.Backoff`); the last error becomes E051/E052."""

    def __init__(self, retries: int, backoff: float, max_backoff: float, sleep: Callable[[float], None]) -> None:
        self.policy = Backoff(retries, backoff, max_backoff, sleep)
        self.waits: list[float] = []

    def __call__(self, what: str, fn: Callable, *, done: int = 0, total: int = 0):
        try:
            return self.policy.call(fn, retryable=_retryable, retry_after=_retry_after, what=what, waits=self.waits)
        except BiaskitError:
            raise
        except Exception as exc:
            raise _fail(what, exc, done, total) from None


def _batches(files: list[LocalFile], max_files: int, max_bytes: int) -> list[list[LocalFile]]:
    data = [f for f in files if f.path not in LAST]
    last = [f for f in files if f.path in LAST]
    out: list[list[LocalFile]] = []
    cur: list[LocalFile] = []
    size = 0
    for f in data:
        if cur and (len(cur) >= max_files or size + f.size > max_bytes):
            out.append(cur)
            cur, size = [], 0
        cur.append(f)
        size += f.size
    if cur:
        out.append(cur)
    if last:
        out.append(last)
    return out


def _remote_tree(api: Any, repo_id: str, rev: str) -> dict[str, tuple[str | None, str | None]]:
    """The files of the repo at ``rev``: path -> (LFS sha256 or None, git blob id); empty if the repo or branch is new."""
    from huggingface_hub.errors import RepositoryNotFoundError, RevisionNotFoundError

    try:
        entries = list(api.list_repo_tree(repo_id, repo_type="dataset", revision=rev, recursive=True))
    except (RevisionNotFoundError, RepositoryNotFoundError):
        return {}
    out = {}
    for e in entries:
        if getattr(e, "size", None) is None:  # folder
            continue
        lfs = getattr(e, "lfs", None)
        out[e.path] = (getattr(lfs, "sha256", None) if lfs is not None else None, getattr(e, "blob_id", None))
    return out


def _is_on_hub(f: LocalFile, remote: dict[str, tuple[str | None, str | None]]) -> bool:
    """The Hub already has this content at this path (same LFS sha256, or same git blob for a non-LFS file)."""
    r = remote.get(f.path)
    return r is not None and (r[0] == f.sha256 or (r[0] is None and r[1] == f.git_oid))


def push_folder(
    folder: str | Path,
    repo_id: str,
    *,
    private: bool = False,
    revision: str | None = None,
    message: str | None = None,
    dry_run: bool = False,
    endpoint: str | None = None,
    max_commit_files: int = 100,
    max_commit_bytes: int = 2 << 30,
    retries: int = 5,
    backoff: float = 2.0,
    max_backoff: float = 120.0,
    sleep: Callable[[float], None] | None = None,
    validate: bool = True,
) -> PushResult:
    """Validate ``folder`` and upload it to the dataset repo ``repo_id`` (created if missing).

    ``dry_run`` validates and lists the files and sizes without contacting the Hub (no token needed).
    """
    check_repo_id(repo_id)
    if revision is not None and (not revision.strip() or revision.startswith("-") or ".." in revision or " " in revision):
        raise BiaskitError("E053", "invalid revision (branch) name", value=revision, fix="use a branch name such as main or v1.0")
    folder = Path(folder)
    check_links(folder)  # before anything reads through a link
    if validate:
        validate_folder(folder)
    files = local_files(folder)
    rev = revision or "main"
    result = PushResult(repo_id, rev, files, dry_run=dry_run)
    if dry_run:
        return result

    from huggingface_hub import CommitOperationAdd, HfApi

    token = resolve_token()
    api = HfApi(endpoint=endpoint, token=token)
    retry = _Retrier(retries, backoff, max_backoff, sleep or (lambda s: time.sleep(s)))
    total = len(files)

    url = retry("create the repository", lambda: api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True), total=total)
    result.url = str(url)
    if rev != "main":
        retry(f"create branch {rev!r}", lambda: api.create_branch(repo_id, branch=rev, repo_type="dataset", exist_ok=True), total=total)

    remote = retry("list the files on the Hub", lambda: _remote_tree(api, repo_id, rev), total=total)
    pending = []
    for f in files:
        if _is_on_hub(f, remote):
            result.skipped.append(f.path)
        else:
            pending.append(f)
    if result.skipped:
        log.info("%d of %d files are already on the Hub; uploading %d", len(result.skipped), total, len(pending))
    batches = _batches(pending, max_commit_files, max_commit_bytes)
    for i, batch in enumerate(batches, 1):
        summary = message or f"Upload dataset with biaskit ({len(files)} files)"
        if len(batches) > 1:
            summary = f"{summary} [part {i}/{len(batches)}]"

        def commit(batch=batch, summary=summary):
            ops = [CommitOperationAdd(path_in_repo=f.path, path_or_fileobj=str(folder / f.path)) for f in batch]
            return api.create_commit(repo_id, ops, commit_message=summary, repo_type="dataset", revision=rev)

        done = len(result.skipped) + len(result.uploaded)
        info = retry(
            f"upload {len(batch)} file(s) ({', '.join(f.path for f in batch[:3])}{', ...' if len(batch) > 3 else ''})", commit, done=done, total=total
        )
        result.commits.append(getattr(info, "oid", None) or "")
        result.uploaded += [f.path for f in batch]
    return result


def _online_fix(what: str) -> str:
    """How to get out of offline mode, naming only offline variables the user really set."""
    set_vars = offline_vars_set()
    if set_vars:
        return f"unset {'/'.join(set_vars)} (set here) to {what}"
    return f"connect this machine to the internet (the Hub was not reachable) to {what}"
