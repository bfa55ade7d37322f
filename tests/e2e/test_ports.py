"""The port the tests' servers are started on (tests/helpers/ports.py): no other socket
takes it between its reservation and the server's bind, and the server still binds it."""

from __future__ import annotations

import errno
import socket

import pytest

from tests.helpers.ports import reserved_port


def test_a_reserved_port_is_given_to_no_other_socket_but_a_server_binds_it() -> None:
    ports = {reserved_port() for _ in range(20)}
    assert len(ports) == 20
    port = min(ports)
    with socket.socket() as plain, pytest.raises(OSError) as refused:
        plain.bind(("127.0.0.1", port))
    assert refused.value.errno == errno.EADDRINUSE
    with pytest.raises(ConnectionRefusedError):  # nothing listens: a closed port too
        socket.create_connection(("127.0.0.1", port), timeout=5)
    # the kernel picks ports at random: 2,000 picks of each kind give a chance of roughly
    # 2,000 x 20 / 28,000 (the local port range) to land on one, were they not reserved
    picked: set[int] = set()
    with socket.create_server(("127.0.0.1", 0)) as target:
        address = target.getsockname()
        for _ in range(2000):
            with socket.socket() as other:
                other.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                other.bind(("127.0.0.1", 0))
                picked.add(other.getsockname()[1])
            with socket.create_connection(address) as outgoing:
                picked.add(outgoing.getsockname()[1])
                target.accept()[0].close()
    assert not picked & ports
    with socket.create_server(("127.0.0.1", port), reuse_port=False) as server:  # SO_REUSEADDR
        assert server.getsockname()[1] == port
