import pytest
from dedup import dedupe_csv


def test_removes_exact_duplicates_keeping_first():
    text = "id,email\n1,ann@example.com\n2,bob@example.com\n3,ann@example.com\n"
    assert (
        dedupe_csv(text, "email") == "id,email\n1,ann@example.com\n2,bob@example.com\n"
    )


def test_key_ignores_case_and_surrounding_spaces():
    text = (
        "name,email\nAnn,ann@example.com\nANN,  Ann@Example.COM \nBob,bob@example.com\n"
    )
    assert (
        dedupe_csv(text, "email")
        == "name,email\nAnn,ann@example.com\nBob,bob@example.com\n"
    )


def test_composite_key():
    text = "city,day,temp\nOslo,mon,3\nOslo,tue,4\nOslo,mon,5\nRome,mon,15\n"
    assert (
        dedupe_csv(text, ["city", "day"])
        == "city,day,temp\nOslo,mon,3\nOslo,tue,4\nRome,mon,15\n"
    )


def test_unknown_column_raises():
    with pytest.raises(ValueError):
        dedupe_csv("a,b\n1,2\n", "c")


def test_empty_input():
    assert dedupe_csv("", "email") == ""
