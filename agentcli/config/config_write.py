"""Writing the person's config file: its bytes read as they are, and a new text written
atomically (a temporary file beside it, flushed to disk, renamed over it, with the old
file's permissions; a missing file, and its folder, created private). What changes it
(config/rule_file.py: a rule; config/network_file.py: a host) checks the new text first."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from agentcli.errors import ConfigError


def read_config(path: Path) -> bytes:
    """The file's bytes; b"" when it does not exist (ConfigError if it cannot be read)."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return b""
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc}") from None


def write_config(path: Path, before: bytes, after: bytes) -> None:
    """Replace the file (whose bytes were ``before``) by ``after``, atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777 if before else 0o600
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(after)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temp, mode)
        os.replace(temp, path)
    except OSError as exc:
        Path(temp).unlink(missing_ok=True)
        raise ConfigError(f"cannot write config file {path}: {exc}") from None
