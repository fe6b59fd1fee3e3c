import pytest
from paths import PathEscapeError, normalize, safe_join


def test_relative_leading_dotdot_is_kept():
    assert normalize("../a") == "../a"
    assert normalize("a/../../b") == "../b"
    assert normalize("../../x/./y/..") == "../../x"


def test_relative_path_that_cancels_out():
    assert normalize("a/b/../..") == "."
    assert normalize("./") == "."


def test_absolute_path_that_cancels_out():
    assert normalize("/a/b/../../..") == "/"
    assert normalize("///") == "/"


def test_sibling_directory_with_common_prefix_is_refused():
    with pytest.raises(PathEscapeError):
        safe_join("/srv/www", "../www-private/secret.txt")
    with pytest.raises(PathEscapeError):
        safe_join("/srv/www", "../wwwdata")


def test_root_itself_and_trailing_slash_root():
    assert safe_join("/srv/www", ".") == "/srv/www"
    assert safe_join("/srv/www/", "a/") == "/srv/www/a"
    assert safe_join("/srv/www/", "a/../../www/b") == "/srv/www/b"


def test_filesystem_root_as_served_root():
    assert safe_join("/", "etc/hosts") == "/etc/hosts"
    assert safe_join("/", "../../etc") == "/etc"
