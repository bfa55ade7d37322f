"""The error hierarchy and the exit codes. Raised anywhere in the core, rendered once at the
CLI edge, where `exit_code_for` maps each error to its code."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """The contract's exit codes (docs/usage.md, "Scripts")."""

    OK = 0
    ERROR = 1  # a runtime error: model, API, tools, a limit
    USAGE = 2  # a usage or configuration error
    AWAITING_REVIEW = 3  # a run parked: calls wait for a decision
    INTERRUPTED = 130  # Ctrl-C


class AgentcliError(Exception):
    """Base class: a message a person can act on."""

    @property
    def lines(self) -> list[str]:
        """What the CLI edge prints, one `agentcli: error:` line each."""
        return [str(self)]


class UsageError(AgentcliError):
    """The command was asked to do something it cannot (bad arguments, wrong state)."""


class ConfigError(UsageError):
    """The configuration (file, environment or flags) is invalid: every problem found, each
    a line of its own (`str()` joins them with newlines)."""

    def __init__(self, problem: str, *more: str) -> None:
        self.problems = [problem, *more]
        super().__init__("\n".join(self.problems))

    @property
    def lines(self) -> list[str]:
        return list(self.problems)


class ThreadNotFound(UsageError):
    """No thread matches the id or prefix given."""


class ThreadBusy(AgentcliError):
    """Another process is driving this thread (its session holds the thread's lock)."""


class ModelError(AgentcliError):
    """The model call failed: authentication, connection, or the API refused it."""


class Interrupted(AgentcliError):
    """The person pressed Ctrl-C: the run stopped at its next step; the thread is kept."""


class AnswerStopped(Interrupted):
    """Ctrl-C while the answer streamed: the text so far is kept, the thread is idle."""


class RunStopped(AgentcliError):
    """The run stopped on a limit (max_steps, invalid calls); the thread can continue."""


class HookBlocked(AgentcliError):
    """One of the person's hooks kept a message from being sent (UserPromptSubmit)."""


class SnapshotError(AgentcliError):
    """A snapshot of the workspace could not be taken, read or restored (undo)."""


class SetupNeeded(UsageError):
    """No model server is configured (no API key, no base URL): the CLI prints the guide."""

    def __init__(self, guide: str) -> None:
        super().__init__(guide)
        self.guide = guide

    @property
    def lines(self) -> list[str]:
        return self.guide.splitlines()


EXIT_CODES: dict[type[AgentcliError], ExitCode] = {
    UsageError: ExitCode.USAGE,  # with ConfigError, ThreadNotFound, SetupNeeded
    Interrupted: ExitCode.INTERRUPTED,
    AgentcliError: ExitCode.ERROR,  # ModelError, ThreadBusy, RunStopped, SnapshotError, HookBlocked
}


def exit_code_for(exc: BaseException) -> ExitCode:
    """The exit code an error ends the command with: its nearest class in EXIT_CODES."""
    for cls in type(exc).__mro__:
        if cls in EXIT_CODES:
            return EXIT_CODES[cls]
    return ExitCode.ERROR  # not ours: a bug, still one line and exit 1
