"""Counted nouns in what the tools and agentcli say: `1 line`, `2 lines`, `0 calls`.

Every message that puts a number before a noun says it through `counted`, so none reads
`1 lines` or hedges with `call(s)`. It lives in the tool library, which knows nothing of
agentcli, so that both say it the one way (agentcli imports it; it imports nothing).
"""

from __future__ import annotations

# nouns counted whose plural is not the noun with an `s`
_IRREGULAR = {"entry": "entries", "match": "matches", "summary": "summaries"}


def plural(noun: str, count: int) -> str:
    """`noun` as it goes with `count`: itself for 1, else its plural."""
    if count == 1:
        return noun
    return _IRREGULAR.get(noun, noun + "s")


def counted(count: int, noun: str, grouped: bool = False) -> str:
    """`1 line`, `47 lines`; `grouped` writes the number as `1,204`."""
    number = f"{count:,}" if grouped else str(count)
    return f"{number} {plural(noun, count)}"
