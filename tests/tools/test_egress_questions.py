"""The egress proxy's questions in process (tools/egress_questions.py, tools/egress_proxy.py):
a host not listed is asked about before anything is looked up, each answer does what it
says and is told, one refused is not asked again in the command, and a question whose
command ends is withdrawn, a refusal. The person is a thread answering what it is told."""

from __future__ import annotations

import queue
import re
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from agentcli_tools import egress_proxy
from agentcli_tools.egress import Hosts
from agentcli_tools.egress_proxy import Decision, EgressProxy
from agentcli_tools.egress_questions import (
    CONFIG,
    ONCE,
    REFUSE,
    THREAD,
    UNANSWERED,
    EgressQuestions,
    Question,
)

from tests.tools.test_egress import Upstream, ask, upstream  # noqa: F401 (a fixture)

WAIT_S = 30.0


@dataclass
class Asked:
    """A command's proxy whose questions go to ``questions``; ``told`` its decisions."""

    port: int
    proxy: EgressProxy
    desk: EgressQuestions
    questions: queue.Queue[Question]
    told: list[Decision]


def proxy_for(desk: EgressQuestions, thread_id: str = "t1") -> Asked:
    listener = socket.create_server(("127.0.0.1", 0))
    questions: queue.Queue[Question] = queue.Queue()
    told: list[Decision] = []
    asking = desk.for_thread(thread_id)

    def ask_person(how: str, host: str, port: int, gone) -> object:  # noqa: ANN001
        return asking.decide("call-1", how, host, port, questions.put, gone)

    proxy = EgressProxy(listener, Hosts.parse(["pypi.org"]), False, told.append, ask_person)
    return Asked(listener.getsockname()[1], proxy.start(), desk, questions, told)


@pytest.fixture
def asked() -> Iterator[Asked]:
    found = proxy_for(EgressQuestions())
    yield found
    found.proxy.close()


def request(asked: Asked, port: int, answer: str | None) -> tuple[bytes, Question | None]:
    """A GET to 127.0.0.1:``port`` through the proxy, the question it raised answered with
    ``answer`` (None: no question is expected); the proxy's answer and the question."""
    got: list[bytes] = []
    sender = threading.Thread(
        target=lambda: got.append(
            ask(asked.port, f"GET http://127.0.0.1:{port}/ HTTP/1.1\r\n\r\n".encode())
        )
    )
    sender.start()
    question = None
    if answer is not None:
        question = asked.questions.get(timeout=WAIT_S)
        assert asked.desk.answer(question.id, answer)
    sender.join(WAIT_S)
    assert got, "the request did not end"
    return got[0], question


def test_once_lets_one_connection_through_and_the_next_is_asked(
    asked: Asked,
    upstream: Upstream,  # noqa: F811
) -> None:
    first, question = request(asked, upstream.port, ONCE)
    assert question is not None
    assert (question.how, question.host, question.port) == ("HTTP", "127.0.0.1", upstream.port)
    assert first.endswith(b"UPSTREAM") and len(upstream.connections) == 1
    second, again = request(asked, upstream.port, REFUSE)
    assert again is not None and again.id != question.id
    assert b"403" in second and b"refused by the person" in second
    assert len(upstream.connections) == 1
    third, _ = request(asked, upstream.port, None)  # refused in this command: not asked again
    assert b"403" in third and asked.questions.empty() and len(upstream.connections) == 1
    assert [(d.allowed, d.who, d.why) for d in asked.told] == [
        (True, "person", "allowed once by the person"),
        (False, "person", "refused by the person"),
        (False, "agentcli", "not in [sandbox] network; refused by the person"),
    ]


def test_for_the_thread_lets_later_connections_through_in_that_thread_only(
    asked: Asked,
    upstream: Upstream,  # noqa: F811
) -> None:
    request(asked, upstream.port, THREAD)
    later, none = request(asked, upstream.port, None)
    assert none is None and later.endswith(b"UPSTREAM") and len(upstream.connections) == 2
    other = proxy_for(asked.desk, "t2")  # another thread of the session: asked
    try:
        answer, question = request(other, upstream.port, REFUSE)
        assert question is not None and b"403" in answer
    finally:
        other.proxy.close()
    assert len(upstream.connections) == 2


def test_config_allows_it_in_every_thread_of_the_session(
    asked: Asked,
    upstream: Upstream,  # noqa: F811
) -> None:
    request(asked, upstream.port, CONFIG)
    other = proxy_for(asked.desk, "t2")
    try:
        answer, question = request(other, upstream.port, None)
        assert question is None and answer.endswith(b"UPSTREAM")
    finally:
        other.proxy.close()
    assert other.told[0].why == "added to [sandbox] network by the person"


