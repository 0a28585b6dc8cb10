"""biaskit.net, the one HTTP layer, against local servers on 127.0.0.1.

Each server answers from a script: a list of (status, headers, body) replies in turn, then 200 "ok".
Waits are recorded by a fake sleep instead of slept.
"""

from __future__ import annotations

import email.utils
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from biaskit.errors import BiaskitError
from biaskit.net import Backoff, HttpClient, HttpError, retry_after_seconds
from biaskit.secrets import register_secret

KEY = "sk-net-test-0123456789abcdefXYZ"


class Server:
    def __init__(self) -> None:
        self.script: list[tuple[int, dict, bytes]] = []
        self.seen: list[dict] = []
        srv = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def _answer(self):
                n = int(self.headers.get("Content-Length") or 0)
                srv.seen.append(
                    {"method": self.command, "path": self.path, "auth": self.headers.get("Authorization"), "body": self.rfile.read(n) if n else b""}
                )
                code, headers, body = srv.script.pop(0) if srv.script else (200, {}, b"ok")
                self.send_response(code)
                for k, v in headers.items():
                    self.send_header(k, v)
                if "Content-Length" not in headers:  # a script may send a wrong one (a body cut short)
                    self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = _answer

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def srv():
    s = Server()
    yield s
    s.close()


@pytest.fixture
def srv2():
    s = Server()
    yield s
    s.close()


def client(waits: list, **kw) -> HttpClient:
    policy = Backoff(kw.pop("retries", 3), kw.pop("backoff", 0.5), kw.pop("max_backoff", 60.0), waits.append)
    return HttpClient(policy=policy, timeout=5, **kw)


def test_429_with_retry_after_seconds_is_waited_then_retried(srv):
    waits: list[float] = []
    srv.script = [(429, {"Retry-After": "2"}, b"slow down")]
    c = client(waits)
    r = c.request("GET", srv.url + "/x")
    assert r.status_code == 200 and r.text == "ok"
    assert waits == [2.0]  # the server's 2 s, not the 0.5 s backoff
    assert c.stats == {"http_requests": 2, "retries": 1}


def test_retry_after_as_an_http_date(srv):
    waits: list[float] = []
    when = time.time() + 30
    srv.script = [(503, {"Retry-After": email.utils.formatdate(when, usegmt=True)}, b"")]
    client(waits).request("GET", srv.url)
    # the date has whole seconds: 30 s ahead minus the sub-second part cut off and the time the request took
    assert len(waits) == 1 and 27.0 <= waits[0] <= 30.0


def test_retry_after_values():
    assert retry_after_seconds("2") == 2.0 and retry_after_seconds("1.5") == 1.5 and retry_after_seconds("-3") == 0.0
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # a date in the past: no wait
    assert retry_after_seconds("soon") is None and retry_after_seconds(None) is None and retry_after_seconds("") is None


def test_503_then_200_backs_off_exponentially(srv):
    waits: list[float] = []
    srv.script = [(503, {}, b""), (502, {}, b""), (500, {}, b"")]
    r = client(waits, backoff=0.5, max_backoff=1.5).request("GET", srv.url)
    assert r.status_code == 200
    assert waits == [0.5, 1.0, 1.5]  # 0.5 * 2**0, 0.5 * 2**1, 0.5 * 2**2 = 2.0 capped at max_backoff 1.5


def test_retries_used_up_is_E242_with_the_status_and_tries(srv):
    waits: list[float] = []
    srv.script = [(503, {}, b"down")] * 3
    with pytest.raises(HttpError) as e:
        client(waits, retries=2).request("GET", srv.url + "/api")
    assert e.value.code == "E242" and e.value.status == 503 and e.value.attempts == 3
    assert "HTTP 503" in str(e.value) and "down" in str(e.value) and "gave up after 3 tries" in str(e.value)
    assert len(srv.seen) == 3 and waits == [0.5, 1.0]


def test_other_statuses_are_returned_not_retried(srv):
    srv.script = [(404, {}, b"no such page")]
    r = client([]).request("GET", srv.url)
    assert r.status_code == 404 and len(srv.seen) == 1


def test_connection_refused_is_retried_then_E242():
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    waits: list[float] = []
    with pytest.raises(HttpError) as e:
        client(waits, retries=1).request("GET", f"http://127.0.0.1:{port}/")
    assert "connection failed" in e.value.reason and e.value.attempts == 2 and e.value.status is None and waits == [0.5]


def test_redirect_to_another_port_is_E142_naming_the_target(srv, srv2):
    srv.script = [(307, {"Location": srv2.url + "/other"}, b"")]
    with pytest.raises(BiaskitError) as e:
        client([]).request("POST", srv.url + "/a", headers={"Authorization": f"Bearer {KEY}"}, data=b"body")
    assert e.value.code == "E142" and f"to {srv2.url}/other" in str(e.value) and "HTTP 307" in str(e.value)
    assert srv2.seen == [] and KEY not in str(e.value)


def test_allowed_redirect_resends_without_credentials_to_another_origin(srv, srv2):
    srv.script = [(302, {"Location": srv2.url + "/other"}, b"")]
    r = client([], allow_redirects=True).request("POST", srv.url + "/a", headers={"Authorization": f"Bearer {KEY}"}, data=b"body")
    assert r.status_code == 200
    assert [(q["method"], q["auth"], q["body"]) for q in srv.seen] == [("POST", f"Bearer {KEY}", b"body")]
    assert [(q["method"], q["path"], q["auth"], q["body"]) for q in srv2.seen] == [("POST", "/other", None, b"body")]


