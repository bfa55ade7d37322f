"""Python's cyclic garbage collector in a command that starts big and lives briefly.

Importing LangChain, LangGraph and the OpenAI client creates a great many long-lived objects.
While they load, the collector walks them again and again, and at exit the interpreter's
last collections walk them once more, freeing nothing.
So agentcli starts with the collector off, hands what start-up made to `gc.freeze()` (the
collector then never looks at it) and turns it back on once the session is ready, and
freezes again on the way out. bench/run.py measures the difference (bench/README.md, issue 8).
"""

from __future__ import annotations

import gc


def starting() -> None:
    """At the entry point: no collections while the libraries load."""
    gc.disable()


def ready() -> None:
    """Start-up is over: keep what it made out of every later collection, collect again.
    Calling it again is harmless (and cheap: the collector is on by then)."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()


def ending() -> None:
    """The process is about to exit: its objects die with it, unwalked."""
    gc.freeze()
