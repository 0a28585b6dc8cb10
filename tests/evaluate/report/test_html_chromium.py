"""The HTML report opens in headless Chromium (Debian's package, started here) with every image loaded
and no console errors. Chromium is driven over the DevTools protocol (websocket-client, dev extra).

scripts/services/chromium.sh installs Chromium when it is missing (scripts/test.sh runs it first).
"""

import json
import os
import shutil
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.server

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage", "--remote-allow-origins=*",
         "--remote-debugging-port=0"]

IMAGE_STATE_JS = """JSON.stringify({
  images: Array.from(document.images).map(i => ({complete: i.complete, width: i.naturalWidth, height: i.naturalHeight,
                                                 data: i.src.startsWith('data:image/png;base64,')})),
  links: Array.from(document.querySelectorAll('nav a')).map(a => a.getAttribute('href')),
  targets: Array.from(document.querySelectorAll('nav a')).map(a => !!document.getElementById(a.getAttribute('href').slice(1))),
  external: Array.from(document.querySelectorAll('[src],link[href]')).map(e => e.getAttribute('src') || e.getAttribute('href'))
                 .filter(u => !u.startsWith('data:')),
  title: document.title})"""


def _chromium():
    for c in ("chromium", "chromium-browser", "/usr/bin/chromium"):
        p = shutil.which(c)
        if p:
            return p
    return None


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    exe = _chromium()
    if exe is None:
        pytest.skip("Chromium is not installed: run `bash scripts/services/chromium.sh` (scripts/test.sh does)")
    websocket = pytest.importorskip("websocket", reason="websocket-client is in the dev extra: pip install -e '.[dev]'")
    profile = tmp_path_factory.mktemp("chromium-profile")
    proc = subprocess.Popen([exe, *FLAGS, f"--user-data-dir={profile}", "about:blank"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        port_file = profile / "DevToolsActivePort"
        deadline = time.time() + 60
        while time.time() < deadline and not (port_file.exists() and port_file.read_text().strip()):
            if proc.poll() is not None:
                pytest.fail(f"chromium exited with status {proc.returncode} before opening its DevTools port")
            time.sleep(0.1)
        port = int(port_file.read_text().split()[0])
        yield port, websocket
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=10)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def open_page(browser, path: Path, timeout: float = 30.0) -> dict:
    """Load ``path`` in a fresh tab; return {'errors': [...], 'state': {...}} after the load event."""
    port, websocket = browser
    req = urllib.request.Request(f"http://127.0.0.1:{port}/json/new?about:blank", method="PUT")
    target = json.loads(urllib.request.urlopen(req, timeout=10).read())
    ws = websocket.create_connection(target["webSocketDebuggerUrl"], timeout=timeout, suppress_origin=True)
    errors: list[str] = []
    msg_id = 0

    def send(method, **params):
        nonlocal msg_id
        msg_id += 1
        ws.send(json.dumps({"id": msg_id, "method": method, "params": params}))
        return msg_id

    def pump(until):
        deadline = time.time() + timeout
        while time.time() < deadline:
            m = json.loads(ws.recv())
            meth = m.get("method")
            if meth == "Runtime.exceptionThrown":
                d = m["params"]["exceptionDetails"]
                errors.append("exception: " + d.get("exception", {}).get("description", d.get("text", "")))
            elif meth == "Runtime.consoleAPICalled" and m["params"]["type"] in ("error", "assert"):
                errors.append("console.error: " + " ".join(str(a.get("value", a.get("description"))) for a in m["params"]["args"]))
            elif meth == "Log.entryAdded" and m["params"]["entry"]["level"] == "error":
                errors.append("log: " + m["params"]["entry"]["text"])
            if until(m):
                return m
        raise TimeoutError("chromium did not answer in time")

    try:
        for meth in ("Runtime.enable", "Log.enable", "Page.enable"):
            i = send(meth)
            pump(lambda m, i=i: m.get("id") == i)
        send("Page.navigate", url=path.resolve().as_uri())
        pump(lambda m: m.get("method") == "Page.loadEventFired")
        time.sleep(0.3)  # let late console messages arrive
        i = send("Runtime.evaluate", expression=IMAGE_STATE_JS, returnByValue=True)
        res = pump(lambda m: m.get("id") == i)
        state = json.loads(res["result"]["result"]["value"])
    finally:
        ws.close()
        urllib.request.urlopen(f"http://127.0.0.1:{port}/json/close/{target['id']}", timeout=10).read()
    return {"errors": errors, "state": state}


def test_report_opens_with_every_image_loaded_and_no_console_errors(browser, full_report):
    res = open_page(browser, full_report.html)
    st = res["state"]
    assert res["errors"] == []
    assert len(st["images"]) == len(full_report.figures) >= 10
    assert all(i["complete"] and i["width"] > 100 and i["height"] > 100 and i["data"] for i in st["images"]), st["images"]
    assert st["external"] == []            # self-contained: nothing fetched from files or the network
    assert all(st["targets"]) and "#manifest" in st["links"] and "#likelihood_bias" in st["links"]
    assert st["title"] == "biaskit report"


def test_the_checker_sees_broken_images_and_console_errors(browser, tmp_path):
    # guards the harness itself: a page with a broken image and a console error must be caught
    bad = tmp_path / "bad.html"
    bad.write_text("<!doctype html><html><head><meta charset='utf-8'><title>bad</title></head><body>"
                   "<img src='data:image/png;base64,AAAA'><script>console.error('boom')</script></body></html>")
    res = open_page(browser, bad)
    assert any("boom" in e for e in res["errors"])
    assert res["state"]["images"][0]["width"] == 0
