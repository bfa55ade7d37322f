"""The environment tool processes get: a minimal allow-list plus what the user passes through.

Shell commands and MCP stdio servers never inherit the application's environment: it holds
the model's API key, database URLs and whatever else the person exported. They get the
variables a command needs to behave (MINIMAL, and the ``LC_*`` locale settings that do not
look secret), plus the names the person lists in ``env_passthrough``:

- an exact name passes, even one that looks secret (``GITHUB_TOKEN``): the person asked;
- a glob (``GIT_*``, ``*``) never matches a name that looks secret (see ``looks_secret``),
  so a broad pattern cannot pull in a credential nobody named;
- names in ``never`` (the application's own: ``AGENTCLI_*``, the model key's variable) and
  variables whose value is one of ``never_values`` (the model key under another name) never
  pass, whatever the list says.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterable, Mapping

MINIMAL = frozenset(
    {"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TERM", "TZ", "TMPDIR"}
)
"""Always passed (when set): what commands need to find programs, files, and speak text.
PWD is not among them: bash sets it from the working directory (the workspace)."""

_CREDENTIAL = re.compile(
    r"KEY|TOKEN|SECRET|PASSW|PASSPHRASE|CREDENTIAL|AUTH|COOKIE|PRIVATE|SIGNATURE"
    r"|(^|_)PASS($|_)|(^|_)PAT($|_)|_DSN$|DATABASE_URL$|_CONN(ECTION)?(_STRING)?$"
    r"|_HEADERS$",  # OTEL_EXPORTER_OTLP_HEADERS: a collector's key, as HTTP headers
    re.IGNORECASE,
)
# families whose other members (AWS_REGION, OPENAI_BASE_URL) are not secret, but which a
# glob should still not pull in wholesale
_FAMILY = re.compile(r"^(AWS|AZURE|GCP|GOOGLE|OPENAI|ANTHROPIC|AGENTCLI)_", re.IGNORECASE)
_URL_PASSWORD = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*:[^/\s@]+@")


def is_credential(name: str, value: str = "") -> bool:
    """True for a variable whose name says it holds a credential (``*_TOKEN``, ``*KEY*``,
    ``*PASSWORD*``...), or whose value is a URL with a password (``postgresql://u:pw@h``)."""
    return bool(_CREDENTIAL.search(name) or _URL_PASSWORD.search(value))


def looks_secret(name: str, value: str = "") -> bool:
    """A credential, or a name of a family that holds them (``AWS_*``, ``OPENAI_*``...):
    what a passthrough glob never matches."""
    return is_credential(name, value) or bool(_FAMILY.search(name))


def tool_environment(
    passthrough: Iterable[str] = (),
    *,
    source: Mapping[str, str] | None = None,
    never: Iterable[str] = ("AGENTCLI_*",),
    never_values: Iterable[str] = (),
) -> dict[str, str]:
    """The environment for a tool process: MINIMAL and the locale's ``LC_*`` from ``source``
    (default ``os.environ``), plus the ``passthrough`` names or globs, minus ``never``."""
    source = os.environ if source is None else source
    patterns = [p for p in passthrough if p]
    exact = {p for p in patterns if not any(c in p for c in "*?[")}
    globs = [p for p in patterns if p not in exact]
    blocked = list(never)
    hidden = {v for v in never_values if v}
    env: dict[str, str] = {}
    for name, value in source.items():
        if any(fnmatch.fnmatchcase(name, pattern) for pattern in blocked) or value in hidden:
            continue
        if name in MINIMAL or name in exact:
            env[name] = value
        elif name.startswith("LC_") and not looks_secret(name, value):  # not LC_API_KEY
            env[name] = value
        elif not looks_secret(name, value) and any(
            fnmatch.fnmatchcase(name, pattern) for pattern in globs
        ):
            env[name] = value
    return env
