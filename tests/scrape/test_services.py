"""scripts/services/mediawiki.sh is a fast no-op when MediaWiki and PHP are installed."""

from __future__ import annotations

import shutil
import subprocess
import time

import pytest

from .conftest import MW, ROOT


def test_mediawiki_service_script_is_idempotent():
    if not ((MW / "maintenance" / "install.php").is_file() and shutil.which("php")):
        pytest.skip("MediaWiki not installed here; the wiki fixture installs it")
    t0 = time.perf_counter()
    r = subprocess.run(["bash", str(ROOT / "scripts" / "services" / "mediawiki.sh")], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "already installed" in r.stdout
    assert time.perf_counter() - t0 < 10
