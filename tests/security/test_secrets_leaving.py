"""Secrets leaving the process (issue 25, item 5): a command that prints a secret it found
(in a file, or agentcli's environment as root) in an encoded form, and everything that
leaves agentcli other than the model's requests: LangSmith traces, the notify document,
threads export and show, audit, the --debug traceback.

The secrets live in files of the tool's home (~/.secrets/NAME, no newline at the end) and
in agentcli's environment; each payload is a shell command that prints them some way.
What leaves is checked by tests/helpers/leaks.py, which decodes what it finds (base64 at
every offset, hex, percent and JSON escapes, line breaks taken out): none of it may hold
a secret. Payloads that agentcli does not promise to catch are in NOT_PROMISED, each
shown to get through (a strict xfail), so the list of what is caught stays honest.
"""

from __future__ import annotations

import base64
import gzip
import json
import shlex
from pathlib import Path

import pytest

from tests.e2e.conftest import Agent
from tests.helpers.leaks import exposed
from tests.helpers.scripted_server import text, tool_calls
from tests.helpers.stored import data_bytes

KEY = "sk-test-Zq8vW3kP1xN7mR4tY6uB9cE2"
SECRETS = {  # name in agentcli's environment: value (also in ~/.secrets/<file>)
    "OPENAI_API_KEY": KEY,
    "SERVICE_PASSWORD": 'p@ss/w0rd "q" & more+=x?',  # reserved URL and JSON characters
    "VAULT_TOKEN": "tøkén-Ωmega-2718-ünïcode",  # non-ASCII: JSON \\u escapes, UTF-8 hex
}
FILES = {"key": KEY, "password": SECRETS["SERVICE_PASSWORD"], "vault": SECRETS["VAULT_TOKEN"]}
VALUES = list(SECRETS.values())


def _py(expression: str) -> str:
    """A Python one-liner printing ``expression`` of the secret file's text ``s``."""
    code = "import base64,json,re,sys,urllib.parse as u; s=open(sys.argv[1]).read(); "
    code += f"print({expression})"
    return f'python3 -c {shlex.quote(code)} "$f"'


# Each prints every secret file ($f), one way; all are caught.
EACH = "for f in ~/.secrets/*; do {}; echo; done"
PAYLOADS = [
    'cat "$f"',
    'cat "$f" >&2',  # stderr
    'printf "%s\\n" "$(head -c 10 "$f")" "$(tail -c +11 "$f")"',  # cut into two lines
    _py('"\\n".join(s[i : i + 5] for i in range(0, len(s), 5))'),  # cut every 5 characters
    'cat "$f" | sed "s/$/\\r/" ; printf "\\r\\n"',
    'base64 "$f"',  # offset 0, padded
    'base64 "$f" | tr -d =',  # no padding
    '{ printf a; cat "$f"; } | base64',  # offset 1
    '{ printf ab; cat "$f"; } | base64',  # offset 2
    '{ printf abc; cat "$f"; printf xy; } | base64 -w0',
    '{ head -c 1001 /dev/urandom; cat "$f"; head -c 300 /dev/urandom; } | base64',  # wrapped at 76
    '{ head -c 1000 /dev/urandom; cat "$f"; } | base64 -w 7',
    '{ head -c 999 /dev/zero; cat "$f"; } | openssl base64',  # wrapped at 64
    'base64 "$f" | tr "+/" "-_"',  # URL-safe
    '{ printf ab; cat "$f"; } | base64 -w0 | tr "+/" "-_" | tr -d =',
    _py('base64.urlsafe_b64encode(b"q" + s.encode()).decode()'),
    'xxd -p "$f"',  # hex, lower
    'xxd -p "$f" | tr a-f A-F',  # upper
    '{ head -c 77 /dev/urandom; cat "$f"; } | xxd -p',  # wrapped at 60, odd offset
    'od -An -tx1 -v "$f" | tr -d " \\n"',
    'od -An -tx1 -v "$f" | tr -d " \\n" | sed "s/../%&/g"',  # every byte percent-encoded
    _py('u.quote(s, safe="")'),  # the reserved bytes percent-encoded
    _py('re.sub("%..", lambda m: m[0].lower(), u.quote(s, safe=""))'),  # ... as %2f
    _py('json.dumps({"v": s})'),
    _py("json.dumps(s, ensure_ascii=False)"),
    'printf "{\\"token\\": \\"%s\\"}" "$(base64 -w0 "$f")"',  # base64 inside JSON
    'cat "$f" > copy.txt; base64 copy.txt > copy.b64; cat copy.b64',
]
# Printed in a form agentcli does not promise to catch, each with how to undo it: each
# gets the secrets through (the undone result holds them).
NOT_PROMISED = {
    'rev "$f"': lambda got: got[::-1],
    'cat "$f" | tr a-z A-Z': lambda got: got,  # case changed: the lower-case secret is back
    'base64 -w0 "$f" | base64 -w0': lambda got: _b64_lines(_b64_lines(got)),  # twice
    'gzip -c "$f" | base64 -w0': lambda got: "\n".join(
        gzip.decompress(base64.b64decode(line)).decode() for line in _lines(got)
    ),
    'sed "s/./& /g" "$f"': lambda got: got.replace(" ", ""),  # cut by spaces
    'od -An -tx1 -v "$f" | tr -d "\\n"': lambda got: got.replace(" ", ""),  # hex, spaced
}


