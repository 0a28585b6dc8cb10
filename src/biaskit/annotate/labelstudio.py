"""Label Studio integration (label-studio-sdk 2.x; tested against a real Label Studio 1.23.2 server).

* One project per round, found by its **exact** title (the server's title filter is a case-insensitive
  substring match and titles may repeat: two exact matches are an error), created when missing with the
  task type's label config, guidelines and ``maximum_annotations`` = the number of annotators per task.
* Import is batched and idempotent: every task carries the round's stable ``sample_id`` in its data; a push
  first lists the ids already in the project and imports only the missing ones, so a rerun after a failure
  (or a second run) never creates duplicates. Server ids are never used as durable keys.
* Metric predictions can be added as pre-annotations (``pre_annotate="vader"``); off by default so as not
  to anchor annotators.
* Only the masked text, ``sample_id`` and ``round`` go to the server (annotators can read task data through
  the API; the original text and the mask mapping stay local).
* Pull = full JSON export (``download_all_tasks``), then the shared validation path
  (:mod:`biaskit.annotate.results`): the server accepts out-of-config choices and repeated annotations by
  one annotator, so they are dropped, counted and reported here.
* URL and token come from options or ``LABEL_STUDIO_URL`` / ``LABEL_STUDIO_API_KEY``. The token is
  registered with :mod:`biaskit.secrets` so it is redacted from every message, log line and manifest.
"""

from __future__ import annotations

import functools
import json
import os
import re
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pyarrow as pa

from biaskit.annotate.metriccols import resolve
from biaskit.annotate.results import PullReport, samples_info, validate_records
from biaskit.annotate.tasks import TaskType, get_task_type
from biaskit.arrow import to_arrow
from biaskit.errors import BiaskitError, require
from biaskit.formats.labelstudio import read_export
from biaskit.log import get_logger
from biaskit.net import RETRY_STATUS, Backoff
from biaskit.secrets import redact, register_secret

log = get_logger("annotate.labelstudio")

DEFAULT_BATCH = 1000


def public_url(url: str) -> str:
    """The URL without credentials (user:password@), safe to print and record."""
    p = urlsplit(url)
    host = p.hostname or ""
    if p.port:
        host += f":{p.port}"
    return urlunsplit((p.scheme, host, p.path, "", ""))


def round_title(round_: str, task: str) -> str:
    return f"biaskit {round_} ({task.split(':')[0]})"


@dataclass
class PushReport:
    url: str
    project_id: int
    title: str
    created: bool
    total: int
    already_there: int
    imported: int
    batches: int
    seconds: float
    pre_annotations: int = 0

    def summary(self) -> str:
        state = "created" if self.created else "found"
        return (
            f"project {self.title!r} (id {self.project_id}, {state}) on {self.url}: imported {self.imported} "
            f"task(s) in {self.batches} batch(es), {self.already_there} already there, {self.total} in the round"
        )

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


