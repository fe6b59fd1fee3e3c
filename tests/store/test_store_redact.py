"""The Redactor: what it replaces, and what it must leave alone."""

from __future__ import annotations

import pytest

from aeh.store import Redactor, luhn_valid

R = Redactor(secrets=["hunter2", "hunter2-long-form"])
JWT = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
PEM = ("-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n"
       "VJTUt9Us8cKjMzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu\n"
       "-----END PRIVATE KEY-----")


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("mail bob.smith+x@mail.example.co.uk now", "mail [REDACTED:email] now"),
        ("card 4111 1111 1111 1111.", "card [REDACTED:card]."),
        ("4111-1111-1111-1111", "[REDACTED:card]"),
        ("card no. 4111111111111111", "card no. [REDACTED:card]"),
        ("4111111111111111 (visa)", "[REDACTED:card] (visa)"),
        ("mc 5555 5555 5555 4444", "mc [REDACTED:card]"),
        ("diners 3056 930902 5904", "diners [REDACTED:card]"),
        ("amex 3782 822463 10005", "amex [REDACTED:card]"),
        ("call 555-1234 4111 1111 1111 1111", "call 555-1234 [REDACTED:card]"),
        ("pw hunter2!", "pw [REDACTED:secret]!"),
        ("pw hunter2-long-form.", "pw [REDACTED:secret]."),  # longest secret wins
        ("key sk-abcdefghijklmnopqrstuvwx12", "key [REDACTED:api_key]"),
        ("sk-proj-abcdefghijklmnopqrstuvwx12", "[REDACTED:api_key]"),
        ("sk-ant-api03-abcdefghijklmnopqrstuvwxyz", "[REDACTED:api_key]"),
        ("id=AKIAIOSFODNN7EXAMPLE;", "id=[REDACTED:api_key];"),
        ("ghp_" + "a1" * 18, "[REDACTED:api_key]"),
        ("xoxb-1234567890-abcdef", "[REDACTED:api_key]"),
        ("AIza" + "B" * 35, "[REDACTED:api_key]"),
        ("Authorization: Bearer eyJhbGciOiJI.UzI1NiJ9x.abc", "Authorization: Bearer [REDACTED:api_key]"),
        ("tok " + JWT + " end", "tok [REDACTED:jwt] end"),
        ("cookie=" + JWT, "cookie=[REDACTED:jwt]"),
        ("pat github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ0123456789abcdefghijkl",
         "pat [REDACTED:api_key]"),
        ("post to https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX now",
         "post to [REDACTED:webhook] now"),
        ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
         "aws_secret_access_key = [REDACTED:api_key]"),
        ("AKIAIOSFODNN7EXAMPLE:wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
         "[REDACTED:api_key]:[REDACTED:api_key]"),
        ('{"SecretAccessKey": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}', '{"SecretAccessKey": "[REDACTED:api_key]"}'),
        ("postgres://app:p!a#s%21s@db.example.com:5432/orders",
         "postgres://app:[REDACTED:password]@db.example.com:5432/orders"),
        ("redis://:s3cr3t@cache:6379", "redis://:[REDACTED:password]@cache:6379"),
        ("key:\n" + PEM + "\nrest", "key:\n[REDACTED:private_key]\nrest"),
        (PEM.replace("\n", "\\n"), "[REDACTED:private_key]"),  # newlines escaped, as in JSON text
        ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7… [cut]", "[REDACTED:private_key]… [cut]"),  # clipped
    ],
)
def test_replaces(text: str, want: str) -> None:
    assert R.redact_text(text) == want


@pytest.mark.parametrize(
    "text",
    [
        "391",
        "order 4111111111111112 shipped",  # 16 digits, not Luhn-valid
        "ts 1732900000000",  # a millisecond timestamp
        "order 4111111111111111 shipped",  # Luhn-valid, but contiguous with no card word near it
        "EAN 4006381333931",  # a valid EAN-13 (and Luhn-valid Visa-length 13) barcode
        "total 4 111 111 111 111",  # an amount grouped by thousands
        "pi 3.4111111111111111",  # a decimal
        "commit 9fceb02d0ae598e95dc970b74767f19372d61af8",  # a git SHA is 40 characters too
        "aws region eu-west-1, object key logs/2025/01/01/app-0000000000000000000001.gz",
        "ssh://git@github:repo",  # a user, no password
        "see https://example.com/a:b@c",  # no password: the colon sits in the path
        "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n-----END PUBLIC KEY-----",
        "eyJhbGciOiJIUzI1NiJ9 alone",  # a base64 JSON header, not a token
        "2025-01-01 12:00",
        "+1 555-123-4567",
        "sk-short",
        "ask-me-anything",
        "the bearer of bad news",
        "x@y",
        "",
    ],
)
def test_leaves_ordinary_text(text: str) -> None:
    assert R.redact_text(text) == text


def test_luhn() -> None:
    assert luhn_valid("4111111111111111") and luhn_valid("79927398713")
    assert not luhn_valid("4111111111111112")


def test_redact_walks_keys_and_values() -> None:
    obj = {
        "bob@example.com": "to bob@example.com",
        "nested": [("hunter2", 391), {"n": 1.5, "ok": True, "none": None}],
        "card_as_int": 4111111111111111,
        "card_number": "4111111111111111",
        "plain_int": 4111111111111111,
        "sk-abcdefghijklmnopqrstuvwx12": 1,
    }
    out = R.redact(obj)
    assert out == {
        "[REDACTED:email]": "to [REDACTED:email]",
        "nested": [("[REDACTED:secret]", 391), {"n": 1.5, "ok": True, "none": None}],
        "card_as_int": "[REDACTED:card]",
        "card_number": "[REDACTED:card]",
        "plain_int": 4111111111111111,  # no card word in its key: an order number
        "[REDACTED:api_key]": 1,
    }
    assert obj["bob@example.com"] == "to bob@example.com"  # input not mutated


def test_keys_redacted_alike_keep_both_values() -> None:
    out = R.redact({"a@example.com": 1, "b@example.com": 2})
    assert sorted(out.values()) == [1, 2] and all(k.startswith("[REDACTED:email]") for k in out)


def test_with_secrets_adds_without_changing_the_original() -> None:
    more = R.with_secrets(["swordfish"])
    assert more.redact_text("swordfish hunter2") == "[REDACTED:secret] [REDACTED:secret]"
    assert R.redact_text("swordfish") == "swordfish"
    assert R.with_secrets([]) is R and R.with_secrets(None) is R


def test_disabled_is_identity() -> None:
    r = Redactor(secrets=["hunter2"], enabled=False)
    text = "bob@example.com 4111 1111 1111 1111 hunter2 sk-abcdefghijklmnopqrstuvwx12"
    assert r.redact_text(text) == text
    obj = {"a": [text]}
    assert r.redact(obj) is obj


def test_empty_secret_is_ignored() -> None:
    assert Redactor(secrets=["", "abc"]).redact_text("xabcx") == "x[REDACTED:secret]x"


def test_text_holding_json_is_redacted_and_stays_json() -> None:
    import json

    text = json.dumps({"log": "x\nsk-proj-Abc123Def456Ghi789Jkl012Mno\njane@example.org\n"
                              "aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq8Lm3Pq2R"})
    out = R.redact_text(text)
    assert json.loads(out) == {"log": "x\n[REDACTED:api_key]\n[REDACTED:email]\n"
                                      "aws_secret_access_key=[REDACTED:api_key]"}
