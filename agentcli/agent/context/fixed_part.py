"""The fixed part of every request, the system prompt and the tools' schemas, fitted to the
model's context window.

With all eight built-in tools described in full, the fixed part is about 1,300 tokens: most
of a 2,048-token window before the person says anything, and compaction cannot get a
request under such a window. So when the window is known, each request offers what fits:

1. every tool, described in full, if that fits the allowance (`Budget.fixed_tokens`: what
   the window leaves once the answer's reserve, a summary and the recent messages kept
   word for word have their share);
2. else every tool, tersely: the description's first sentence, no per-argument help, and
   an optional argument written as its type (`terse`);
3. else the core tools (`[tools] core`) first, then the others in their order, each added
   while the total fits; the rest are left out, and said to be (`Offer.left_out`).

When not even the system prompt and the first of these tools fit, `Offer.fits` is False:
agentcli refuses to send (`too_small`), in one line that says what to change.

`[tools] descriptions = "full"` or `"terse"` forces a form ("auto", the default, chooses as
above). With no window known, everything is offered in full: nothing says it must shrink.
The thread's tools are unchanged: a call to a tool left out is still reviewed and run.

Counting is paid for only where a count decides something: loading the tokenizer costs more
CPU than the rest of a turn (token_count.py). A token is at least one UTF-8 byte, so an
offer whose bytes fit the allowance fits without counting, and an offer's own counts are
made when first read (the chat header, `doctor`, an estimate against a known window).
"""

from __future__ import annotations

import copy
import functools
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentcli.agent.model.token_count import (
    PER_MESSAGE,
    text_bytes,
    text_tokens,
    tools_bytes,
    tools_tokens,
)

CORE = ("read_file", "list_dir", "edit_file", "shell")  # [tools] core's default
_SENTENCE = re.compile(r"(?<=[.!?])\s")


