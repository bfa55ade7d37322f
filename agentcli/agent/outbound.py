"""What leaves the process passes the session's redactor, as what is stored does.

`guard_outbound(redactor)` is called once a session's redactor is built (a local session,
the server). It makes the redactor the process's (`current`: the --debug traceback, the
notify document and exports use it) and, when LangSmith tracing is on (LANGSMITH_TRACING /
LANGCHAIN_TRACING_V2, read by langsmith itself), makes every trace pass it: the process's
LangSmith client, which each LangChain tracer takes, is replaced by one whose anonymizer
redacts every run's inputs, outputs, error and metadata before they are queued for
sending. Tool output is traced as the tool returned it, before the tools node redacts its
messages: without this the tracing endpoint got the key the model never saw. Log records
(any logger, any handler: the server's log, a library's warning) are made redacted too.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from agentcli_tools.redaction import Redactor, environment_secrets

from agentcli.agent.secrets import MODEL_KEY_VARIABLE, session_redactor
from agentcli.config import Settings

_current: Redactor | None = None
_tracing_guarded = False


def guard_outbound(redactor: Redactor) -> None:
    global _current, _tracing_guarded
    if _current is None:
        _redact_log_records()
    _current = redactor
    if _tracing_guarded or not _tracing_on():
        return
    from langsmith import Client
    from langsmith import configure as configure_langsmith

    configure_langsmith(client=Client(anonymizer=_anonymize))
    _tracing_guarded = True


def settings_redactor(settings: Settings) -> Redactor:
    """The redactor of a session with these settings, made the process's: for commands
    that print stored threads (export, show, audit) or send documents (notify)."""
    redactor = session_redactor(settings)
    guard_outbound(redactor)
    return redactor


def current() -> Redactor:
    """The latest session's redactor; before any session, one of the environment's
    credentials and the model key's variable (what an early error may quote)."""
    if _current is not None:
        return _current
    secrets = environment_secrets(os.environ)
    if os.environ.get(MODEL_KEY_VARIABLE):
        secrets.append((MODEL_KEY_VARIABLE, os.environ[MODEL_KEY_VARIABLE]))
    return Redactor(secrets)


def _redact_log_records() -> None:
    """Every log record made from now on (any logger: the server's, a library's) carries
    its message and traceback as redacted text, whichever handler writes it where."""
    make = logging.getLogRecordFactory()

    def redacted_record(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = make(*args, **kwargs)
        redact = current()
        try:
            message = record.getMessage()
        except Exception:  # a bad format: logging would print msg and args raw; not so
            message = f"{record.msg} {record.args}"
        record.msg, record.args = redact(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return record

    logging.setLogRecordFactory(redacted_record)


def _anonymize(data: Any) -> Any:
    """A run's inputs, outputs, error or metadata (JSON data), every string redacted, keys
    included. The latest redactor: sessions of one process share the client."""
    return current().value(data)


TRACING_VARIABLES = (
    "LANGSMITH_TRACING",
    "LANGSMITH_TRACING_V2",
    "LANGCHAIN_TRACING_V2",
    "LANGCHAIN_TRACING",
)


def _tracing_on() -> bool:
    """LangSmith's own answer, asked only when a variable could turn tracing on: importing
    langsmith costs quick commands (`threads list`) some 100 ms."""
    if not any(os.environ.get(name) for name in TRACING_VARIABLES):
        return False
    from langsmith import utils

    return bool(utils.tracing_is_enabled())
