"""agentcli: a terminal agent that calls tools only with a person's say-so."""

__version__ = "0.1.0"
