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

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--remote-allow-origins=*",
    "--remote-debugging-port=0",
]

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
def browser(tmp_path_factory, service_wait):
    deadline_of, timeout_message = service_wait
    exe = _chromium()
    if exe is None:
        pytest.skip("Chromium is not installed: run `bash scripts/services/chromium.sh` (scripts/test.sh does)")
    websocket = pytest.importorskip("websocket", reason="websocket-client is in the dev extra: pip install -e '.[dev]'")
    profile = tmp_path_factory.mktemp("chromium-profile")
    proc = subprocess.Popen(
        [exe, *FLAGS, f"--user-data-dir={profile}", "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    try:
        port_file = profile / "DevToolsActivePort"
        wait_s, why = deadline_of(60)
        start = time.time()
        while not (port_file.exists() and port_file.read_text().strip()):
            if proc.poll() is not None:
                pytest.fail(f"chromium exited with status {proc.returncode} before opening its DevTools port")
            if time.time() - start > wait_s:
                pytest.fail(timeout_message("Chromium (its DevTools port)", time.time() - start, why))
            time.sleep(0.1)
        port = int(port_file.read_text().split()[0])
        # a page gets 30 s on a quiet machine, more under load (the same scaling as the start-up wait)
        yield port, websocket, deadline_of(30)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=10)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


LAYOUT_JS = """JSON.stringify({
  innerWidth: window.innerWidth, docWidth: document.documentElement.scrollWidth,
  overflowing: Array.from(document.querySelectorAll('.tw, pre, table, figure, section'))
                 .filter(e => e.scrollWidth > e.clientWidth + 1 || e.getBoundingClientRect().right > window.innerWidth + 1)
                 .map(e => e.tagName + '.' + e.className + ' ' + e.scrollWidth + '>' + e.clientWidth),
  firstAfterH1: (document.querySelector('h1').nextElementSibling || {}).id,
  headlineTop: document.getElementById('headline-block') ? document.getElementById('headline-block').getBoundingClientRect().top : null,
  headlineRows: Array.from(document.querySelectorAll('#headline-block table.hl tbody tr')).map(r => ({
      cls: r.className, cells: Array.from(r.cells).map(c => c.textContent)})),
  mainRows: Array.from(document.querySelectorAll('#headline-block table.hl:not(.fold) tbody tr')).map(r => r.cells[0].textContent + '|' + r.cells[2].textContent),
  verdictLines: Array.from(document.querySelectorAll('#headline-block ul.verdicts > li')).map(li => ({
      text: li.textContent, folded: li.querySelectorAll('details table.fold tbody tr').length,
      top: li.getBoundingClientRect().top})),
  headlineLinksOk: Array.from(document.querySelectorAll('#headline-block a[href^=\"#\"]'))
      .every(a => !!document.getElementById(a.getAttribute('href').slice(1))),
  csvLinks: Array.from(document.querySelectorAll('a[href$=\".csv\"]')).map(a => a.getAttribute('href')),
  maxColumns: Math.max(0, ...Array.from(document.querySelectorAll('section table thead tr')).map(r => r.cells.length))})"""


def open_page(
    browser, path: Path, timeout: float | None = None, width: int | None = None, screenshot: Path | None = None, extra_js: str | None = None
) -> dict:
    """Load ``path`` in a fresh tab; return {'errors': [...], 'state': {...}} after the load event. With ``width``
    the tab is a ``width`` x 900 px window and ``layout`` (LAYOUT_JS) is returned too; with ``screenshot`` a PNG
    of the first screen is written there."""
    port, websocket, (page_s, why) = browser
    timeout = page_s if timeout is None else timeout
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
        raise TimeoutError(f"chromium did not answer in {timeout:.0f} s (deadline {why})")

    try:
        for meth in ("Runtime.enable", "Log.enable", "Page.enable"):
            i = send(meth)
            pump(lambda m, i=i: m.get("id") == i)
        if width:
            i = send("Emulation.setDeviceMetricsOverride", width=width, height=900, deviceScaleFactor=1, mobile=False)
            pump(lambda m, i=i: m.get("id") == i)
        send("Page.navigate", url=path.resolve().as_uri())
        pump(lambda m: m.get("method") == "Page.loadEventFired")
        time.sleep(0.3)  # let late console messages arrive
        i = send("Runtime.evaluate", expression=IMAGE_STATE_JS, returnByValue=True)
        res = pump(lambda m: m.get("id") == i)
        state = json.loads(res["result"]["result"]["value"])
        layout = None
        if width:
            i = send("Runtime.evaluate", expression=LAYOUT_JS, returnByValue=True)
            res = pump(lambda m: m.get("id") == i)
            layout = json.loads(res["result"]["result"]["value"])
        extra = None
        if extra_js:
            i = send("Runtime.evaluate", expression=extra_js, returnByValue=True)
            res = pump(lambda m: m.get("id") == i)
            extra = json.loads(res["result"]["result"]["value"])
        if screenshot is not None:
            import base64

            i = send("Page.captureScreenshot", format="png")
            res = pump(lambda m: m.get("id") == i)
            screenshot.write_bytes(base64.b64decode(res["result"]["data"]))
    finally:
        ws.close()
        urllib.request.urlopen(f"http://127.0.0.1:{port}/json/close/{target['id']}", timeout=10).read()
    return {"errors": errors, "state": state, "layout": layout, "extra": extra}


def test_report_opens_with_every_image_loaded_and_no_console_errors(browser, full_report):
    res = open_page(browser, full_report.html)
    st = res["state"]
    assert res["errors"] == []
    assert len(st["images"]) == len(full_report.figures) >= 10
    assert all(i["complete"] and i["width"] > 100 and i["height"] > 100 and i["data"] for i in st["images"]), st["images"]
    assert st["external"] == []  # self-contained: nothing fetched from files or the network
    assert all(st["targets"]) and "#manifest" in st["links"] and "#likelihood_bias" in st["links"]
    assert st["title"] == "biaskit report"


def test_the_checker_sees_broken_images_and_console_errors(browser, tmp_path):
    # guards the harness itself: a page with a broken image and a console error must be caught
    bad = tmp_path / "bad.html"
    bad.write_text(
        "<!doctype html><html><head><meta charset='utf-8'><title>bad</title></head><body>"
        "<img src='data:image/png;base64,AAAA'><script>console.error('boom')</script></body></html>"
    )
    res = open_page(browser, bad)
    assert any("boom" in e for e in res["errors"])
    assert res["state"]["images"][0]["width"] == 0


def _png_size(path: Path) -> tuple[int, int]:
    import struct

    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", head[16:24])


def test_demo_report_at_1280px_headline_first_no_overflow_small_samples_flagged(browser, quick_demo, tmp_path):
    run_dir, _ = quick_demo
    shot = tmp_path / "first_screen.png"
    res = open_page(browser, run_dir / "report" / "report.html", width=1280, screenshot=shot)
    lay = res["layout"]
    assert res["errors"] == []
    assert _png_size(shot) == (1280, 900)  # the screenshot is the 1280 px first screen
    assert lay["innerWidth"] == 1280
    assert lay["docWidth"] <= 1280 and lay["overflowing"] == [], lay["overflowing"]
    # the headline block comes right after the title and starts on the first screen
    assert lay["firstAfterH1"] == "headline-block" and 0 <= lay["headlineTop"] < 200
    rows = lay["headlineRows"]
    kinds = [r["cells"][0] for r in rows]
    # (the quick demo's model may write no positive text at all: its group gaps are then one "No signal" row)
    assert {"Model vs Wikipedia", "Likelihood Bias"} <= set(kinds) and ({"Largest group gap", "No signal"} & set(kinds)), kinds
    assert lay["headlineLinksOk"]
    # one verdict line per kind x domain x measure on the first screen, the uncertain rows folded under it
    lines = lay["verdictLines"]
    assert lines and lines[0]["top"] < 900, lines
    assert all(("evidence of a gap" in v["text"]) or ("no evidence at this size" in v["text"]) or ("not enough data" in v["text"]) for v in lines)
    assert sum(v["folded"] for v in lines) == sum(
        1
        for r in rows
        if r["cls"] == "flagged"
        and r["cells"][0]
        in ("Largest group gap", "Model vs Wikipedia", "Wikipedia baseline: largest group gap", "Metric fairness", "Counterfactual pairs")
    )
    # in the main table the model's rows first, the Wikipedia baseline's after them and labelled as such
    main = lay["mainRows"]
    base = [i for i, r in enumerate(main) if "Wikipedia baseline" in r.split("|")[0] or "(Wikipedia baseline)" in r.split("|")[1]]
    assert base == list(range(len(main) - len(base), len(main))), main
    # a row is grey (uncertain) exactly when its interval includes 0 or its corrected p is not
    # below 0.05; a group under 30 texts is a separate caution
    for r in rows:
        if r["cells"][0] in ("Largest group gap", "Model vs Wikipedia", "Wikipedia baseline: largest group gap"):
            est = r["cells"][4]
            lo, hi = (float(x) for x in est[est.index("[") + 1 : est.index("]")].split(", "))
            p = r["cells"][5].split(" ")[0]
            uncertain = lo <= 0 <= hi or p == "n/a" or float(p) >= 0.05
            assert (r["cls"] == "flagged") == uncertain and ("uncertain:" in r["cells"][7]) == uncertain, r
            a, b = (int(x) for x in r["cells"][6].split(" / "))
            assert ("caution: small group (n < 30)" in r["cells"][7]) == (min(a, b) < 30), r
            assert "(Holm, " in r["cells"][5]  # says what it was corrected over
        if r["cells"][0] == "Model vs Wikipedia":
            assert r["cells"][3].endswith("minus wikipedia (same span: continuation)"), r
        if r["cells"][0] == "Likelihood Bias":
            assert "pairs tested without correction" in r["cells"][7] and "[" in r["cells"][4]
    # the offline backend is reported as profanity, never as toxicity
    assert any(r["cells"][1].startswith("Profanity") for r in rows)
    assert not any("Toxicity" in r["cells"][1] for r in rows)
    # wide tables are collapsed, the full CSVs linked
    assert lay["maxColumns"] <= 10
    assert "tables/sentiment_positive_ztests.csv" in lay["csvLinks"]
    assert all((run_dir / "report" / h).is_file() for h in lay["csvLinks"])


def test_the_layout_checker_sees_horizontal_overflow(browser, tmp_path):
    # guards the harness: a table wider than the page must be reported
    bad = tmp_path / "wide.html"
    cells = "".join(f"<td>column_{i}_with_a_long_name</td>" for i in range(60))
    bad.write_text(
        "<!doctype html><html><head><meta charset='utf-8'><title>w</title></head><body><h1>x</h1>"
        f"<section id='headline-block'><table><thead><tr>{cells}</tr></thead></table></section></body></html>"
    )
    lay = open_page(browser, bad, width=1280)["layout"]
    assert lay["docWidth"] > 1280 and lay["overflowing"]


PAGE_JS = """JSON.stringify({
  stageText: Array.from(document.querySelectorAll('ul#stages li')).map(li => li.textContent),
  brokenWords: (() => {
    const out = [];
    for (const cell of document.querySelectorAll('section .tw table td, section .tw table th')) {
      const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
      for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        for (const m of n.textContent.matchAll(/[^\\s_\\/-]+[_\\/-]?/g)) {   // pieces between legal breaks (space, _ / -)
          const r = document.createRange();
          r.setStart(n, m.index); r.setEnd(n, m.index + m[0].length);
          const tops = new Set(Array.from(r.getClientRects()).map(x => Math.round(x.top)));
          if (tops.size > 1) out.push(m[0]);
        }
      }
    }
    return out; })(),
  repeatedHeaders: Array.from(document.querySelectorAll('section .tw table thead tr')).map(tr => Array.from(tr.cells).map(c => c.textContent))
                      .filter(h => new Set(h).size !== h.length),
  manifestDetails: !!document.querySelector('#manifest ~ details'),
  manifestOpen: document.querySelector('#manifest ~ details') ? document.querySelector('#manifest ~ details').open : null,
  manifestShown: document.querySelector('#manifest ~ details pre') ? document.querySelector('#manifest ~ details pre').checkVisibility() : null,
  pageHeight: document.documentElement.scrollHeight,
  bodyText: document.body.innerText})"""


def _page(browser, path, width=1280):
    """open_page plus PAGE_JS (the page checks: stage-list code, table word breaks, single-sentence sections)."""
    res = open_page(browser, path, width=width, extra_js=PAGE_JS)
    return res, res["extra"]


def test_demo_report_page_reads_cleanly(browser, quick_demo):
    # commands in the stage list are code (no literal backticks), no word of a table breaks in
    # the middle (gender polarity: "unigram_mal/e", "smollm2-/135m"), no table repeats a header (male-minus-female:
    # male | female | male | female), the run manifest is collapsed, and no "rows not used: 0 (other models)"
    run_dir, _ = quick_demo
    res, pg = _page(browser, run_dir / "report" / "report.html")
    assert res["errors"] == []
    stages = [t for t in pg["stageText"] if t.split(":")[0] in ("scrape", "templates", "generate", "score", "report", "hub")]
    assert stages and not any("`" in t for t in stages), stages
    assert pg["brokenWords"] == [], pg["brokenWords"][:20]
    assert pg["repeatedHeaders"] == [], pg["repeatedHeaders"]
    assert pg["manifestDetails"] and pg["manifestOpen"] is False and pg["manifestShown"] is False
    assert "rows not used" not in pg["bodyText"] and "0 (other models)" not in pg["bodyText"]
    assert "Model and Wikipedia baseline are scored on the same span (continuation)" in pg["bodyText"]


def test_no_hit_section_is_one_sentence_in_chromium(browser, make_run, tmp_path):
    # when no text has the label, the section is one sentence: no all-grey 100 % figures, no
    # tables of n/a tests
    import pandas as pd
    import pyarrow as pa

    from biaskit.evaluate.report import build_report
    from biaskit.io import write_table

    run = make_run(tmp_path / "run")
    df = pd.read_parquet(run / "scores.parquet")
    df["toxicity_label"] = "non-toxic"
    write_table(pa.Table.from_pandas(df, preserve_index=False), run / "scores.parquet", stage="scores")
    rep = build_report(run, tmp_path / "rep", n_boot=20)
    res, pg = _page(browser, rep.html)
    assert res["errors"] == []
    sec = pg["bodyText"].split("\nToxicity\n", 1)[1].split("\nRegard\n", 1)[0]
    assert "No text has the label `toxic`".replace("`", "") in sec
    assert not any(t.startswith("toxicity_") for t in rep.tables) and not any("toxicity" in f.name for f in rep.figures)
