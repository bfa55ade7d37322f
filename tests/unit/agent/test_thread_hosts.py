"""The hosts a person allowed for a thread at an egress question, as its state keeps them:
only an entry sealed for this thread, host and port counts; what a client of a server
writes into `allowed_hosts` (unsealed, sealed for another thread or port, or sealed as a
tool rule) allows nothing."""

from __future__ import annotations

import os

from agentcli.agent.review.approval_seals import allowed_hosts, host_entry, seal_host, seal_tool
from agentcli.threads.store_key import ApprovalKey

KEY = ApprovalKey(os.urandom(32))


def test_only_the_sealed_host_and_port_of_this_thread_counts() -> None:
    entry = host_entry("example.org", 443)
    sealed = seal_host(KEY, "t1", "example.org", 443)
    values = {"allowed_hosts": [entry], "allowed_seals": [sealed]}
    assert allowed_hosts(KEY, "t1", values) == {("example.org", 443)}
    assert allowed_hosts(KEY, "t2", values) == set()  # another thread
    assert allowed_hosts(ApprovalKey(os.urandom(32)), "t1", values) == set()  # another key


def test_forged_entries_allow_nothing() -> None:
    sealed = seal_host(KEY, "t1", "example.org", 443)
    forged = [
        host_entry("example.org", 444),  # another port, the seal of 443 beside it
        host_entry("evil.example", 443),
        '["example.org", "443"]',  # the port as text
        '["example.org", 443.0]',
        '["example.org", true]',
        "example.org:443",
        '["example.org"]',
        "[",
    ]
    values = {"allowed_hosts": forged, "allowed_seals": [sealed, "x", 7]}
    assert allowed_hosts(KEY, "t1", values) == set()
    as_tool = {
        "allowed_hosts": [host_entry("example.org", 443)],
        "allowed_seals": [seal_tool(KEY, "t1", host_entry("example.org", 443))],
    }
    assert allowed_hosts(KEY, "t1", as_tool) == set()  # `A`'s seal is not an egress seal
    assert allowed_hosts(KEY, "t1", {"allowed_hosts": None, "allowed_seals": None}) == set()