class LabelStudio:
    """A thin, error-translating wrapper over ``label_studio_sdk.LabelStudio``."""

    def __init__(self, url: str | None = None, token: str | None = None, *, timeout: float = 120.0) -> None:
        url = url or os.environ.get("LABEL_STUDIO_URL")
        token = token or os.environ.get("LABEL_STUDIO_API_KEY")
        if not url:
            raise BiaskitError("E090", "no Label Studio URL given", fix="pass --url http://localhost:8080 or set LABEL_STUDIO_URL")
        if not re.match(r"^https?://", url):
            raise BiaskitError(
                "E090",
                "the Label Studio URL must start with http:// or https://",
                value=public_url(url) if "//" in url else url,
                fix="e.g. --url http://localhost:8080",
            )
        if not token:
            raise BiaskitError(
                "E090",
                "no Label Studio token given",
                fix="export LABEL_STUDIO_API_KEY=<your token> (Label Studio: Account & Settings > Access Token)",
            )
        register_secret(token)
        sdk = require("label_studio_sdk", "annotate", "the Label Studio integration")
        self.url = public_url(url).rstrip("/")
        self._base = url.rstrip("/")
        # max_retries=0: the SDK would retry import POSTs too; reads are retried here instead
        self.sdk = sdk.LabelStudio(base_url=self._base, api_key=token, max_retries=0, timeout=timeout)
        self._users: dict[int, str] | None = None

    # ------------------------------------------------------------------ error translation
    def call(self, what: str, fn: Callable[[], Any], *, retries: int = 0) -> Any:
        import httpx
        from label_studio_sdk.core.api_error import ApiError

        def retryable(exc: BaseException) -> bool:  # reads only (retries > 0): a refused connection, 429 and 5xx
            return isinstance(exc, (httpx.ConnectError, httpx.ConnectTimeout)) or (isinstance(exc, ApiError) and exc.status_code in RETRY_STATUS)

        def retry_after(exc: BaseException) -> str | None:
            headers = getattr(exc, "headers", None) or {}
            return headers.get("Retry-After") or headers.get("retry-after")

        # the SDK sends (max_retries=0); the shared policy of biaskit.net retries: 0.5 s, 1 s, ... or Retry-After
        try:
            return Backoff(retries, backoff=0.5, max_backoff=30.0).call(fn, retryable=retryable, retry_after=retry_after, what=what)
        except httpx.TransportError as exc:  # no answer: the server is not there, too slow, or the connection broke
            if isinstance(exc, (httpx.ConnectError, httpx.ConnectTimeout)):
                problem, fix = f"cannot reach Label Studio at {self.url}", "start the server (label-studio start) or check --url / LABEL_STUDIO_URL"
            elif isinstance(exc, httpx.TimeoutException):
                problem, fix = f"Label Studio at {self.url} timed out", "retry; the operation is idempotent and resumes where it stopped"
            else:
                problem = f"the connection to Label Studio at {self.url} failed"
                fix = "check the server is up and retry; push/pull are idempotent and resume where they stopped"
            raise BiaskitError("E090", f"{problem} ({what})", value=redact(str(exc))[:120], fix=fix) from None
        except ApiError as exc:  # an answer that refuses: the token, the permission, the object, or the server's own error
            status = exc.status_code
            body = redact(json.dumps(exc.body, default=str) if not isinstance(exc.body, str) else exc.body)[:300]
            known: dict[int | None, tuple[str, str, str]] = {
                401: (
                    "E090",
                    f"Label Studio at {self.url} rejected the token",
                    "check LABEL_STUDIO_API_KEY (Account & Settings > Access Token); legacy tokens "
                    "need LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN=true on the server",
                ),
                403: ("E090", f"the token may not do this on {self.url}", "use an administrator's or the project owner's token"),
                404: ("E092", f"not found on {self.url}", "check the project title / id (biaskit annotate rounds lists the rounds)"),
            }
            code, problem, fix = known.get(
                status, ("E090", f"Label Studio error {status}", "see the server's message; nothing was imported twice, rerun after fixing")
            )
            raise BiaskitError(code, f"{problem} ({what})", value=body, fix=fix) from None

    # ------------------------------------------------------------------ projects
    def find_project(self, title: str) -> Any | None:
        found = [p for p in self.call("list projects", lambda: list(self.sdk.projects.list(title=title)), retries=2) if p.title == title]
        if len(found) > 1:
            raise BiaskitError(
                "E092",
                f"{len(found)} projects on {self.url} are titled {title!r}",
                value=[p.id for p in found],
                fix="rename or delete the extra projects in Label Studio, or pass another --project title",
            )
        return found[0] if found else None

    def project_titles(self) -> list[str]:
        return [p.title for p in self.call("list projects", lambda: list(self.sdk.projects.list()), retries=2)]

    def get_project(self, title: str) -> Any:
        p = self.find_project(title)
        if p is None:
            raise BiaskitError(
                "E092",
                f"no project titled {title!r} on {self.url}",
                value=title,
                options=self.project_titles(),
                fix="push the round first (biaskit annotate push) or pass the exact --project title",
            )
        return p

    def ensure_project(self, title: str, task: TaskType, *, annotators: int, description: str = "") -> tuple[Any, bool]:
        p = self.find_project(title)
        if p is None:
            p = self.call(
                "create project",
                lambda: self.sdk.projects.create(
                    title=title,
                    description=description,
                    label_config=task.label_config(),
                    maximum_annotations=annotators,
                    expert_instruction=task.guidelines_html(),
                    show_instruction=True,
                    show_skip_button=True,
                    enable_empty_annotation=False,
                    show_collab_predictions=False,
                ),
            )
            return p, True
        have = config_labels(getattr(p, "label_config", "") or "", task.from_name)
        if have != list(task.labels):
            raise BiaskitError(
                "E092",
                f"project {title!r} exists with labels {have}, not the {task.name} labels",
                value=have,
                options=list(task.labels),
                fix="use another round name / --project title for this task type",
            )
        if getattr(p, "maximum_annotations", annotators) != annotators:
            self.call("update project", lambda: self.sdk.projects.update(id=p.id, maximum_annotations=annotators))
        return p, False

    # ------------------------------------------------------------------ tasks
    def existing_sample_ids(self, project_id: int) -> dict[str, int]:
        """sample_id -> task id of the tasks already in the project."""

        def run():
            out: dict[str, int] = {}
            # include=id,data: 3-4x faster than the full task payload on a 2,000-task project
            for t in self.sdk.tasks.list(project=project_id, fields="task_only", include="id,data", page_size=1000):
                sid = (t.data or {}).get("sample_id")
                if sid is not None and sid not in out:
                    out[sid] = t.id
            return out

        return self.call("list tasks", run, retries=2)

    def import_tasks(self, project_id: int, tasks: list[dict[str, Any]]) -> None:
        self.call("import tasks", lambda: self.sdk.projects.import_tasks(id=project_id, request=tasks))

    def export(self, project_id: int) -> list[dict[str, Any]]:
        def run():
            chunks = self.sdk.projects.exports.download_sync(project_id, export_type="JSON", download_all_tasks=True)
            return read_export(b"".join(chunks), source=f"the Label Studio export of project {project_id}")

        return self.call("export annotations", run, retries=2)

    def users(self) -> dict[int, str]:
        if self._users is None:
            self._users = {u.id: (u.email or u.username or str(u.id)) for u in self.call("list users", lambda: self.sdk.users.list(), retries=2)}
        return self._users

    # ------------------------------------------------------------------ helpers for annotator accounts
    def ensure_annotators(self, emails: Sequence[str]) -> dict[str, int]:
        """Create annotator accounts that do not exist yet; returns email -> user id."""
        have = {v: k for k, v in self.users().items()}
        for e in emails:
            if e not in have:
                u = self.call("create user", functools.partial(self.sdk.users.create, username=e.split("@")[0], email=e))
                have[e] = u.id
        self._users = None
        return {e: have[e] for e in emails}


