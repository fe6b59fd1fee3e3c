import pytest
from tokenizer import TokenizeError, join, tokenize


def test_escaped_backslash_before_closing_quote():
    assert tokenize(r'copy "C:\\" "D:\\backup\\"') == ["copy", "C:\\", "D:\\backup\\"]


def test_backslash_before_ordinary_character_in_double_quotes_is_kept():
    assert tokenize(r'printf "a\nb" "tab\there"') == ["printf", r"a\nb", r"tab\there"]


def test_escaped_backslash_then_letter():
    assert tokenize(r'"a\\nb"') == [r"a\nb"]


def test_single_quotes_keep_backslashes():
    assert tokenize(r"grep 'a\b' 'end\'") == ["grep", r"a\b", "end\\"]


def test_empty_quoted_arguments_are_kept():
    assert tokenize("cmd \"\" '' x") == ["cmd", "", "", "x"]
    assert tokenize('""') == [""]


def test_adjacent_quoted_and_unquoted_parts():
    assert tokenize('--name="My App" a"b c"d') == ["--name=My App", "ab cd"]


def test_trailing_backslash_raises():
    with pytest.raises(TokenizeError):
        tokenize("echo oops\\")


def test_join_round_trip_with_awkward_arguments():
    args = ["", "it's", 'say "hi"', "C:\\dir\\", "a b"]
    assert tokenize(join(args)) == args
