"""What the tests need from the system that pip cannot install (bubblewrap, tmux,
PostgreSQL: `.ci/run` installs them with apt). Outside CI a test that needs a missing one
skips, saying what to install; in CI (CI=true) it fails: nothing is left out unseen."""

from __future__ import annotations

import os
import shutil

import pytest


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("true", "1")


def missing(what: str, why: str) -> None:
    """Skip the test (fail it in CI): ``what`` is not here, because ``why``."""
    if in_ci():
        pytest.fail(f"CI needs {what}: {why}")
    pytest.skip(f"{what} is not installed ({why}; `apt install {what}`)")


def program(name: str, package: str | None = None) -> str:
    """The path of ``name``, or the test skips (fails in CI)."""
    found = shutil.which(name)
    if found is None:
        missing(package or name, f"no `{name}` on PATH")
    return str(found)
