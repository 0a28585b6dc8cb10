"""Label Studio reads go through the shared retry policy of biaskit.net: a refused
connection, 429 and 5xx are retried with Retry-After honoured; writes (retries=0) and 4xx are not."""

from __future__ import annotations

import time

import httpx
import pytest
from label_studio_sdk.core.api_error import ApiError

from biaskit.annotate.labelstudio import LabelStudio
from biaskit.errors import BiaskitError


@pytest.fixture
def ls(monkeypatch):
    waits: list[float] = []
    monkeypatch.setattr(time, "sleep", waits.append)
    c = LabelStudio("http://127.0.0.1:9", "ls-token-abcdef-123456")  # nothing is sent: the calls below are fakes
    return c, waits


def _script(*outcomes):
    it = iter(outcomes)

    def fn():
        o = next(it)
        if isinstance(o, BaseException):
            raise o
        return o

    return fn


def test_reads_retry_429_and_5xx_honouring_retry_after(ls):
    c, waits = ls
    fn = _script(ApiError(status_code=429, headers={"retry-after": "3"}, body="slow"), ApiError(status_code=503, headers={}, body=""), "ok")
    assert c.call("list tasks", fn, retries=2) == "ok"
    assert waits == [3.0, 1.0]  # Retry-After 3 s, then the backoff 0.5 * 2**1


def test_connection_refused_backs_off_then_E090(ls):
    c, waits = ls
    fn = _script(*[httpx.ConnectError("refused")] * 3)
    with pytest.raises(BiaskitError) as e:
        c.call("list projects", fn, retries=2)
    assert e.value.code == "E090" and "cannot reach Label Studio" in str(e.value) and waits == [0.5, 1.0]


def test_writes_and_client_errors_are_not_retried(ls):
    c, waits = ls
    with pytest.raises(BiaskitError) as e:
        c.call("import tasks", _script(ApiError(status_code=503, headers={}, body="busy"), "ok"))  # retries=0: a POST
    assert "Label Studio error 503" in str(e.value) and waits == []
    with pytest.raises(BiaskitError) as e:
        c.call("list tasks", _script(ApiError(status_code=404, headers={}, body="gone"), "ok"), retries=2)
    assert e.value.code == "E092" and waits == []
