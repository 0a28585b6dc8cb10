"""Where a run's work happens: in this process (``local``, the default) or on a Ray cluster (``ray``).

The ``ray`` engine keeps everything that decides the output in this process (the driver): reading and
checking the input, the resume state, the shard writer, the merge, the sort and the manifest. Only the
model or metric work moves: the pending rows become a Ray Dataset, and ``map_batches`` sends them to a
pool of actors, each of which builds the backend (or metric) once with the same code the local engine
uses. Results stream back to the driver batch by batch and are written as the same Parquet shards, so a
killed Ray run resumes like a local one and the final table is the local engine's table.

This module is the generic part: the engine settings (:class:`EngineSpec`) and the actor pool
(:class:`RayCluster`: ``map_pool(table, actor_cls, ctor_kwargs)`` and ``call_once(fn, *args)``). It knows
neither runners nor metrics: each hands its own work to the pool (:mod:`biaskit.evaluate.runners.on_ray`,
:mod:`biaskit.evaluate.metrics.on_ray`), and so may any other stage that wants its rows spread over actors.

Nothing here imports ray until a Ray run starts (``import biaskit`` stays light).
"""

from __future__ import annotations

import logging
import os
import re
import socket
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from biaskit.errors import BiaskitError, check_choice, require
from biaskit.log import get_logger
from biaskit.secrets import cut, public_url, redact

log = get_logger("engine")

ENGINES = ("local", "ray")


@dataclass
class EngineSpec:
    """How to run: ``name`` (local or ray) and, for Ray, where and with how many actors.

    ``address``: a Ray cluster address (``ray://host:10001`` or ``host:6379``); None takes ``RAY_ADDRESS``
    and, when that is unset too, starts a local Ray in this process. ``actors``: actors in the pool, each
    with one model or metric loaded once. ``batch_size``: rows sent to an actor per call. ``num_gpus``: GPUs
    per actor (None: 1 when the cluster has GPUs, else 0). ``num_cpus``: CPUs per actor.
    """

    name: str = "local"
    address: str | None = None
    actors: int = 1
    batch_size: int = 64
    num_gpus: float | None = None
    num_cpus: float = 1.0

    def check(self) -> EngineSpec:
        check_choice("E160", "unknown engine", self.name, ENGINES, fix="use --engine local (this process) or --engine ray (a Ray cluster)")
        if self.actors < 1:
            raise BiaskitError("E160", "the Ray actor pool needs at least one actor", value=self.actors, fix="e.g. --ray-actors 2")
        if self.batch_size < 1:
            raise BiaskitError("E160", "the Ray batch size must be at least 1", value=self.batch_size, fix="e.g. --ray-batch-size 64")
        if self.num_gpus is not None and self.num_gpus < 0:
            raise BiaskitError("E160", "GPUs per actor cannot be negative", value=self.num_gpus, fix="e.g. --ray-gpus 1 (or 0.5 to share a GPU)")
        if self.num_cpus <= 0:
            raise BiaskitError("E160", "CPUs per actor must be > 0", value=self.num_cpus, fix="e.g. --ray-cpus 1")
        if self.name == "local" and self.address:
            raise BiaskitError("E160", "--ray-address needs --engine ray", value=self.address, fix="add --engine ray, or drop --ray-address")
        return self

    @property
    def is_ray(self) -> bool:
        return self.name == "ray"


def engine_spec(engine: str | EngineSpec | None = None, **kwargs: Any) -> EngineSpec:
    """An :class:`EngineSpec` from a name (or an existing spec) and Ray settings; checked."""
    if isinstance(engine, EngineSpec):
        return engine.check()
    return EngineSpec(name=engine or "local", **{k: v for k, v in kwargs.items() if v is not None}).check()


