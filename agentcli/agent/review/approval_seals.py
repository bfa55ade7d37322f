"""Proof that the graph's own nodes approved a call: what no client of a server can forge.

Any client of a LangGraph server can write every state channel and send any task
(`Command(update=..., goto=Send(...))`). So the tools node does not run a call because it
was sent one: it runs a call that carries a seal made by the review or approve node, an
HMAC over (thread id, the step the tools task runs at, call id, tool name, arguments as
canonical JSON). The step binds the seal to the one tools task the node sent: a task that
LangGraph runs again after a crash runs at the same step and still verifies; a seal copied
into a later Send does not (steps only grow along a thread).

The review's verdicts (the `review` channel, read by the approve node) are sealed for the
approve task's step as well. The same key seals the tools a person allowed for the rest of
a thread (`A`): the names in `allowed_tools` count only with their seal in `allowed_seals`.

The key belongs to the store the threads live in (Store.secret: 32 random bytes in its
`agentcli_secrets` table, made once by whichever process asks first), so every process that
can write the threads seals and checks with it, on any machine: a call parked from one data
folder is decided from another. It never enters the state or the context a client can read
or write, and a LangGraph server's clients never reach its store. What the seals defend
against is therefore someone who can write a thread's state without reading its store (a
server's client); anyone who can read the store can decide its threads anyway.

An installation's former key file (`approval.key` in the data folder, from before the key
moved into the store) still verifies what it sealed, and never seals anything new. A
RunContext without a key (unit tests, reading a thread) uses a key made for this process.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from agentcli.config.settings import data_dir
from agentcli.errors import ConfigError

KEY_FILE = "approval.key"  # the installation's key before it moved into the store
KEY_NAME = "approval key"  # the store's secret (Store.secret)
KEY_BYTES = 32


class KeyStore(Protocol):
    """Where the key lives: threads.store.Store."""

    def secret(self, name: str) -> bytes: ...


NOT_APPROVED = "refused: not approved. This call did not pass agentcli's review; it was not run."
ALTERED_BY = "review changed from outside"  # the approve node did not believe the review
UNSEALED = (ALTERED_BY, NOT_APPROVED)  # what agentcli refuses a decided call for: its seals


class ApprovalKey:
    """Seals with one secret key; checks with it, and with the keys it replaced (`older`)."""

    def __init__(self, secret: bytes, older: Sequence[bytes] = ()) -> None:
        if len(secret) < KEY_BYTES or any(len(key) < KEY_BYTES for key in older):
            raise ValueError("an approval key has at least 32 bytes")
        self._secret = secret
        self._older = tuple(older)

    def __repr__(self) -> str:  # never the secret, in a traceback or a log
        return "ApprovalKey(...)"

    @classmethod
    def of_store(cls, store: KeyStore, folder: Path | None = None) -> ApprovalKey:
        """The key of `store`; the installation's former key file in `folder` (default: the
        data folder), if there is one, still verifies what it sealed."""
        return cls(store.secret(KEY_NAME), [k for k in [_former(folder or data_dir())] if k])

    def seal(self, *parts: Any) -> str:
        return _hmac(self._secret, parts)

    def check(self, seal: Any, *parts: Any) -> bool:
        if not isinstance(seal, str):
            return False
        try:
            return any(
                hmac.compare_digest(seal, _hmac(key, parts)) for key in (self._secret, *self._older)
            )
        except (TypeError, ValueError):  # arguments that are not JSON: never sealed
            return False


def _hmac(secret: bytes, parts: tuple[Any, ...]) -> str:
    return hmac.new(secret, canonical(parts), hashlib.sha256).hexdigest()


def _former(folder: Path) -> bytes | None:
    """The installation's key file from before the key moved into the store, if any (never
    made now). One that others can read, or a damaged one, is refused as it was then."""
    path = folder / KEY_FILE
    try:
        if path.stat().st_mode & 0o077:
            raise ConfigError(f"{path} can be read by others: chmod 600 it, or delete it")
        secret = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(f"cannot read the former approval key {path}: {exc}") from exc
    if len(secret) < KEY_BYTES:
        raise ConfigError(f"the former approval key {path} is damaged: delete it")
    return secret


PROCESS_KEY = ApprovalKey(secrets.token_bytes(KEY_BYTES))


def canonical(value: Any) -> bytes:
    """One byte string per JSON value (keys sorted, no spaces); TypeError if not JSON."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode()


