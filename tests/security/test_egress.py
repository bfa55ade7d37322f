"""The egress proxy through the installed command: with `[sandbox] network` listing a package
index on 127.0.0.1, `pip install` in a confined command works through the proxy, and nothing
else is reached: no other port or host, not the listed one past the proxy, not over UDP or a
unix socket, not by a request the proxy could read two ways. Each refusal is a line in the
result and a record in the audit.

Loopback only: the index is listed as the address and port it serves on (an IP address
names itself, loopback as it is; a listed *name* that resolves to loopback is refused:
tests/tools/test_egress.py). The payloads that go around the proxy are shown to reach their
server with `network = true`.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest
from agentcli_tools.sandbox import mechanism

from tests.e2e.conftest import Agent
from tests.e2e.test_sandbox import configure, run_shell
from tests.helpers.installed import program
from tests.helpers.package_index import MARK, MODULE, PROJECT, PackageIndex

pytestmark = pytest.mark.skipif(
    mechanism()[0] != "landlock" or mechanism()[1] < 4, reason="needs Landlock ABI 4"
)

PY = sys.executable
HELLO = "hello-from-a-server-not-listed"
STOP = b"\0stop"  # what ends the UDP server


@dataclass
class Servers:
    """The listed index, and a TCP, a UDP and a unix socket server that are not listed:
    what each of the last three received."""

    index: PackageIndex
    tcp: int
    udp: int
    unix: str
    got: list[str] = field(default_factory=list)


@pytest.fixture
def servers() -> Iterator[Servers]:
    folder = tempfile.mkdtemp(prefix="agentcli-test-", dir="/var/tmp")
    os.chmod(folder, 0o755)  # a command run as another user may reach it, but for the sandbox
    tcp = socket.create_server(("127.0.0.1", 0))
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    unix.bind(f"{folder}/s")
    os.chmod(f"{folder}/s", 0o777)
    unix.listen()
    with PackageIndex() as index:
        found = Servers(index, tcp.getsockname()[1], udp.getsockname()[1], f"{folder}/s")

        def serve(sock: socket.socket, kind: str) -> None:
            while True:
                try:
                    if kind == "udp":
                        if (data := sock.recv(100)) == STOP:
                            return
                        found.got.append(f"udp {data!r}")
                        continue
                    conn, _ = sock.accept()
                except OSError:
                    return
                found.got.append(kind)
                with conn:
                    conn.sendall(f"HTTP/1.0 200 OK\r\n\r\n{HELLO}".encode())

        threads = [
            threading.Thread(target=serve, args=(s, k), daemon=True)
            for s, k in ((tcp, "tcp"), (udp, "udp"), (unix, "unix"))
        ]
        for thread in threads:
            thread.start()
        yield found
        udp.sendto(STOP, udp.getsockname())
        for sock in (tcp, unix):
            sock.shutdown(socket.SHUT_RDWR)  # wakes accept()
        for thread in threads:
            thread.join()
    for sock in (tcp, udp, unix):
        sock.close()
    os.unlink(f"{folder}/s")
    os.rmdir(folder)


def listed(agent: Agent, servers: Servers) -> None:
    configure(agent, f'[sandbox]\nnetwork = ["127.0.0.1:{servers.index.port}"]\n')


def python(code: str) -> str:
    return f"{PY} -c {json.dumps(code)}"


def raw(request: str) -> str:
    """A command sending ``request`` to the proxy as it is, printing the answer."""
    code = (
        "import os, socket; port = int(os.environ['HTTP_PROXY'].rsplit(':', 1)[1]);"
        "s = socket.create_connection(('127.0.0.1', port), 10);"
        f"s.sendall({request!r}.encode()); print(s.recv(4096))"
    )
    return python(code)


# {p}: the listed index's port; {t}: a TCP server's, {u}: a UDP server's, {s}: a unix socket
AROUND = [
    python("import socket; print(socket.create_connection(('127.0.0.1', {t}), 5).recv(99))"),
    python("import socket; s = socket.create_connection(('127.0.0.1', {p}), 5);"
           "s.sendall(b'GET /simple/ HTTP/1.0\\r\\n\\r\\n');"
           "print(s.makefile('rb').read())"),  # HTTP/1.0: the answer ends when it closes
    "curl -sS --noproxy '*' http://127.0.0.1:{p}/simple/",
    "env -u HTTP_PROXY -u http_proxy -u ALL_PROXY -u all_proxy "
    + python("import urllib.request as u; print(u.urlopen('http://127.0.0.1:{p}/simple/').read())"),
    "exec 3<>/dev/tcp/127.0.0.1/{t} && cat <&3",
    python("import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM);"
           "s.sendto(b'out', ('127.0.0.1', {u})); print('sent')"),
    python("import socket; s = socket.socket(socket.AF_UNIX); s.connect('{s}'); print(s.recv(99))"),
]  # fmt: skip
THROUGH = [
    "curl -sS http://127.0.0.1:{t}/",
    "curl -sS -p http://127.0.0.1:{t}/",  # CONNECT to a port not listed
    "curl -sS http://localhost:{p}/simple/",  # the index's address, by a name not listed
    "curl -sS -p https://unlisted.example/",
    raw("GET http://127.0.0.1:{p}/simple/ HTTP/1.1\r\nHost: unlisted.example\r\n\r\n"),
    raw("GET http://127.0.0.1:{p}@unlisted.example/simple/ HTTP/1.1\r\n\r\n"),
    raw("GET http://127.0.0.1%3a{p}/simple/ HTTP/1.1\r\n\r\n"),
    raw("CONNECT 127.0.0.1:{t} HTTP/1.1\r\nHost: 127.0.0.1:{p}\r\n\r\n"),
    raw("GET /simple/ HTTP/1.1\r\nHost: 127.0.0.1:{p}\r\n\r\n"),
    # the proxy's port on an address outside the namespace (TEST-NET: routed nowhere)
    python("import socket; socket.create_connection(('192.0.2.1', 3128), 3); print('open')"),
]
PAYLOADS = AROUND + THROUGH


def commands(servers: Servers, payloads: list[str]) -> list[str]:
    return [
        p.replace("{p}", str(servers.index.port))
        .replace("{t}", str(servers.tcp))
        .replace("{u}", str(servers.udp))
        .replace("{s}", servers.unix)
        for p in payloads
    ]


def reached(servers: Servers, results: list[str]) -> list[str]:
    """What any server saw or sent back: the index's requests, the others' connections."""
    answers = [r for r in results if HELLO in r or PROJECT in r or "open" in r.split("\n")]
    return [*servers.index.paths, *servers.got, *answers]


def test_pip_installs_through_the_proxy_from_a_listed_index(agent: Agent, servers: Servers) -> None:
    listed(agent, servers)
    install = (
        f"{PY} -m pip install --isolated --no-cache-dir --disable-pip-version-check"
        f" --index-url {servers.index.url} --target ./site {PROJECT}"
        f" && PYTHONPATH=site {PY} -c 'import {MODULE}; print({MODULE}.VALUE)'"
    )
    got = run_shell(agent, install)
    assert got[0].startswith("exit code 0") and got[0].rstrip().endswith(MARK), got[0]
    assert servers.index.paths[-1].endswith(".whl")
    assert set(servers.index.hosts) == {f"127.0.0.1:{servers.index.port}"}
    network = [e for e in json.loads(agent.run("audit", "--json").stdout) if e["tool"] == "network"]
    assert [(e["args"], e["decision"], e["by"]) for e in network] == [
        (
            {"how": "HTTP", "host": "127.0.0.1", "port": servers.index.port},
            "allowed",
            "egress proxy: listed in [sandbox] network",
        )
    ]


def test_nothing_else_is_reached_and_each_refusal_is_said_and_audited(
    agent: Agent, servers: Servers
) -> None:
    program("curl", "curl")
    listed(agent, servers)
    got = run_shell(agent, *commands(servers, PAYLOADS))
    assert reached(servers, got) == []
    refused = [r for r in got if "[sandbox] the egress proxy refused" in r]
    assert len(refused) == 4, got  # the proxy's own refusals (the others are 400s or errors)
    assert (
        f"refused HTTP to localhost:{servers.index.port}: not in [sandbox] network"
        in got[len(AROUND) + 2]
    )
    audit = json.loads(agent.run("audit", "--json").stdout)
    network = [e for e in audit if e["tool"] == "network"]
    assert {(e["args"]["host"], e["decision"]) for e in network} == {
        ("127.0.0.1", "refused"),
        ("localhost", "refused"),
        ("unlisted.example", "refused"),
    }


def test_the_payloads_around_the_proxy_are_real(agent: Agent, servers: Servers) -> None:
    """With the network on, each payload that goes around the proxy reaches its server."""
    program("curl", "curl")
    configure(agent, "[sandbox]\nnetwork = true\n")
    for command, result in zip(AROUND, run_shell(agent, *commands(servers, AROUND)), strict=True):
        assert result.startswith("exit code 0"), (command, result)
        assert HELLO in result or PROJECT in result or "sent" in result, (command, result)
    assert servers.index.paths == ["/simple/"] * 3
    assert "udp b'out'" in servers.got and "unix" in servers.got and "tcp" in servers.got


@pytest.mark.parametrize("missing", ["userns", "landlock"])
def test_where_nothing_keeps_a_command_to_the_proxy_it_does_not_start(
    agent: Agent, servers: Servers, missing: str
) -> None:
    if missing == "landlock":
        program("bwrap", "bubblewrap")
    agent.env["AGENTCLI_TEST_SANDBOX_MISSING"] = missing
    listed(agent, servers)
    got = run_shell(agent, f"curl -sS http://127.0.0.1:{servers.index.port}/simple/; echo ran")
    assert "ran" not in got[0] and servers.index.paths == []
    assert "[sandbox] network lists hosts, but" in got[0]
    assert "Set [sandbox] network = false" in got[0]


def test_a_bad_host_in_the_list_is_a_config_error(agent: Agent) -> None:
    configure(agent, '[sandbox]\nnetwork = ["pypi.org", "user@evil.example", "*"]\n')
    result = agent.run("config", "show")
    assert result.returncode != 0
    assert "user names and passwords" in result.stderr and '"*": a wildcard' in result.stderr
