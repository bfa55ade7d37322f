"""The adversarial suite: each module attacks one class of the trust promise through the
installed command (the e2e fixtures) or the public interfaces, with many payloads per class.

Every payload list is a module-level constant named PAYLOADS (or a hypothesis strategy), so
`pytest --collect-only -q tests/security` counts what is tried; each test asserts that none
got through.
"""

from __future__ import annotations

from tests.e2e.conftest import agent, server  # noqa: F401 - the e2e fixtures, shared here