def key_of(context: Any) -> ApprovalKey:
    key = getattr(context, "approval_key", None)
    return key if isinstance(key, ApprovalKey) else PROCESS_KEY


def thread_of(config: Mapping[str, Any]) -> str:
    return str(config.get("configurable", {}).get("thread_id", ""))


def step_of(config: Mapping[str, Any]) -> int:
    """The step of the task this config is for (LangGraph's task metadata)."""
    step = config.get("metadata", {}).get("langgraph_step")
    if not isinstance(step, int):
        raise RuntimeError("a graph node without its step: cannot seal or check approvals")
    return step


def call_parts(
    thread_id: str,
    step: int,
    call: Mapping[str, Any],
    unconfined: bool = False,
    plan: Mapping[str, Any] | None = None,
    undo: str = "",
) -> tuple[Any, ...]:
    """What the seal of a call the tools node may run at `step` of this thread covers: its
    id, tool and arguments; `unconfined`: a person (or a rule they wrote) chose to run it
    outside the sandbox; `plan`: the call is a task of a plan (its run and the results it
    is given: agent/plan/plan_task.py); `undo`: why its group's changes cannot be undone
    (agent/executor.py), said on its result."""
    parts: tuple[Any, ...] = ("call", thread_id, step, call.get("id"), call.get("name"))
    parts = (*parts, call.get("args"))
    parts = (*parts, "unconfined") if unconfined else parts
    parts = (*parts, "undo", undo) if undo else parts
    return (*parts, "plan", plan) if plan is not None else parts


def seal_call(key: ApprovalKey, *where: Any, **how: Any) -> str:
    """The seal of a call: `key` over call_parts(*where, **how)."""
    return key.seal(*call_parts(*where, **how))


def call_sealed(key: ApprovalKey, thread_id: str, step: int, task: Mapping[str, Any]) -> bool:
    """Whether a tools task carries the seal of its own call, for this thread and step, and
    of its `sandbox` ("off" only if that was sealed too), `plan` and `undo`."""
    call = task.get("tool_call")
    if not isinstance(call, Mapping):
        return False
    unconfined = task.get("sandbox") == "off"
    if task.get("sandbox") not in (None, "off"):
        return False
    plan = task.get("plan")
    if plan is not None and not isinstance(plan, Mapping):
        return False
    undo = task.get("undo") or ""
    if not isinstance(undo, str):
        return False
    parts = call_parts(thread_id, step, call, unconfined, plan, undo)
    return key.check(task.get("approval"), *parts)


def seal_review(
    key: ApprovalKey,
    thread_id: str,
    step: int,
    allowed: list[Any],
    asking: list[Any],
    unconfined: list[Any] | None = None,
    **more: Any,
) -> dict[str, Any]:
    """The review's verdicts for the approve task at `step`, sealed: what the policy allowed
    runs whatever the flags of the process that answers (it was decided and audited), and
    `unconfined` (ids of allowed calls a rule runs outside the sandbox) with it; `more`
    (a plan's denied tasks) is sealed with them."""
    pending: dict[str, Any] = {"allowed": allowed, "asking": asking, **more}
    if unconfined:
        pending["unconfined"] = unconfined
    return {**pending, "seal": key.seal("review", thread_id, step, pending)}


def review_sealed(key: ApprovalKey, thread_id: str, step: int, review: Any) -> bool:
    if not isinstance(review, Mapping):
        return False
    pending = {k: v for k, v in review.items() if k != "seal"}
    return key.check(review.get("seal"), "review", thread_id, step, pending)


def seal_tool(key: ApprovalKey, thread_id: str, name: str) -> str:
    """The seal of a tool allowed for the rest of a thread."""
    return key.seal("always", thread_id, name)


def allowed_tools(key: ApprovalKey, thread_id: str, values: Mapping[str, Any]) -> list[str]:
    """The thread's `allowed_tools` that carry their seal: a name a client wrote is not one."""
    seals: Iterable[Any] = values.get("allowed_seals") or []
    valid = [s for s in seals if isinstance(s, str)]
    names = values.get("allowed_tools") or []
    return [
        n
        for n in names
        if isinstance(n, str) and any(key.check(s, "always", thread_id, n) for s in valid)
    ]
