"""The live adapters' options: validated by their model, every refusal naming the option."""

from __future__ import annotations

import pytest

from aeh.adapters._chat import ChatOptions
from aeh.errors import ConfigError


def test_command_line_strings_become_the_declared_types() -> None:
    opts = ChatOptions.parse("react", {"retries": "5", "timeout_s": "2.5", "probe_tools": "yes"})
    assert (opts.retries, opts.timeout_s, opts.probe_tools) == (5, 2.5, True)


def test_a_flag_string_other_than_yes_is_no() -> None:
    assert ChatOptions.parse("react", {"offer_decline_tool": "off"}).offer_decline_tool is False


def test_none_leaves_the_default() -> None:
    assert ChatOptions.parse("react", {"retries": None}).retries == 3


@pytest.mark.parametrize(("option", "value"), [("retries", -1), ("timeout_s", 0), ("max_turns", 0),
                                               ("temperature", "warm")])
def test_an_invalid_value_is_refused_naming_the_option(option: str, value: object) -> None:
    with pytest.raises(ConfigError, match=rf"bad react adapter option: {option}="):
        ChatOptions.parse("react", {option: value})


def test_an_unknown_option_is_refused_with_the_known_ones() -> None:
    with pytest.raises(ConfigError, match="unknown single_shot adapter option.*colour — known: api_key"):
        ChatOptions.parse("single_shot", {"colour": "red"})
