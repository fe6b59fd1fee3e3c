import pytest
from tokenizer import TokenizeError, join, tokenize


def test_plain_words_and_repeated_whitespace():
    assert tokenize("run  --fast\tjob.py ") == ["run", "--fast", "job.py"]


def test_single_and_double_quotes():
    assert tokenize("echo 'hello world' \"and more\"") == [
        "echo",
        "hello world",
        "and more",
    ]


def test_escaped_quote_inside_double_quotes():
    assert tokenize(r'say "she said \"hi\""') == ["say", 'she said "hi"']


def test_backslash_space_outside_quotes():
    assert tokenize(r"open My\ Documents/file.txt") == ["open", "My Documents/file.txt"]


def test_unterminated_quote_raises():
    with pytest.raises(TokenizeError):
        tokenize("echo 'oops")


def test_join_round_trip_simple():
    args = ["cp", "my file.txt", "dest"]
    assert tokenize(join(args)) == args