def terse(schema: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI tool schema, shortened: the description's first sentence, no argument
    descriptions, and `anyOf [T, null]` with a null default (an optional argument) as T."""
    short = copy.deepcopy(schema)
    function = short["function"]
    description = function.get("description") or ""
    function["description"] = _SENTENCE.split(description.strip(), maxsplit=1)[0]
    parameters = function.get("parameters") or {}
    for prop in (parameters.get("properties") or {}).values():
        if not isinstance(prop, dict):
            continue
        prop.pop("description", None)
        prop.pop("title", None)
        options = prop.get("anyOf")
        if prop.get("default", 0) is None:
            prop.pop("default")
        if isinstance(options, list):
            kept = [o for o in options if o != {"type": "null"}]
            if len(kept) == 1 and isinstance(kept[0], dict):
                del prop["anyOf"]
                prop.update(kept[0])
    return short


@dataclass(frozen=True)
class Offer:
    """What one request offers the model, and what that costs in tokens."""

    schemas: list[dict[str, Any]]  # the tools offered, in the form sent
    left_out: list[str]  # the tools not offered, for want of room
    terse: bool
    counted: Callable[[], tuple[int, int]]  # prompt_tokens and tools_tokens, counted
    allowance: int | None  # the most the fixed part may take (None: the window is unknown)
    window: int | None
    fits: bool = True
    minimum: int = 0  # the smallest fixed part possible: the prompt and the first tool, terse
    names: list[str] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "names", [s["function"]["name"] for s in self.schemas])

    @functools.cached_property
    def _counts(self) -> tuple[int, int]:
        return self.counted()

    @property
    def prompt_tokens(self) -> int:
        """The system prompt (in text mode, with the tools described)."""
        return self._counts[0]

    @property
    def tools_tokens(self) -> int:
        """The tools' schemas, as sent (0 in text mode: they are in the prompt)."""
        return self._counts[1]

    @property
    def fixed(self) -> int:
        return self.prompt_tokens + self.tools_tokens

    def summary(self, total: int) -> str:
        """One line: the fixed part against the window, and what was left out."""
        form = "terse" if self.terse else "full"
        count = f"{len(self.schemas)} of {total}" if self.left_out else f"{len(self.schemas)}"
        parts = f"fixed part {self.fixed:,} tokens ({count} tools, {form} descriptions)"
        if self.window:
            parts += f" of a {self.window:,}-token window"
        else:
            parts += "; context window unknown (set [model] context_window)"
        if self.left_out:
            parts += f"; left out to fit: {', '.join(self.left_out)}"
        return parts

    def too_small(self) -> str:
        """The one line said when not even the minimum fits."""
        return (
            f"the context window of {self.window:,} tokens cannot hold agentcli's fixed part"
            f" (at least {self.minimum:,} tokens: the system prompt and one tool) with room"
            " for a conversation: start the model server with a larger context (llama-server"
            " -c, llama_cpp.server --n_ctx, Ollama num_ctx) and set [model] context_window to"
            " match"
        )


def _described(prompt: str, schemas: Sequence[dict[str, Any]]) -> str:
    from agentcli.agent.text_calls.prompt import describe

    return prompt + "\n\n" + describe(schemas)


def offer(
    prompt: str,
    schemas: Sequence[dict[str, Any]],
    *,
    allowance: int | None,
    window: int | None,
    core: Sequence[str] = CORE,
    descriptions: str = "auto",
    textual: bool = False,
) -> Offer:
    """The tools one request offers and its fixed cost (see the module's docstring)."""
    full = list(schemas)
    short = [terse(s) for s in full]

    def fits(chosen: Sequence[dict[str, Any]]) -> bool:
        assert allowance is not None  # the bound first: counting only where it cannot tell
        bounds = (True, False)
        return any(sum(_counts(prompt, chosen, textual, bound)) <= allowance for bound in bounds)

    def made(chosen: list[dict[str, Any]], is_terse: bool, **more: Any) -> Offer:
        names = {s["function"]["name"] for s in chosen}
        out = [s["function"]["name"] for s in full if s["function"]["name"] not in names]
        counted = functools.partial(_counts, prompt, chosen, textual)
        return Offer(chosen, out, is_terse, counted, allowance, window, **more)

    forms = {"full": [(full, False)], "terse": [(short, True)]}
    for whole, is_terse in forms.get(descriptions, [(full, False), (short, True)]):
        if allowance is None or not whole or fits(whole):
            return made(whole, is_terse)
    assert allowance is not None
    is_terse = descriptions != "full"
    pool = short if is_terse else full
    ranked = sorted(pool, key=lambda s: _rank(s["function"]["name"], core))
    chosen: list[dict[str, Any]] = []
    for schema in ranked:
        if fits([*chosen, schema]):
            chosen.append(schema)
    chosen.sort(key=pool.index)  # offered in their usual order
    minimum = sum(_counts(prompt, ranked[:1], textual))
    return made(chosen, is_terse, fits=bool(chosen), minimum=minimum)


def _counts(
    prompt: str, chosen: Sequence[dict[str, Any]], textual: bool, bound: bool = False
) -> tuple[int, int]:
    """The prompt's tokens and the schemas' tokens, as one request sends them; with `bound`,
    a bound no count exceeds, had without the tokenizer (a token is at least one byte)."""
    text, tools = (text_bytes, tools_bytes) if bound else (text_tokens, tools_tokens)
    if textual:
        return text(_described(prompt, chosen) if chosen else prompt) + PER_MESSAGE, 0
    return text(prompt) + PER_MESSAGE, tools(chosen) if chosen else 0


def _rank(name: str, core: Sequence[str]) -> int:
    return core.index(name) if name in core else len(core)


def schema_of(tool: Any) -> dict[str, Any]:
    """A tool's OpenAI schema (what `bind_tools` sends), as a plain dict."""
    from langchain_core.utils.function_calling import convert_to_openai_tool

    return json.loads(json.dumps(convert_to_openai_tool(tool), default=str))
