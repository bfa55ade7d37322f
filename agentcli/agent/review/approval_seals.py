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

The key is 32 random bytes in the data folder (`approval.key`, mode 0600), made once and
read by the CLI's sessions and the server alike, so a task run again by another process
still verifies. It never enters the state or the context a client can read or write. A
RunContext without a key (unit tests, reading a thread) uses a key made for this process.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from agentcli.errors import ConfigError

KEY_FILE = "approval.key"
KEY_BYTES = 32
NOT_APPROVED = "refused: not approved. This call did not pass agentcli's review; it was not run."


class ApprovalKey:
    """Seals and checks approvals with one secret key."""

    def __init__(self, secret: bytes) -> None:
        if len(secret) < KEY_BYTES:
            raise ValueError("an approval key has at least 32 bytes")
        self._secret = secret

    def __repr__(self) -> str:  # never the secret, in a traceback or a log
        return "ApprovalKey(...)"

    @classmethod
    def load(cls, folder: Path) -> ApprovalKey:
        """The key in `folder`, made (0600) on first use.

        A new key is written whole to a file of its own and then linked into place, so a
        process starting at the same moment finds either no key or the whole of one (the
        first link wins; the others read it).
        """
        path = folder / KEY_FILE
        folder.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            _make_key(path)
        try:
            if path.stat().st_mode & 0o077:
                raise ConfigError(f"{path} can be read by others: chmod 600 it")
            secret = path.read_bytes()
        except OSError as exc:
            raise ConfigError(f"cannot read the approval key {path}: {exc}") from exc
        if len(secret) < KEY_BYTES:
            raise ConfigError(f"the approval key {path} is damaged: remove it")
        return cls(secret)

    def seal(self, *parts: Any) -> str:
        return hmac.new(self._secret, canonical(parts), hashlib.sha256).hexdigest()

    def check(self, seal: Any, *parts: Any) -> bool:
        if not isinstance(seal, str):
            return False
        try:
            expected = self.seal(*parts)
        except (TypeError, ValueError):  # arguments that are not JSON: never sealed
            return False
        return hmac.compare_digest(seal, expected)


def _make_key(path: Path) -> None:
    draft = path.with_name(f".{KEY_FILE}.{secrets.token_hex(8)}")
    try:
        fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(secrets.token_bytes(KEY_BYTES))
            out.flush()
            os.fsync(out.fileno())
        try:
            os.link(draft, path)
        except FileExistsError:  # another process made the key first: theirs counts
            pass
    except OSError as exc:
        raise ConfigError(f"cannot make the approval key {path}: {exc}") from exc
    finally:
        draft.unlink(missing_ok=True)


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
    valid = {s for s in seals if isinstance(s, str)}
    names = values.get("allowed_tools") or []
    return [n for n in names if isinstance(n, str) and seal_tool(key, thread_id, n) in valid]