def test_a_question_whose_command_ends_is_withdrawn_and_refused(
    asked: Asked,
    upstream: Upstream,  # noqa: F811
) -> None:
    sock = socket.create_connection(("127.0.0.1", asked.port), timeout=WAIT_S)
    sock.sendall(f"CONNECT 127.0.0.1:{upstream.port} HTTP/1.1\r\n\r\n".encode())
    question = asked.questions.get(timeout=WAIT_S)
    assert asked.desk.waiting(question.id) == question
    asked.proxy.close()  # the command ended
    sock.close()
    for _ in range(int(WAIT_S / 0.05)):
        if asked.desk.waiting(question.id) is None and asked.told:
            break
        threading.Event().wait(0.05)
    assert asked.desk.waiting(question.id) is None
    assert not asked.desk.answer(question.id, ONCE)  # too late: nothing allowed
    assert [(d.allowed, d.who, d.why) for d in asked.told] == [(False, "agentcli", UNANSWERED)]
    assert upstream.connections == []


def test_nothing_is_looked_up_before_the_person_allows_it(
    asked: Asked, monkeypatch: pytest.MonkeyPatch
) -> None:
    looked: list[str] = []
    real = egress_proxy.resolve
    monkeypatch.setattr(egress_proxy, "resolve", lambda t: looked.append(t.host) or real(t))
    got: list[bytes] = []
    head = b"CONNECT secret-in-a-name.example:443 HTTP/1.1\r\n\r\n"
    sender = threading.Thread(target=lambda: got.append(ask(asked.port, head)))
    sender.start()
    question = asked.questions.get(timeout=WAIT_S)
    assert question.host == "secret-in-a-name.example" and looked == []
    asked.desk.answer(question.id, REFUSE)
    sender.join(WAIT_S)
    assert b"403" in got[0] and looked == []


def test_a_host_longer_than_a_name_is_refused_unasked(asked: Asked) -> None:
    """A host no DNS name could be (the parser refuses it): never a screenful to ask about."""
    host = ".".join(["a" * 60] * 5) + ".example"
    answer = ask(asked.port, f"CONNECT {host}:443 HTTP/1.1\r\n\r\n".encode())
    assert answer.startswith(b"HTTP/1.1 400") and asked.questions.empty() and not asked.told


def test_without_anyone_to_ask_a_host_not_listed_is_refused(upstream: Upstream) -> None:  # noqa: F811
    listener = socket.create_server(("127.0.0.1", 0))
    told: list[Decision] = []
    proxy = EgressProxy(listener, Hosts.parse(["pypi.org"]), False, told.append).start()
    try:
        answer = ask(
            listener.getsockname()[1],
            f"GET http://127.0.0.1:{upstream.port}/ HTTP/1.1\r\n\r\n".encode(),
        )
    finally:
        proxy.close()
    assert b"403" in answer and upstream.connections == []
    assert [(d.allowed, d.who, d.why) for d in told] == [
        (False, "agentcli", "not in [sandbox] network")
    ]


# requests whose host could draw something misleading in the question: each is refused
# unasked (400) or asked about as the plain ASCII host the proxy would connect to
DRAWN = [
    b"CONNECT pypi.org\x1b[2K:443 HTTP/1.1\r\n\r\n",
    b"CONNECT pypi.org\r:443 HTTP/1.1\r\n\r\n",
    "CONNECT руру.org:443 HTTP/1.1\r\n\r\n".encode(),
    "CONNECT pypi.org\u202e:443 HTTP/1.1\r\n\r\n".encode(),
    b"CONNECT pypi.org%2eevil.example:443 HTTP/1.1\r\n\r\n",
    b"CONNECT pypi.org:443@evil.example:443 HTTP/1.1\r\n\r\n",
    b"CONNECT pypi.org\\evil.example:443 HTTP/1.1\r\n\r\n",
    b"GET http://pypi.org\t.evil.example/ HTTP/1.1\r\n\r\n",
    b"GET http://PyPI.ORG.evil.example./ HTTP/1.1\r\n\r\n",
    b"CONNECT xn--pypi-org-with-a-tail.example:443 HTTP/1.1\r\n\r\n",
    b"CONNECT [::ffff:127.0.0.1]:443 HTTP/1.1\r\n\r\n",
    b"CONNECT 0x7f.1:443 HTTP/1.1\r\n\r\n",
]
PLAIN = re.compile(r"[a-z0-9._-]+|[0-9a-f:.]+")


@pytest.mark.parametrize("head", DRAWN)
def test_a_host_is_asked_about_only_as_the_plain_host_connected_to(
    asked: Asked, head: bytes
) -> None:
    got: list[bytes] = []
    sender = threading.Thread(target=lambda: got.append(ask(asked.port, head)))
    sender.start()
    question = None
    while sender.is_alive() and question is None:
        try:
            question = asked.questions.get(timeout=0.1)
        except queue.Empty:
            continue
    if question is not None:
        assert PLAIN.fullmatch(question.host), question
        asked.desk.answer(question.id, REFUSE)
    sender.join(WAIT_S)
    assert got[0].startswith(b"HTTP/1.1 400" if question is None else b"HTTP/1.1 403"), got
    shown = {b"PyPI": "pypi.org.evil.example", b"0x7f": "127.0.0.1", b"::ffff": "127.0.0.1"}
    for marker, host in shown.items():
        if marker in head:
            assert question is not None and question.host == host
