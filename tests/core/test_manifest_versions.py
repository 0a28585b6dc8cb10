"""The library versions a manifest records: the installed versions, looked up once per process."""

from __future__ import annotations

import importlib.metadata as md

from biaskit import manifest


def test_library_versions_are_the_installed_ones_and_a_fresh_copy_each_call():
    first = manifest.library_versions(("numpy", "pyarrow", "no-such-package-biaskit"))
    assert first == {"numpy": md.version("numpy"), "pyarrow": md.version("pyarrow")}
    first["numpy"] = "edited"
    assert manifest.library_versions(("numpy", "pyarrow", "no-such-package-biaskit"))["numpy"] == md.version("numpy")


def test_a_manifest_records_the_versions_of_its_libraries():
    libs = manifest.new_manifest("test")["libraries"]
    assert libs["pyarrow"] == md.version("pyarrow")
    assert set(libs) <= set(manifest.LIBRARIES)
