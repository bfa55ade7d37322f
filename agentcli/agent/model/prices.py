"""Prices of common models from the genai-prices library, for `/cost` without config.

genai-prices ships its price table inside the package; it only fetches newer prices when an
`UpdatePrices` is started, which agentcli never does, so a price lookup never touches the
network. Prices in the config (`[model.prices."NAME"]`) win over the library's.

With a `base_url`, the provider is the one at that URL when the library knows it (DeepSeek's,
Groq's, ...); a URL it does not know (a local server, a proxy) prices by the model's name.
"""

from __future__ import annotations

from decimal import Decimal
from functools import cache


def library_cost(model: str, base_url: str | None, usage: dict[str, int]) -> float | None:
    """USD for `usage` on `model` by genai-prices' bundled table; None if it has no price."""
    found = _lookup(model, base_url)
    if found is None:
        return None
    input_price, output_price = found
    spent = usage.get("input_tokens", 0) * input_price
    return float(spent + usage.get("output_tokens", 0) * output_price) / 1_000_000


@cache
def _lookup(model: str, base_url: str | None) -> tuple[Decimal, Decimal] | None:
    """Per-million-token input and output prices, from a million tokens of each."""
    try:
        import genai_prices
    except ImportError:  # pragma: no cover - a dependency; an install without it has no prices
        return None
    million = genai_prices.Usage(input_tokens=1_000_000, output_tokens=1_000_000)
    for url in [base_url, None] if base_url else [None]:
        try:
            calc = genai_prices.calc_price(million, model, provider_api_url=url)
        except LookupError:
            continue
        return calc.input_price, calc.output_price
    return None