class RayCluster:
    """Connects to (or starts) Ray for one run; shuts down only a Ray it started itself."""

    def __init__(self, spec: EngineSpec) -> None:
        self.spec = spec
        self.started = False
        self.facts: dict[str, Any] = {}
        self._stderr_filter: _BenignRayLines | None = None

    def __enter__(self) -> RayCluster:
        address = self.spec.address or os.environ.get("RAY_ADDRESS") or None
        if address is not None:
            public_url(address if "://" in address else f"ray://{address}")  # registers ?key=... values as secrets
            address = _resolve_address(address)
            _probe(address)  # fail fast (E161) instead of Ray's endless reconnect to a dead address
        if address is None or _is_loopback(address):
            # a Ray on this machine only: Ray must use the loopback address, not the machine's network address
            # (read once, when ray is imported)
            os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
        ray = require("ray", "ray", "--engine ray")
        require("ray.data", "ray", "--engine ray")
        if address and address.startswith("ray://"):
            require("grpc", "ray", "--ray-address ray://... (Ray Client, ray[client])")
        self._stderr_filter = _BenignRayLines().start()
        if not ray.is_initialized():
            opts = dict(include_dashboard=False, logging_level=logging.WARNING, log_to_driver=False, configure_logging=True)
            try:
                if address:
                    ray.init(address=address, **opts)
                else:
                    ray.init(_node_ip_address="127.0.0.1", **opts)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                where = _safe_address(address) if address else "a new local Ray"
                first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                raise BiaskitError(
                    "E161",
                    f"could not connect to Ray at {where}: {cut(first, 200)}",
                    value=_safe_address(address) if address else None,
                    fix="check the address (ray status), or leave --ray-address and RAY_ADDRESS unset to start a local Ray",
                ) from exc
            self.started = True
        res = ray.cluster_resources()
        nodes = [n for n in ray.nodes() if n.get("Alive")]
        gpus = float(res.get("GPU", 0) or 0)
        self.facts = {
            "engine": "ray",
            "ray_version": ray.__version__,
            "address": _safe_address(address) if address else "local (started by this run)",
            "nodes": len(nodes),
            "cluster_cpus": float(res.get("CPU", 0) or 0),
            "cluster_gpus": gpus,
            "actors": self.spec.actors,
            "batch_size": self.spec.batch_size,
            "num_cpus_per_actor": self.spec.num_cpus,
            "num_gpus_per_actor": self.gpus_per_actor(gpus),
        }
        if self.spec.actors * self.spec.num_cpus > self.facts["cluster_cpus"] and not self.facts["num_gpus_per_actor"]:
            raise BiaskitError(
                "E160",
                f"{self.spec.actors} actor(s) x {self.spec.num_cpus:g} CPU need more than the cluster's {self.facts['cluster_cpus']:g} CPUs",
                value=self.spec.actors,
                fix="use fewer --ray-actors or a smaller --ray-cpus",
            )
        _quiet_ray_data()
        return self

    def gpus_per_actor(self, cluster_gpus: float) -> float:
        if self.spec.num_gpus is not None:
            return float(self.spec.num_gpus)
        return 1.0 if cluster_gpus >= 1 else 0.0

    def __exit__(self, *exc: Any) -> None:
        try:
            if self.started:
                import ray

                ray.shutdown()
        finally:
            if self._stderr_filter is not None:
                self._stderr_filter.stop()
                self._stderr_filter = None

    # ------------------------------------------------------------------ work
    def map_pool(self, table, actor_cls: type, ctor_kwargs: dict[str, Any]) -> Iterator[Any]:
        """Stream ``actor_cls(**ctor_kwargs)(batch)`` over ``table`` (pyarrow) on the actor pool."""
        import ray

        # the blocks are cut here, one per actor call: a Ray repartition would need tasks of its own, and
        # with every CPU of a small cluster held by the actor pool those tasks would wait for ever
        bs = self.spec.batch_size
        blocks = [table.slice(i, bs) for i in range(0, table.num_rows, bs)] or [table]
        ds = ray.data.from_arrow(blocks)
        out = ds.map_batches(
            actor_cls,
            fn_constructor_kwargs=ctor_kwargs,
            batch_size=bs,
            batch_format="pyarrow",
            compute=ray.data.ActorPoolStrategy(size=min(self.spec.actors, len(blocks))),
            num_cpus=self.spec.num_cpus,
            num_gpus=self.facts["num_gpus_per_actor"] or None,
            zero_copy_batch=True,
        )
        try:
            yield from out.iter_batches(batch_size=None, batch_format="pyarrow")
        except Exception as exc:
            # a biaskit error raised on an actor (bad parameter, missing asset) reaches the user as itself
            err = biaskit_cause(exc)
            if err is not None:
                raise err from None
            raise

    def call_once(self, fn: Any, *args: Any) -> Any:
        """Run ``fn(*args)`` once on the cluster with one actor's resources (used to describe a backend)."""
        import ray

        task = ray.remote(num_cpus=self.spec.num_cpus, num_gpus=self.facts["num_gpus_per_actor"] or 0, max_retries=0)(fn)
        try:
            return ray.get(task.remote(*args))
        except Exception as exc:
            err = biaskit_cause(exc)
            if err is not None:
                raise err from None
            raise


def biaskit_cause(exc: BaseException) -> BiaskitError | None:
    """The :class:`BiaskitError` inside a Ray error chain (Ray wraps actor exceptions), or None."""
    seen = 0
    cur: BaseException | None = exc
    while cur is not None and seen < 20:
        if isinstance(cur, BiaskitError):
            return BiaskitError(
                cur.code, cur.what, value=getattr(cur, "value", None), options=getattr(cur, "options", None), fix=getattr(cur, "fix", None)
            )
        cur = getattr(cur, "cause", None) or cur.__cause__
        seen += 1
    return None


