"""The one place that cuts long tool results down to size, saying what was cut."""

from __future__ import annotations

from typing import Literal


def cap_output(
    text: str,
    limit: int,
    *,
    keep: Literal["head", "ends"] = "head",
    hint: str = "",
    already_cut: int = 0,
) -> str:
    """Return ``text`` unchanged if it fits in ``limit`` characters, else a cut copy with a notice.

    The result, notice included, is at most ``limit`` characters (for any sane limit).
    ``keep="head"`` keeps the start; ``keep="ends"`` keeps the start and the end and cuts the
    middle. ``already_cut`` counts characters the caller dropped before (e.g. a stream it did not
    keep), so the notice reports the true amount. ``hint`` tells the reader how to see more.
    """
    if len(text) <= limit and not already_cut:
        return text
    total = len(text) + already_cut
    suffix = f"; {hint}" if hint else ""

    def notice(cut: int) -> str:
        return f"[... {cut} of {total} characters cut{suffix} ...]"

    budget = max(limit - len(notice(total)) - 2, 0)
    budget = min(budget, len(text))
    cut = total - budget
    if keep == "head":
        return f"{text[:budget]}\n{notice(cut)}"
    head = budget - budget // 2
    tail = text[len(text) - budget // 2 :] if budget // 2 else ""
    return f"{text[:head]}\n{notice(cut)}\n{tail}"
