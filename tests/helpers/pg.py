"""A private PostgreSQL server for the tests: initdb into a temporary folder, start it on a
free localhost port, one fresh database per test, stop and remove it all at the end.

Uses Debian's server binaries (/usr/lib/postgresql/VERSION/bin). The server refuses to run
as root, so as root everything runs as the `postgres` OS user (runuser).
"""

from __future__ import annotations

import glob
import itertools
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from tests.helpers.ports import reserved_port

SERVER_OPTIONS = (
    "-c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off"
    " -c full_page_writes=off -c max_connections=200"
)


def bin_dir() -> Path | None:
    """The newest installed server's bin folder, or None."""
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3])
    )
    return Path(found[-1]).parent if found else None


@dataclass
class Cluster:
    bin: Path
    root: Path
    port: int = field(default_factory=reserved_port)
    user: str = "postgres"
    _names: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    @property
    def data(self) -> Path:
        return self.root / "data"

    def _run(self, *args: str) -> None:
        command = list(args)
        if os.geteuid() == 0:
            command = ["runuser", "-u", "postgres", "--", *command]
        subprocess.run(command, check=True, capture_output=True, text=True, timeout=120)

    def start(self) -> None:
        if os.geteuid() == 0:
            shutil.chown(self.root, "postgres", "postgres")
        else:
            self.user = os.environ.get("USER") or "postgres"
        self._run(
            str(self.bin / "initdb"), "-D", str(self.data), "-U", self.user,
            "-A", "trust", "-E", "UTF8", "--no-sync", "--locale=C",
        )  # fmt: skip
        options = f"-p {self.port} -k {self.root} {SERVER_OPTIONS}"
        self._run(
            str(self.bin / "pg_ctl"), "-D", str(self.data), "-o", options,
            "-l", str(self.root / "server.log"), "-w", "-t", "60", "start",
        )  # fmt: skip

    def stop(self) -> None:
        try:
            self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def url(self, database: str = "postgres", password: str | None = None) -> str:
        secret = f":{password}" if password else ""
        return f"postgresql://{self.user}{secret}@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        """A fresh, empty database; its URL."""
        import psycopg

        name = f"t{next(self._names)}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return self.url(name)


def start_cluster() -> Cluster:
    """A running private server; raises RuntimeError if PostgreSQL is not installed."""
    found = bin_dir()
    if found is None:
        raise RuntimeError("PostgreSQL is not installed (apt-get install -y postgresql)")
    cluster = Cluster(found, Path(tempfile.mkdtemp(prefix="agentcli-pg-")))
    try:
        cluster.start()
    except subprocess.CalledProcessError as exc:
        log = cluster.root / "server.log"
        detail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
        shutil.rmtree(cluster.root, ignore_errors=True)
        raise RuntimeError(f"PostgreSQL did not start: {exc.stderr or exc}\n{detail}") from exc
    return cluster
