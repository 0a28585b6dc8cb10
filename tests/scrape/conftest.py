"""Fixtures for the scrape tests, including a real MediaWiki server (Debian's mediawiki, SQLite, PHP's
built-in server on 127.0.0.1) loaded with real Wikipedia pages from tests/fixtures/wiki.

The server is installed when missing (scripts/services/mediawiki.sh, needs root and apt), started once per
session in a temp dir on a free port, and stopped (with its process group) at the end. A router script
injects faults for retry tests: each line of ``<dir>/faults`` is consumed by one api.php request
(``429 2`` = HTTP 429 with Retry-After: 2, ``503``, ``html``); ``<dir>/fake_lag`` = N makes the next N
requests fail with the maxlag error (through an ApiMaxLagInfo hook).
"""

from __future__ import annotations

import bz2
import os
import re
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
DUMP206 = FIXTURES / "wiki" / "enwiki-pages-articles-206pages.xml.bz2"
TABLES5 = FIXTURES / "wiki" / "enwiki-table-markup-5pages.xml.bz2"
PEAR = FIXTURES / "wiki" / "enwiki-pear-export-0.10.xml"
MW = Path("/usr/share/mediawiki")

#: real pages imported into the test wiki (plus the redirect AynRand -> Ayn Rand)
WIKI_PAGES = (
    "Astronomer",
    "Allah",
    "Ayn Rand",
    "AynRand",
    "Aristotle",
    "Arthur Schopenhauer",
    "Andre Agassi",
    "Aldous Huxley",
    "Anarchism",
    "Actrius",
    "Alain Connes",
    "Allan Dwan",
)
#: a hand-written seed page (list page) created in the wiki
SEED_TITLE = "List of biaskit test people"
SEED_TEXT = """This is a list of people for the '''biaskit''' tests.
* [[Andre Agassi]]
* [[Aldous Huxley|Huxley]]
* [[Alain Connes]]
* [[Nobody Of This Name]]
[[Category:Test lists]]
"""