def test_allowed_same_origin_redirect_keeps_credentials(srv):
    srv.script = [(308, {"Location": "/moved"}, b"")]
    client([], allow_redirects=True).request("POST", srv.url + "/a", headers={"Authorization": f"Bearer {KEY}"}, data=b"x")
    assert [(q["path"], q["auth"]) for q in srv.seen] == [("/a", f"Bearer {KEY}"), ("/moved", f"Bearer {KEY}")]


def test_redirect_loops_and_other_schemes_are_not_followed(srv):
    srv.script = [(302, {"Location": "/again"}, b"")] * 3
    with pytest.raises(HttpError) as e:
        client([], allow_redirects=True, max_redirects=2).request("GET", srv.url)
    assert "more than 2 redirects" in str(e.value) and not e.value.retryable and len(srv.seen) == 3
    srv.script = [(302, {"Location": "file:///etc/passwd"}, b"")]
    with pytest.raises(HttpError) as e:
        client([], allow_redirects=True).request("GET", srv.url)
    assert "non-http(s)" in str(e.value)


def test_a_secret_in_the_reply_body_is_redacted_from_the_error(srv):
    other = "ls-registered-secret-777"
    register_secret(other)
    srv.script = [(500, {}, f'{{"error": "bad key {KEY}", "echo": "{other}", "api_key=abc123xyz"}}'.encode())]
    with pytest.raises(HttpError) as e:
        client([], retries=0).request("GET", srv.url + "/?token=qwerty12345")
    text = str(e.value)
    assert KEY not in text and other not in text and "abc123xyz" not in text and "qwerty12345" not in text
    assert "sk-***" in text and "api_key=***" in text and "HTTP 500" in text


def test_rate_limit_spaces_requests(srv):
    waits: list[float] = []
    c = client(waits, max_rps=4)  # at most one request per 0.25 s
    for _ in range(3):
        c.request("GET", srv.url)
    # the fake sleep returns at once, so the 2nd and 3rd requests each had to wait for (up to) 0.25 s
    assert len(waits) == 2 and all(0 < w <= 0.25 for w in waits)


def test_retry_response_hook_retries_a_200_that_is_an_error(srv):
    waits: list[float] = []
    srv.script = [(200, {"X-Err": "lag", "Retry-After": "5"}, b"")] * 2
    seen: list[str] = []
    c = client(waits, on_retry=seen.append)
    r = c.request("GET", srv.url, retry_response=lambda r: ("lagged", r.headers.get("Retry-After")) if r.headers.get("X-Err") else None)
    assert r.status_code == 200 and waits == [5.0, 5.0] and seen == ["lagged", "lagged"]
    srv.script = [(200, {"X-Err": "lag"}, b"")] * 2
    with pytest.raises(HttpError) as e:
        client([], retries=1).request("GET", srv.url, retry_response=lambda r: ("lagged", None) if r.headers.get("X-Err") else None)
    assert e.value.reason == "lagged" and e.value.attempts == 2 and e.value.response.status_code == 200


def test_backoff_call_retries_what_it_is_told_to():
    waits: list[float] = []
    calls = {"n": 0}

    def flaky():
        calls["n"] += 1
        if calls["n"] < 3:
            raise ConnectionError("dropped")
        return "done"

    policy = Backoff(retries=4, backoff=0.25, max_backoff=10, sleep=waits.append)
    assert policy.call(flaky, retryable=lambda e: isinstance(e, ConnectionError)) == "done" and waits == [0.25, 0.5]

    def refused():
        raise PermissionError("no")

    with pytest.raises(PermissionError):
        policy.call(refused, retryable=lambda e: isinstance(e, ConnectionError))

    def coded():
        raise BiaskitError("E242", "x")

    waits.clear()
    with pytest.raises(BiaskitError):
        policy.call(coded, retryable=lambda e: True)  # a coded error is final
    assert waits == []

    class Limited(Exception):
        retry_after = "3"

    waits.clear()
    with pytest.raises(Limited):
        Backoff(2, 0.1, 10, waits.append).call(
            lambda: (_ for _ in ()).throw(Limited()), retryable=lambda e: True, retry_after=lambda e: e.retry_after
        )
    assert waits == [3.0, 3.0]  # 3 tries, Retry-After before each retry


def test_a_cut_short_body_is_retried_and_named(srv):
    srv.script = [(200, {"Content-Length": "60"}, b'{"a": 1')] * 2  # says 60 bytes, sends 7
    waits: list[float] = []
    with pytest.raises(HttpError) as e:
        client(waits, retries=1).request("GET", srv.url)
    assert "the body was cut short (7 bytes read, 53 more expected)" in e.value.reason and e.value.attempts == 2 and waits == [0.5]


def test_a_secret_straddling_the_cut_is_redacted_whole(srv):
    # the key starts at character 291 of the body: cutting the body at 300 first (the wrong order,
    # cut before redacting) would keep "sk-net-te", too short to be recognised as a key; redacting first leaves "sk-***"
    srv.script = [(500, {}, ("x" * 290 + " " + KEY + " tail").encode())]
    with pytest.raises(HttpError) as e:
        client([], retries=0).request("GET", srv.url, what="/v1/completions")
    reason = e.value.reason
    assert len(reason) <= 340 and "sk-***" in reason and "sk-net" not in reason
