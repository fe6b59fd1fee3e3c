"""Inspect AI without network: its token counter gets four characters a token.

Inspect counts tokens with tiktoken's `o200k_base`, which tiktoken downloads on first use; offline
the download fails and Inspect ends its run with status "error" after the samples it finished.
A token per four characters is cheaper than real tokenising: in Inspect's favour for CPU, and
it changes no byte of a log beyond the token counts.
"""

from __future__ import annotations

from typing import Any


class _FourCharacterTokens:
    def encode(self, text: str, **_: Any) -> list[int]:
        return [0] * (len(text) // 4 + 1)


def count_tokens_offline() -> None:
    """Make tiktoken's `get_encoding` return the four-characters-a-token counter (call before a run)."""
    import tiktoken

    tiktoken.get_encoding = lambda name: _FourCharacterTokens()  # type: ignore[assignment,return-value]
