"""Resource limits: the Ray address probe gives up within 15 s on a port that is not Ray (a plain TCP server on
127.0.0.1), and accepts a real gRPC (HTTP/2) server, which is what Ray's GCS and Ray Client servers are."""

from __future__ import annotations

import time

import pytest

from biaskit.errors import BiaskitError


def _enter(address: str) -> tuple[BiaskitError, float]:
    from biaskit.pool import RayCluster, engine_spec

    t0 = time.monotonic()
    with pytest.raises(BiaskitError) as ei:
        with RayCluster(engine_spec("ray", address=address)):
            pass
    return ei.value, time.monotonic() - t0


@pytest.mark.parametrize("mode", ["silent", "junk", "close"])
@pytest.mark.parametrize("scheme", ["", "ray://"])
def test_ray_address_on_a_port_that_is_not_ray(tcp_not_ray, mode, scheme):
    from biaskit.pool import CONNECT_TIMEOUT, HANDSHAKE_TIMEOUT

    assert CONNECT_TIMEOUT + HANDSHAKE_TIMEOUT <= 15
    port = tcp_not_ray(mode)
    e, took = _enter(f"{scheme}127.0.0.1:{port}")  # used to hang for ever (GCS) or give E161 after 32 s (ray://)
    assert e.code == "E384" and f"127.0.0.1:{port}" in e.message and "does not answer as Ray" in e.message
    assert took < HANDSHAKE_TIMEOUT + 2 if mode == "silent" else took < 2
    want = {"silent": "no HTTP/2 reply", "junk": "SSH-2.0", "close": "closed the connection"}[mode]
    assert want in e.message


def test_ray_probe_accepts_a_grpc_server():
    from concurrent import futures

    import grpc  # installed with biaskit[ray] (ray[client]), part of the dev extras

    from biaskit.pool import _probe

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=1))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        _probe(f"127.0.0.1:{port}")  # no error: it answers the HTTP/2 greeting as Ray's GCS does
        _probe(f"ray://127.0.0.1:{port}")
    finally:
        server.stop(0)