def config_labels(label_config: str, from_name: str | None = None) -> list[str | None]:
    """Choice values of the (first or named) Choices control of a label config (None for a Choice without one)."""
    try:
        root = ET.fromstring(label_config)
    except ET.ParseError:
        return []
    controls = list(root.iter("Choices"))
    named = [ch for ch in controls if from_name is None or ch.get("name") == from_name]
    for ch in named or controls[:1]:
        return [c.get("value") for c in ch.iter("Choice")]
    return []


def _task_payload(row: dict[str, Any], task: TaskType, pre: Any | None) -> dict[str, Any]:
    item: dict[str, Any] = {"data": {"text": row["text"], "sample_id": row["sample_id"], "round": row["round"]}}
    if pre is not None:
        lab = row.get(pre.label)
        if lab in task.labels:
            score = pre.score_of(row) if pre.score else None
            pred = {
                "model_version": pre.metric,
                "result": [{"from_name": task.from_name, "to_name": "text", "type": "choices", "value": {"choices": [lab]}}],
            }
            if score is not None:
                pred["score"] = float(score)
            item["predictions"] = [pred]
    if row.get("is_gold") and row.get("gold_label") in task.labels:
        # the known answer of a gold item, stored as a ground-truth annotation (by the pushing account) so the
        # project owner sees it in Label Studio; pull keeps it apart from the crowd's labels
        item["annotations"] = [
            {
                "ground_truth": True,
                "result": [{"from_name": task.from_name, "to_name": "text", "type": "choices", "value": {"choices": [row["gold_label"]]}}],
            }
        ]
    return item


def push(
    samples: Any,
    *,
    url: str | None = None,
    token: str | None = None,
    project: str | None = None,
    annotators: int = 3,
    batch_size: int = DEFAULT_BATCH,
    pre_annotate: str | None = None,
    client: LabelStudio | None = None,
    progress: Callable[[int], None] | None = None,
) -> PushReport:
    """Push a round's samples to Label Studio (find-or-create the project, import what is missing)."""
    t0 = time.perf_counter()
    s = to_arrow(samples)
    round_, spec, ids = samples_info(s)
    task = get_task_type(spec)
    if annotators < 1:
        raise BiaskitError("E091", "annotators per task must be >= 1", value=annotators, fix="e.g. --annotators 3")
    if batch_size < 1:
        raise BiaskitError("E091", "batch size must be >= 1", value=batch_size, fix="e.g. --batch-size 1000")
    dup = len(ids) - len(set(ids))
    if dup:
        raise BiaskitError("E007", f"{dup} duplicate sample_id(s) in the samples table", value=dup, fix="resample the round")
    pre = resolve(pre_annotate, s.column_names, need_label=True) if pre_annotate else None
    ls = client or LabelStudio(url, token)
    title = project or round_title(round_, spec)
    proj, created = ls.ensure_project(title, task, annotators=annotators, description=f"biaskit annotation round {round_} ({spec}); {len(ids)} items")
    existing = {} if created else ls.existing_sample_ids(proj.id)
    rows = [r for r in s.to_pylist() if r["sample_id"] not in existing]
    batches = 0
    n_pre = 0
    for start in range(0, len(rows), batch_size):
        chunk = [_task_payload(r, task, pre) for r in rows[start : start + batch_size]]
        n_pre += sum("predictions" in c for c in chunk)
        ls.import_tasks(proj.id, chunk)
        batches += 1
        if progress:
            progress(len(chunk))
    rep = PushReport(ls.url, proj.id, title, created, len(ids), len(existing), len(rows), batches, round(time.perf_counter() - t0, 3), n_pre)
    log.debug(rep.summary())  # the caller prints it (the CLI once, on stdout); -v shows it here too
    return rep