def _lines(got: str) -> list[str]:
    return [line for line in got.splitlines() if line and not line.startswith("exit code")]


def _b64_lines(got: str) -> str:
    return "\n".join(base64.b64decode(line).decode() for line in _lines(got))


def _prepare(agent: Agent) -> None:
    agent.env.update(SECRETS)
    folder = Path(agent.env["HOME"]) / ".secrets"
    folder.mkdir(parents=True, exist_ok=True)
    for name, value in FILES.items():
        (folder / name).write_bytes(value.encode())


def _data_bytes(agent: Agent) -> bytes:
    folders = [Path(agent.env["XDG_DATA_HOME"]), Path(agent.env["XDG_CONFIG_HOME"])]
    return data_bytes(*folders)  # the database's values decompressed too


def _run_each(agent: Agent, payload: str) -> tuple[str, bytes]:
    """The payload run once per secret file, approved; the result the model got and
    everything that left or was kept."""
    agent.server.push(tool_calls(("shell", {"command": EACH.format(payload)})), text("done"))
    result = agent.run("run", "go", "-y", "-o", "jsonl")
    assert result.returncode == 0, result.stderr
    assert len(agent.server.requests) == 2
    got = agent.server.requests[1]["messages"][-1]["content"]
    assert "exit code 0" in got, got
    left = json.dumps(agent.server.requests, ensure_ascii=False) + result.stdout + result.stderr
    return got, left.encode() + _data_bytes(agent)


def test_no_encoded_copy_of_a_secret_leaves(agent: Agent) -> None:
    """Every payload, as the calls of one turn (two runs: an agentcli start costs more
    than a payload), each result checked on its own and all that left checked whole."""
    _prepare(agent)
    half = (len(PAYLOADS) + 1) // 2
    for batch in (PAYLOADS[:half], PAYLOADS[half:]):
        since = len(agent.server.requests)
        calls = [("shell", {"command": EACH.format(payload)}) for payload in batch]
        agent.server.push(tool_calls(*calls), text("done"))
        result = agent.run("run", "go", "-y", "-o", "jsonl")
        assert result.returncode == 0, result.stderr
        assert len(agent.server.requests) == since + 2
        messages = agent.server.requests[-1]["messages"]
        results = [m["content"] for m in messages if m["role"] == "tool"][-len(batch) :]
        assert len(results) == len(batch)
        for payload, got in zip(batch, results, strict=True):
            assert "exit code 0" in got, (payload, got)
            assert exposed(got.encode(), VALUES) == [], payload
            assert got.count("[redacted ") >= len(FILES), (payload, got)  # each was replaced
        requests = json.dumps(agent.server.requests[since:], ensure_ascii=False)
        left = (requests + result.stdout + result.stderr).encode() + _data_bytes(agent)
        assert exposed(left, VALUES) == []


@pytest.mark.parametrize("payload", list(NOT_PROMISED))
@pytest.mark.xfail(strict=True, reason="not promised (docs/guarantees.md): it gets through")
def test_what_is_not_promised_gets_through(agent: Agent, payload: str) -> None:
    """The limits, shown: the result the model got, undone as the payload's form says,
    holds a secret. If one starts being caught, move it to PAYLOADS."""
    _prepare(agent)
    got, _ = _run_each(agent, payload)
    undone = NOT_PROMISED[payload](got)
    assert exposed(undone, VALUES + [KEY.upper()]) == []
