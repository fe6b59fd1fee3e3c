from slugify import slugify, unique_slug


def test_basic_title():
    assert slugify("Hello World") == "hello-world"


def test_punctuation_and_spaces_collapse():
    assert slugify("  Hello,   World!! -- 2024 edition ") == "hello-world-2024-edition"


def test_custom_separator():
    assert slugify("Top 10 Tips", separator="_") == "top_10_tips"


def test_max_length_has_no_trailing_separator():
    assert slugify("release notes for version two", max_length=14) == "release-notes"


def test_unique_slug_adds_counter():
    assert (
        unique_slug("Hello World", {"hello-world", "hello-world-2"}) == "hello-world-3"
    )