def export_records(raw: list[dict[str, Any]], task: TaskType, users: Mapping[Any, str], round_: str) -> Iterable[dict[str, Any]]:
    """Annotation records from a Label Studio JSON export (tasks of other rounds are skipped)."""
    for t in raw:
        data = t.get("data") or {}
        if data.get("round") not in (None, round_):
            continue
        for a in t.get("annotations") or []:
            cb = a.get("completed_by")
            if isinstance(cb, dict):
                who = cb.get("email") or users.get(cb.get("id")) or str(cb.get("id"))
            else:
                who = users.get(cb, str(cb) if cb is not None else None)
            choices: list[str] = []
            for item in a.get("result") or []:
                if item.get("type") == "choices" and item.get("from_name") == task.from_name:
                    choices.extend((item.get("value") or {}).get("choices") or [])
            yield {
                "sample_id": data.get("sample_id"),
                "annotator": who,
                "label": choices,
                "lead_time": a.get("lead_time"),
                "created_at": a.get("created_at"),
                "updated_at": a.get("updated_at"),
                "cancelled": bool(a.get("was_cancelled")),
                "annotation_id": a.get("id"),
                "ground_truth": bool(a.get("ground_truth")),
            }


@dataclass
class PullResult:
    annotations: pa.Table
    rejected: pa.Table
    report: PullReport
    project_id: int
    title: str
    tasks_on_server: int
    extra: dict[str, Any] = field(default_factory=dict)
    #: ground-truth annotations (Label Studio's ``ground_truth`` flag, e.g. gold answers pushed by biaskit):
    #: sample_id, label, annotator; never among the crowd's ``annotations``
    ground_truth: pa.Table | None = None


def pull(
    samples: Any, *, url: str | None = None, token: str | None = None, project: str | None = None, client: LabelStudio | None = None
) -> PullResult:
    """Export a round's project and validate its annotations (see :mod:`biaskit.annotate.results`)."""
    s = to_arrow(samples)
    round_, spec, ids = samples_info(s)
    task = get_task_type(spec)
    ls = client or LabelStudio(url, token)
    title = project or round_title(round_, spec)
    proj = ls.get_project(title)
    raw = ls.export(proj.id)
    recs = list(export_records(raw, task, ls.users(), round_))
    flags = [r.pop("ground_truth", False) for r in recs]
    gt = [r for r, f in zip(recs, flags) if f]
    recs = [r for r, f in zip(recs, flags) if not f]
    ann, rej, rep = validate_records(recs, task=spec, round=round_, platform="label-studio", sample_ids=ids)
    log.debug(rep.summary())  # the caller prints it (the CLI once, on stdout); -v shows it here too
    gt_t = pa.table(
        {
            "sample_id": pa.array([r["sample_id"] for r in gt], pa.string()),
            "label": pa.array([",".join(r["label"]) if r["label"] else None for r in gt], pa.string()),
            "annotator": pa.array([r["annotator"] for r in gt], pa.string()),
        }
    )
    if gt:
        log.debug("%d ground-truth annotation(s) kept apart from the crowd's labels", len(gt))
    return PullResult(ann, rej, rep, proj.id, title, len(raw), ground_truth=gt_t)


def record_annotation(
    client: LabelStudio, task_id: int, user_id: int | None, label: str | list[str], task: TaskType, *, lead_time: float | None = None
) -> int:
    """Store one annotation on ``task_id`` (used by tests, the benchmark and scripted imports).

    With ``user_id=None`` the annotation belongs to the user whose token ``client`` holds (an annotator
    working with their own token); an administrator's client can pass ``user_id`` to record it for someone.
    """
    labs = [label] if isinstance(label, str) else list(label)
    result = [{"from_name": task.from_name, "to_name": "text", "type": "choices", "value": {"choices": labs}}] if labs else []
    kw: dict[str, Any] = {"result": result}
    if user_id is not None:
        kw["completed_by"] = user_id
    if lead_time is not None:
        kw["lead_time"] = lead_time
    a = client.call("create annotation", lambda: client.sdk.annotations.create(id=task_id, **kw))
    return a.id