@pytest.fixture(autouse=True)
def _offline(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("BIASKIT_CACHE", str(tmp_path / "cache"))


@pytest.fixture(scope="session")
def nlp():
    from biaskit.scrape.clean import load_splitter

    return load_splitter("en")


def subset_dump(src: Path, titles: tuple[str, ...], dst: Path) -> Path:
    """Write the pages of ``src`` whose titles are in ``titles`` (with the siteinfo) to ``dst``."""
    text = bz2.open(src, "rt", encoding="utf-8").read()
    head, _, rest = text.partition("  <page>")
    pages = re.findall(r"  <page>.*?</page>\n", "  <page>" + rest, re.S)
    keep = [p for p in pages if re.search(r"<title>(.*?)</title>", p).group(1) in titles]
    dst.write_text(head + "".join(keep) + "</mediawiki>\n", encoding="utf-8")
    return dst


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ensure_installed() -> None:
    if (MW / "maintenance" / "install.php").is_file() and shutil.which("php"):
        return
    subprocess.run(["bash", str(ROOT / "scripts" / "services" / "mediawiki.sh")], check=False, timeout=600)
    if not ((MW / "maintenance" / "install.php").is_file() and shutil.which("php")):
        pytest.skip("MediaWiki could not be installed here (needs root + apt: bash scripts/services/mediawiki.sh)")


@dataclass
class Wiki:
    endpoint: str
    dir: Path
    env: dict

    def faults(self, *lines: str) -> None:
        (self.dir / "faults").write_text("".join(x + "\n" for x in lines))

    def fault_log(self) -> list[str]:
        p = self.dir / "faults.log"
        return p.read_text().split() if p.exists() else []

    def lag(self, n: int) -> None:
        (self.dir / "fake_lag").write_text(str(n))

    def reset(self) -> None:
        for f in ("faults", "faults.log", "fake_lag"):
            (self.dir / f).unlink(missing_ok=True)


ROUTER = r"""<?php
// biaskit test router: one line of `faults` per api.php request, otherwise MediaWiki answers
$faults = __DIR__ . '/faults';
$uri = parse_url($_SERVER['REQUEST_URI'], PHP_URL_PATH);
if ($uri === '/api.php' && is_file($faults)) {
    $lines = file($faults, FILE_IGNORE_NEW_LINES | FILE_SKIP_EMPTY_LINES);
    if ($lines) {
        $line = array_shift($lines);
        file_put_contents($faults, $lines ? implode("\n", $lines) . "\n" : '');
        file_put_contents(__DIR__ . '/faults.log', $line . "\n", FILE_APPEND);
        $parts = preg_split('/\s+/', trim($line));
        if ($parts[0] === 'html') { header('Content-Type: text/html'); echo "<!DOCTYPE html><html><body>Not an API</body></html>"; return true; }
        http_response_code((int)$parts[0]);
        if (isset($parts[1])) { header('Retry-After: ' . $parts[1]); }
        header('Content-Type: text/plain');
        echo "injected fault $line";
        return true;
    }
}
return false;
"""

SETTINGS = r"""
$wgJobRunRate = 0;
$wgRCMaxAge = 20 * 365 * 86400;
$wgShowExceptionDetails = true;
$wgHooks['ApiMaxLagInfo'][] = function ( &$lagInfo ) {
    $f = __DIR__ . '/fake_lag';
    if ( is_file( $f ) ) {
        $n = (int)trim( file_get_contents( $f ) );
        if ( $n > 0 ) {
            file_put_contents( $f, (string)( $n - 1 ) );
            $lagInfo = [ 'host' => 'fake-replica', 'lag' => 10, 'type' => 'db' ];
        }
    }
};
"""


@contextmanager
def start_wiki(d: Path, service_wait=None):
    """Install, load and serve a MediaWiki in folder ``d``; stop it on exit (also used by bench/).

    ``service_wait`` is the session's (deadline, message) pair (tests/conftest.py): each step may take
    longer on a loaded machine. Without it (bench/) the quiet-machine deadlines apply."""
    deadline_of, timeout_message = service_wait or (lambda base: (base, f"{base:.0f} s"), None)
    port = _free_port()
    env = {**os.environ, "MW_CONFIG_FILE": str(d / "LocalSettings.php")}
    php_s, php_why = deadline_of(300)

    def php(*args, **kw):
        try:
            return subprocess.run(["php", *args], env=env, cwd=d, check=True, capture_output=True, timeout=php_s, **kw)
        except subprocess.TimeoutExpired:
            step = Path(str(args[0])).name
            msg = (
                timeout_message(f"MediaWiki set-up ({step})", php_s, php_why)
                if timeout_message
                else f"MediaWiki set-up ({step}) took over {php_s:.0f} s"
            )
            raise RuntimeError(msg) from None

    php(
        str(MW / "maintenance/install.php"),
        "--quiet",
        "--dbtype",
        "sqlite",
        "--dbpath",
        str(d / "data"),
        "--dbname",
        "testwiki",
        "--server",
        f"http://127.0.0.1:{port}",
        "--scriptpath",
        "",
        "--confpath",
        str(d),
        "--lang",
        "en",
        "--pass",
        "Biaskit-Test-Pass-2026",
        "--extensions",
        "ParserFunctions,Cite",
        "TestWiki",
        "Admin",
    )
    with open(d / "LocalSettings.php", "a") as fh:
        fh.write(SETTINGS)
    (d / "router.php").write_text(ROUTER)
    xml = subset_dump(DUMP206, WIKI_PAGES, d / "subset.xml")
    php(str(MW / "maintenance/importDump.php"), "--quiet", str(xml))
    php(str(MW / "maintenance/edit.php"), "-u", "Admin", "-s", "seed page", SEED_TITLE, input=SEED_TEXT.encode())
    php(str(MW / "maintenance/runJobs.php"), "--quiet")
    php(str(MW / "maintenance/initSiteStats.php"), "--update", "--quiet")
    log = open(d / "server.log", "wb")
    proc = subprocess.Popen(
        ["php", "-S", f"127.0.0.1:{port}", "-t", str(MW), str(d / "router.php")],
        env=env,
        cwd=d,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    endpoint = f"http://127.0.0.1:{port}/api.php"
    try:
        wait_s, why = deadline_of(60)
        start = time.time()
        while True:
            try:
                with urllib.request.urlopen(endpoint + "?action=query&meta=siteinfo&format=json", timeout=5) as r:
                    if b'"general"' in r.read():
                        break
            except OSError:
                time.sleep(0.2)
            if proc.poll() is not None or time.time() - start > wait_s:
                head = (
                    f"MediaWiki's php server exited with status {proc.returncode}"
                    if proc.poll() is not None
                    else timeout_message("MediaWiki", time.time() - start, why)
                    if timeout_message
                    else f"MediaWiki did not start in {wait_s:.0f} s"
                )
                raise RuntimeError(f"{head}: {(d / 'server.log').read_text()[-2000:]}")
        yield Wiki(endpoint, d, env)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
        log.close()


@pytest.fixture(scope="session")
def wiki(tmp_path_factory, service_wait):
    _ensure_installed()
    with start_wiki(tmp_path_factory.mktemp("mediawiki"), service_wait) as w:
        yield w


@pytest.fixture
def fresh_wiki(wiki):
    wiki.reset()
    yield wiki
    wiki.reset()