def _is_loopback(address: str) -> bool:
    host = address.split("://")[-1].split("@")[-1].rsplit(":", 1)[0].strip("[]")
    return host in ("127.0.0.1", "localhost", "::1") or host.startswith("127.")


#: seconds to wait for a Ray address to accept a connection before E161 (env BIASKIT_RAY_CONNECT_TIMEOUT)
CONNECT_TIMEOUT = 10.0
#: seconds a connected peer has to answer the HTTP/2 greeting before E384; with the connection the probe
#: gives up within CONNECT_TIMEOUT + HANDSHAKE_TIMEOUT = 15 s
HANDSHAKE_TIMEOUT = 5.0
#: the HTTP/2 client connection preface and an empty SETTINGS frame (RFC 9113 section 3.4)
_H2_GREETING = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"


def _resolve_address(address: str) -> str:
    """The concrete address for ``auto``: the cluster ``ray start`` on this machine recorded, and only when the
    current user started it (Ray's own ``auto`` falls back to any Ray process on the machine, another user's
    included). Other addresses are returned as they are."""
    if address.strip().lower() != "auto":
        return address
    try:
        from ray._private.utils import get_ray_address_file
    except Exception:  # pragma: no cover - a Ray without this helper: let Ray resolve it
        return address
    f = get_ray_address_file(None)
    if not os.path.isfile(f):
        raise BiaskitError(
            "E161",
            "--ray-address auto found no Ray cluster started with 'ray start' on this machine",
            value="auto",
            fix="start one (ray start --head) or pass the cluster's address, e.g. --ray-address 127.0.0.1:6379",
        )
    if hasattr(os, "getuid") and os.stat(f).st_uid != os.getuid():
        raise BiaskitError(
            "E161",
            f"--ray-address auto would join a Ray cluster started by another user (uid {os.stat(f).st_uid}, {f})",
            value="auto",
            fix="start your own (ray start --head --temp-dir DIR) and pass its address explicitly",
        )
    with open(f, encoding="utf-8") as fh:
        found = fh.read().strip()
    if not found:
        raise BiaskitError(
            "E161",
            f"--ray-address auto: {f} names no address",
            value="auto",
            fix="pass the cluster's address explicitly, e.g. --ray-address 127.0.0.1:6379",
        )
    log.warning("--ray-address auto joins the Ray cluster at %s (recorded by `ray start` in %s)", _safe_address(found), f)
    return found


def _probe(address: str) -> None:
    """E161 unless ``address`` (``host:port`` or ``ray://host:port``) accepts a TCP connection within the timeout."""
    try:
        parts = urlsplit(address if "://" in address else f"ray://{address}")
        host, port = parts.hostname, parts.port
    except ValueError:
        host, port = None, None
    if not host:
        raise BiaskitError(
            "E161", "the Ray address has no host", value=_safe_address(address), fix="pass host:port (e.g. 127.0.0.1:6379) or ray://host:10001"
        )
    if port is None:
        port = 10001 if address.startswith("ray://") else 6379
    timeout = min(float(os.environ.get("BIASKIT_RAY_CONNECT_TIMEOUT") or CONNECT_TIMEOUT), CONNECT_TIMEOUT)
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            answer = _h2_answer(sock)
    except OSError as exc:
        what = "timed out" if isinstance(exc, TimeoutError) else (exc.strerror or type(exc).__name__)
        raise BiaskitError(
            "E161",
            f"could not connect to Ray at {_safe_address(address)}: {what} (waited up to {timeout:g} s)",
            value=_safe_address(address),
            fix="check the address and that the cluster runs (ray status), or leave --ray-address and RAY_ADDRESS unset to start a local Ray",
        ) from None
    if answer is not None:
        raise BiaskitError(
            "E384",
            f"{_safe_address(address)} accepts connections but does not answer as Ray: {answer}",
            value=_safe_address(address),
            fix="pass the Ray cluster's address (GCS host:6379, or ray://host:10001 for Ray Client; `ray status` shows it), not another service's port",
        )


def _h2_answer(sock) -> str | None:
    """None when the peer answers the HTTP/2 greeting with a SETTINGS frame, as every gRPC server (Ray's GCS and
    its Ray Client server) does; else what it did instead (silence, closing, other bytes)."""

    sock.settimeout(HANDSHAKE_TIMEOUT)
    try:
        sock.sendall(_H2_GREETING)
        head = b""
        while len(head) < 9:
            chunk = sock.recv(9 - len(head))
            if not chunk:
                return "it closed the connection" + (f" after {head[:16]!r}" if head else " without a reply")
            head += chunk
    except TimeoutError:
        return f"no HTTP/2 reply within {HANDSHAKE_TIMEOUT:g} s"
    except ConnectionError:  # reset or broken pipe: it hung up
        return "it closed the connection without a reply"
    except OSError as exc:
        return f"the connection failed ({exc.strerror or type(exc).__name__})"
    if head[3] != 0x04:  # frame type SETTINGS
        return f"it replied {head[:16]!r}, not an HTTP/2 (gRPC) SETTINGS frame"
    return None


