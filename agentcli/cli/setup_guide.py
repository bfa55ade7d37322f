"""The first run: what to do when no model server is configured, said before anything is drawn.

A fresh machine has no API key and no base URL, so the first model call would fail. Whether
that is so is known from the settings alone (no network, no LangChain), so `chat`, `resume`
and `run` check it before they draw a thread or a prompt, and `doctor` prints the same guide.
"""

from __future__ import annotations

from agentcli.config import Settings
from agentcli.errors import SetupNeeded

# The OpenAI-compatible endpoints of the common local servers, at their default ports.
LOCAL_SERVERS = (
    ("Ollama", "http://localhost:11434/v1"),
    ("llama.cpp's llama-server", "http://localhost:8080/v1"),
    ("vLLM", "http://localhost:8000/v1"),
    ("LM Studio", "http://localhost:1234/v1"),
)

# what to do, as `doctor` says it (it is the check already: it does not send you to itself)
STEPS = "\n".join(
    [
        "no model server is set up: agentcli needs an API key or a --base-url.",
        "",
        "  With OpenAI:  export OPENAI_API_KEY=sk-...   (or api_key in the config file)",
        "  With a model server on this machine, pass its OpenAI-compatible URL and a model:",
        *(f"    {name + ':':<26} --base-url {url}" for name, url in LOCAL_SERVERS),
        "    e.g.  agentcli chat --base-url http://localhost:11434/v1 --model llama3.1",
        "  (or OPENAI_BASE_URL, or base_url and name under [model] in the config file)",
    ]
)
# as every other command says it: then how to check
GUIDE = STEPS + "\n\nThen check the set-up with: agentcli doctor"


def needs_setup(settings: Settings) -> bool:
    """True when the default endpoint (OpenAI's) would be called without a key."""
    return not settings.api_key and not settings.base_url


def check_setup(settings: Settings) -> None:
    """SetupNeeded (exit 2, the guide) when no model server is configured."""
    if needs_setup(settings):
        raise SetupNeeded(GUIDE)
