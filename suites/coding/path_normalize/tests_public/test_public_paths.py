import pytest
from paths import PathEscapeError, normalize, safe_join, split_extension


def test_normalize_collapses_dots_and_slashes():
    assert normalize("/srv//www/./static/") == "/srv/www/static"
    assert normalize("a/b/../c") == "a/c"
    assert normalize("") == "."


def test_normalize_dotdot_at_absolute_root():
    assert normalize("/../etc") == "/etc"


def test_safe_join_inside_root():
    assert safe_join("/srv/www", "css/site.css") == "/srv/www/css/site.css"
    assert safe_join("/srv/www", "img/../index.html") == "/srv/www/index.html"


def test_safe_join_refuses_traversal():
    with pytest.raises(PathEscapeError):
        safe_join("/srv/www", "../../etc/passwd")
    with pytest.raises(PathEscapeError):
        safe_join("/srv/www", "/etc/passwd")


def test_split_extension():
    assert split_extension("dir/archive.tar.gz") == ("dir/archive.tar", ".gz")
    assert split_extension(".bashrc") == (".bashrc", "")
