import csv
import io

from dedup import dedupe_csv


def _rows(text):
    return list(csv.reader(io.StringIO(text, newline="")))


def test_quoted_comma_in_other_column_does_not_shift_key():
    text = 'name,email\n"Smith, John",john@example.com\n"Smith, Jane",jane@example.com\nJohn Smith,JOHN@example.com\n'
    assert (
        dedupe_csv(text, "email")
        == 'name,email\n"Smith, John",john@example.com\n"Smith, Jane",jane@example.com\n'
    )


def test_quoted_comma_inside_key_column():
    text = (
        'company,city\n"Acme, Inc.",Berlin\n"Acme, Ltd.",Berlin\n"acme, inc.",Paris\n'
    )
    assert _rows(dedupe_csv(text, "company")) == [
        ["company", "city"],
        ["Acme, Inc.", "Berlin"],
        ["Acme, Ltd.", "Berlin"],
    ]


def test_line_break_inside_quoted_field():
    # the second physical line looks like a record with id 2, but it is the tail of a note
    text = 'id,note\n1,"call back\n2,after lunch"\n2,plain\n1,again\n'
    assert dedupe_csv(text, "id") == 'id,note\n1,"call back\n2,after lunch"\n2,plain\n'


def test_doubled_quotes_round_trip():
    text = 'id,quote\n7,"She said ""hi"""\n7,"other"\n'
    out = dedupe_csv(text, "id")
    assert _rows(out) == [["id", "quote"], ["7", 'She said "hi"']]
    assert out == 'id,quote\n7,"She said ""hi"""\n'


def test_crlf_input_gives_lf_output():
    text = "id,email\r\n1,a@example.com\r\n2,a@example.com\r\n"
    assert dedupe_csv(text, "email") == "id,email\n1,a@example.com\n"


def test_quoted_and_unquoted_key_are_the_same_value():
    text = 'id,email\n1,"ann@example.com"\n2,ann@example.com\n'
    assert _rows(dedupe_csv(text, "email")) == [
        ["id", "email"],
        ["1", "ann@example.com"],
    ]


def test_quoted_empty_field_is_kept():
    text = 'id,note,email\n1,"",a@example.com\n2,"x, y",b@example.com\n'
    assert _rows(dedupe_csv(text, "email")) == [
        ["id", "note", "email"],
        ["1", "", "a@example.com"],
        ["2", "x, y", "b@example.com"],
    ]
