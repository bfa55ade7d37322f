"""The error hierarchy. Raised anywhere in the core, rendered once at the CLI edge."""

from __future__ import annotations


class AgentcliError(Exception):
    """Base class: a message a person can act on, and the exit code it maps to."""

    exit_code = 1


class UsageError(AgentcliError):
    """The command was asked to do something it cannot (bad arguments, wrong state)."""

    exit_code = 2


class ConfigError(UsageError):
    """The configuration (file, environment or flags) is invalid."""


class ThreadNotFound(UsageError):
    """No thread matches the id or prefix given."""


class ThreadBusy(AgentcliError):
    """Another process is driving this thread (its session holds the thread's lock)."""


class ModelError(AgentcliError):
    """The model call failed: authentication, connection, or the API refused it."""


class Interrupted(AgentcliError):
    """The person pressed Ctrl-C: the run stopped at its next step; the thread is kept."""

    exit_code = 130


class RunStopped(AgentcliError):
    """The run stopped on a limit (max_steps, invalid calls); the thread can continue."""
