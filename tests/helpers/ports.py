"""A 127.0.0.1 port for a server the tests start, that nothing else takes first.

Picking a port by binding port 0 and closing it leaves a gap before the server binds it, in
which the kernel may hand the same port to any other socket: an outgoing connection of
another test (they are many) or another worker's server. The server then fails to start.

`reserved_port` closes that gap the kernel's way: it accepts one connection on the port and
closes the accepted end first, which leaves the port in TIME_WAIT for 60 s. Meanwhile the
kernel gives it to no `bind(("127.0.0.1", 0))` and no outgoing connection, while a server
that sets SO_REUSEADDR, as uvicorn, PostgreSQL and llama.cpp's server all do, binds it. A
connection to it is refused until the server listens, so it also serves as a closed port.
"""

from __future__ import annotations

import socket


def reserved_port() -> int:
    with socket.socket() as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        address = listener.getsockname()
        with socket.create_connection(address):
            accepted, _ = listener.accept()
            accepted.close()  # this end closes first, so it is the one left in TIME_WAIT
        return int(address[1])