def _safe_address(address: str) -> str:
    """The address without credentials or a query (``ray://user:pw@host:10001?token=x`` -> ``ray://host:10001``)."""
    if "://" not in address:
        return redact(address.split("?")[0])
    parts = urlsplit(address)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return redact(urlunsplit((parts.scheme, netloc, parts.path, "", "")))


class _BenignRayLines:
    """Drop known-benign lines that Ray's C++ core writes straight to the process' stderr (file descriptor 2, out
    of reach of Python logging) on runs that succeed; every other line passes through unchanged.

    Dropped (:data:`BENIGN`): ``core_worker.cc`` "Actor with class name ... has constructor arguments in the object
    store and max_restarts > 0" (an ``E``-level note Ray Data's actor pools trigger on every run) and the
    token-authentication notice. ``BIASKIT_RAY_RAW_STDERR=1`` turns the filter off."""

    BENIGN = (
        re.compile(
            r"^\[[^\]]* E \d+ \d+\] core_worker\.cc:\d+: Actor with class name: .* has constructor arguments in "
            r"the object store and max_restarts > 0"
        ),
        re.compile(r"WARNING authentication_token_setup\.py:\d+ -- Token authentication is enabled"),
    )

    def __init__(self) -> None:
        self._saved: int | None = None
        self._thread: Any = None  # the thread that filters the lines, while it runs
        self.dropped = 0

    def start(self) -> _BenignRayLines:
        if os.environ.get("BIASKIT_RAY_RAW_STDERR") == "1":
            return self
        try:
            sys.stderr.flush()
            self._saved = os.dup(2)
            if os.isatty(2):
                # a terminal stays a terminal (progress bars, colours): a pseudo-terminal of the same size
                import fcntl
                import pty
                import termios

                r, w = pty.openpty()
                fcntl.ioctl(w, termios.TIOCSWINSZ, fcntl.ioctl(self._saved, termios.TIOCGWINSZ, b"\0" * 8))
                attrs = termios.tcgetattr(w)
                attrs[1] &= ~termios.ONLCR  # no "\n" -> "\r\n" on the way through
                termios.tcsetattr(w, termios.TCSANOW, attrs)
            else:
                r, w = os.pipe()
            os.dup2(w, 2)
            os.close(w)
        except (OSError, ImportError):  # no real stderr (embedded interpreter), no pty: nothing to filter
            if self._saved is not None:
                os.dup2(self._saved, 2)
                os.close(self._saved)
            self._saved = None
            return self
        held = re.compile(rb"^(\[|\d{4}-)")  # a line that may be one of BENIGN: held back until its end

        def pump(fd_in: int, fd_out: int) -> None:
            buf = b""
            while True:
                try:
                    chunk = os.read(fd_in, 65536)
                except OSError:  # pty: the other end closed
                    chunk = b""
                if not chunk:
                    break
                buf += chunk
                *lines, buf = buf.split(b"\n")
                for ln in lines:
                    if any(p.search(ln.decode("utf-8", "replace")) for p in self.BENIGN):
                        self.dropped += 1
                    else:
                        os.write(fd_out, ln + b"\n")
                if buf and not held.match(buf):  # progress bars redraw without a newline: pass them on at once
                    os.write(fd_out, buf)
                    buf = b""
            if buf:
                os.write(fd_out, buf)
            os.close(fd_in)

        self._thread = threading.Thread(target=pump, args=(r, self._saved), daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._saved is None:
            return
        try:
            sys.stderr.flush()
        except Exception:
            pass
        os.dup2(self._saved, 2)  # closes the pipe's write end held by fd 2: the pump reads to the end
        if self._thread is not None:
            self._thread.join(timeout=5)
            if self._thread.is_alive():  # a Ray process still holds the pipe: the pump keeps writing to the saved fd
                return
        os.close(self._saved)
        self._saved = None


def _quiet_ray_data() -> None:
    """biaskit draws its own progress bar; Ray Data's bars and per-operator logs would interleave with it."""
    logging.getLogger("ray.data").setLevel(logging.ERROR)  # ("progress bars disabled" and per-run notes)
    try:
        import ray.data

        ctx = ray.data.DataContext.get_current()
        ctx.enable_progress_bars = False
        ctx.print_on_execution_start = False
        ctx.verbose_stats_logs = False
    except Exception:  # pragma: no cover - older Ray without these knobs
        pass
