"""The adversarial suite: each module attacks one class of the trust promise through the
installed command (the e2e fixtures) or the public interfaces, with many payloads per class.

Every payload list is a module-level constant named PAYLOADS (or a hypothesis strategy), so
`pytest --collect-only -q tests/security` counts what is tried; each test asserts that none
got through.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tests.e2e.conftest import agent, server  # noqa: F401 - the e2e fixtures, shared here

HERE = Path(__file__).parent
SAMPLE = 3
"""In the default run, one payload in SAMPLE (or the module's own SAMPLE, where each payload
takes many agentcli starts) of each test that drives the installed command (`agent`) over a
payload list; the others are marked slow (`pytest -m slow` runs them, as
does `bash .ci/slow`). Every payload still runs in the default run wherever a test checks it
in process (the policy, the tools, the renderers), which takes milliseconds."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    sampled = [item for item in items if _drives_the_command(item)]
    cases = Counter(item.nodeid.split("[")[0] for item in sampled)
    for item in sampled:
        every = getattr(item.module, "SAMPLE", SAMPLE)  # a module's own, for long payloads
        many = cases[item.nodeid.split("[")[0]] > every  # a short list runs whole
        if many and sum(item.callspec.indices.values()) % every:  # type: ignore[attr-defined]
            item.add_marker(pytest.mark.slow)


def _drives_the_command(item: pytest.Item) -> bool:
    return (
        getattr(item, "callspec", None) is not None
        and "agent" in getattr(item, "fixturenames", ())
        and HERE in Path(item.path).parents
    )
