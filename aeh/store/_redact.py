"""The one redactor every sink uses: the store, the run logger, reports, exports and imports.

Order matters: configured secrets first (they are the most specific and may look like an
email or key), then secret shapes (`_shapes`: private keys, webhooks, JWTs, URL passwords, API
keys, AWS secret keys, bearer tokens, emails), then card numbers (`_cards`).

Values under a key that names a secret (`_secret_keys`: `Authorization`, `X-Api-Key`, `password`,
`client_secret`, `access_token`, `Cookie` …) are masked whatever their shape: in dicts at any
depth, in header lists (`[["Authorization", "…"]]`, `[{"name": "X-Api-Key", "value": "…"}]`) and
in JSON text held in strings.

What a grader compares against is never redacted before grading: the engine grades the raw
attempt and only then hands it to the store, so a redacted answer cannot flip a verdict.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import secrets as _random
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from aeh.models import RedactionRecord, RunConfig, Span
from aeh.store._cards import CARD, CARD_CONTEXT_RE, is_card_number, luhn_valid, redact_cards
from aeh.store._json import dumps, dumps_bytes, finite_plain_bytes
from aeh.store._secret_keys import is_secret_key, masked_already, redact_secret_json
from aeh.store._shapes import API_KEY, EMAIL, redact_shapes

__all__ = ["API_KEY", "CARD", "EMAIL", "MARKER", "SECRET", "RedactingSink", "Redactor", "json_default", "luhn_valid",
           "plain", "redaction_record", "redactor_for_run", "redactor_for_stored_text", "rules_digest",
           "secret_fingerprints", "with_rules_of"]

SECRET = "[REDACTED:secret]"
_Model = TypeVar("_Model", bound=BaseModel)
#: Every marker starts with this, so "was this text redacted?" is one substring test.
MARKER = "[REDACTED:"
# A string with fewer digits than the shortest card cannot hold one. Counted with str.count
# (memchr speed): str.translate takes a per-character slow path on any non-ASCII text, ~0.2 s/MB.
_DIGITS = "0123456789"
_KEY_CACHE_SIZE = 4096
# Short strings repeat across spans (names, statuses, tool and model ids): their redaction is
# remembered. So is that of longer text, within a budget of characters: a model call's input
# repeats the task's prompt and every earlier tool result of the attempt (reading a core run's
# traces back, 22 distinct long texts came by 934 times).
_TEXT_CACHE_SIZE = 8192
_TEXT_CACHE_MAX_LEN = 256
_LONG_TEXT_CACHE_CHARS = 4_000_000
#: What a key says about its value: nothing, a card number, or a secret (masked whatever its shape).
_PLAIN, _CARD, _SECRET = 0, 1, 2
#: The fields of a `{"name": …, "value": …}` header entry that name it.
_NAME_FIELDS = ("name", "key", "header")
# `Redactor._clean` checks at most this many dicts and lists of one payload in place (a cycle
# would otherwise loop for ever); a bigger payload takes the copying walk.
_CLEAN_MAX_CONTAINERS = 100_000
#: The modules whose source decides what is redacted (`rules_digest`).
_RULE_MODULES = ("_redact.py", "_shapes.py", "_cards.py", "_secret_keys.py")


def _digits(s: str) -> int:
    return sum(map(s.count, _DIGITS))


def _is_secret_pair(obj: list[Any] | tuple[Any, ...]) -> bool:
    """A header pair `[name, value]` whose name is a secret's."""
    return len(obj) == 2 and isinstance(obj[0], str) and is_secret_key(obj[0])


def _names_a_secret(entry: dict[Any, Any]) -> bool:
    """A `{"name": "Authorization", "value": …}` header entry: one of its name fields names a secret."""
    return any(isinstance(entry.get(f), str) and is_secret_key(entry[f]) for f in _NAME_FIELDS)


def json_default(obj: Any) -> Any:
    """`json.dumps(default=…)` for span attributes: models dump, the rest becomes its text."""
    if isinstance(obj, BaseModel):
        return obj.model_dump(mode="json")
    if isinstance(obj, set | frozenset):
        return sorted(obj, key=repr)
    return str(obj)


def plain(obj: Any) -> Any:
    """`obj` as plain JSON values; odd objects become their text, so that text can be redacted."""
    return json.loads(json.dumps(obj, default=json_default, ensure_ascii=False))


def _free_key(out: dict[Any, Any], key: Any) -> Any:
    """`key`, or `key#`, `key##` … when two keys were redacted alike: both values are kept."""
    while key in out:
        key = f"{key}#"
    return key


def _json_key(key: Any) -> str:
    """A non-string dict key as `json.dumps` writes it."""
    if isinstance(key, str):
        return str.__str__(key)
    if key is True or key is False:
        return "true" if key else "false"
    if key is None:
        return "null"
    if isinstance(key, int):
        return int.__repr__(key)
    if isinstance(key, float):
        return json.dumps(float(key))
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")


def secret_fingerprints(secrets: Iterable[str], salt: str) -> list[str]:
    """Salted, slow hashes of configured secrets: a stored run can say which secrets it was
    redacted with (so a replay can insist on the same ones) without storing them."""
    return sorted({hashlib.pbkdf2_hmac("sha256", s.encode(), salt.encode(), 20_000).hex()[:32]
                   for s in secrets if s})


class Redactor:
    """Replaces sensitive substrings with `[REDACTED:<kind>]` markers.

    `secrets` are exact substrings (replaced longest first). With `enabled=False` every method
    is the identity, for users who store only synthetic data and want raw traces.
    """

    def __init__(self, secrets: Sequence[str] = (), enabled: bool = True) -> None:
        self.enabled = enabled
        self.secrets = tuple(sorted({s for s in secrets if s}, key=len, reverse=True))
        self._secret_re = (
            re.compile("|".join(re.escape(s) for s in self.secrets)) if self.secrets else None
        )
        self._keys: dict[str, tuple[str, int]] = {}
        self._texts: dict[str, str] = {}
        self._long_texts: dict[str, str] = {}
        self._long_chars = 0

    def with_secrets(self, secrets: Iterable[str] | None) -> Redactor:
        """This redactor with `secrets` added (itself when there is nothing to add)."""
        extra = {s for s in secrets or () if s} - set(self.secrets)
        return Redactor([*self.secrets, *extra], enabled=self.enabled) if extra else self

    def redact_text(self, s: str, *, card_context: bool = False) -> str:
        """Return `s` with every sensitive substring replaced.

        `card_context`: the text is known to be about a card (e.g. the value of `card_number`),
        so a contiguous card-shaped number is redacted without a card word beside it.
        """
        if not self.enabled or not s:
            return s
        if self._secret_re is not None:
            s = self._secret_re.sub(SECRET, s)
        s = redact_secret_json(redact_shapes(s))
        return redact_cards(s, card_context) if _digits(s) >= 13 else s

    def _mask(self, obj: Any) -> Any:
        """A value under a secret-named key: every string and number in it becomes the marker
        (empty strings, booleans and None say nothing and stay); keys are redacted as usual."""
        if isinstance(obj, str):
            if not obj:
                return obj
            shaped = self.redact_text(obj)
            return shaped if masked_already(shaped) else SECRET
        if isinstance(obj, bool) or obj is None:
            return obj
        if isinstance(obj, int | float):
            return SECRET
        if isinstance(obj, dict):
            out: dict[Any, Any] = {}
            for k, v in obj.items():
                key = self._redact_key(k if isinstance(k, str) else _json_key(k))[0]
                out[_free_key(out, key)] = self._mask(v)
            return out
        if isinstance(obj, list | tuple):
            return [self._mask(v) for v in obj]
        return SECRET

    def _secret_pair(self, obj: list[Any] | tuple[Any, ...]) -> list[Any] | None:
        """A header pair `[name, value]` whose name is a secret's: the name kept, the value masked."""
        if _is_secret_pair(obj):
            return [self._short_text(obj[0]), self._mask(obj[1])]
        return None

    def _header_entry(self, obj: dict[Any, Any], out: dict[Any, Any]) -> None:
        """`{"name": "Authorization", "value": …}`: the value masked (`out` is the redacted copy)."""
        if "value" in out and _names_a_secret(obj):
            out["value"] = self._mask(obj["value"])

    def redact(self, obj: Any, *, card_context: bool = False) -> Any:
        """Redact strings anywhere inside dicts (keys and values), lists and tuples.

        Other values pass through, except an int under a card-like key (`card_number`) that is
        itself a card number: it becomes the marker string, since a card as a number leaks too.
        """
        if not self.enabled:
            return obj
        if isinstance(obj, str):
            return self.redact_text(obj, card_context=card_context)
        if isinstance(obj, dict):
            return self._redact_dict(obj)
        if isinstance(obj, list | tuple) and (pair := self._secret_pair(obj)) is not None:
            return pair if isinstance(obj, list) else tuple(pair)
        if isinstance(obj, list):
            return [self.redact(v, card_context=card_context) for v in obj]
        if isinstance(obj, tuple):
            return tuple(self.redact(v, card_context=card_context) for v in obj)
        if card_context and type(obj) is int and obj > 0 and is_card_number(str(obj)):
            return CARD
        return obj

    def _redact_dict(self, obj: dict[Any, Any]) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        for k, v in obj.items():
            if isinstance(k, str):
                key, about = self._redact_key(k)
            else:
                key, about = k, _PLAIN
            slot = _free_key(out, key)
            out[slot] = self._mask(v) if about == _SECRET else self.redact(v, card_context=about == _CARD)
        self._header_entry(obj, out)
        return out

    def _redact_key(self, key: str) -> tuple[str, int]:
        """The redacted key and what it says about its value (`_PLAIN`, `_CARD`, `_SECRET`),
        cached: the same few keys ("args", "result", "gen_ai.usage.input_tokens") come by on
        every span."""
        hit = self._keys.get(key)
        if hit is None:
            about = _SECRET if is_secret_key(key) else _CARD if CARD_CONTEXT_RE.search(key) is not None else _PLAIN
            hit = (self.redact_text(key), about)
            if len(self._keys) < _KEY_CACHE_SIZE:
                self._keys[key] = hit
        return hit

    def _short_text(self, s: str) -> str:
        hit = self._texts.get(s)
        if hit is not None:
            return hit
        if len(s) <= _TEXT_CACHE_MAX_LEN:
            hit = self.redact_text(s)
            if len(self._texts) >= _TEXT_CACHE_SIZE:
                self._texts.clear()
            self._texts[s] = hit
            return hit
        return self._long_text(s)

    def _long_text(self, s: str) -> str:
        hit = self._long_texts.get(s)
        if hit is None:
            hit = self.redact_text(s)
            if len(s) <= _LONG_TEXT_CACHE_CHARS:
                if self._long_chars + len(s) > _LONG_TEXT_CACHE_CHARS:
                    self._long_texts.clear()
                    self._long_chars = 0
                self._long_texts[s] = hit
                self._long_chars += len(s)
        return hit

    def _plain_redacted(self, obj: Any, card_context: bool) -> Any:
        """`self.redact(plain(obj))` in one walk, without the JSON round trip."""
        kind = type(obj)
        if kind is str:
            return self.redact_text(obj, card_context=True) if card_context else self._short_text(obj)
        if kind is dict:
            return self._plain_dict(obj)
        if kind is list or kind is tuple:
            pair = self._secret_pair(obj)
            if pair is not None:
                return pair
            return [self._plain_redacted(v, True) for v in obj] if card_context else self._plain_list(obj)
        if kind is int:
            return CARD if card_context and obj > 0 and is_card_number(str(obj)) else obj
        if kind is float or kind is bool or obj is None:
            return obj
        # Subclasses (str and int enums, dict and list subclasses) as JSON writes them.
        if isinstance(obj, str):
            return self._plain_redacted(str.__str__(obj), card_context)
        if isinstance(obj, bool):
            return bool(obj)
        if isinstance(obj, int):
            return self._plain_redacted(int(obj), card_context)
        if isinstance(obj, float):
            return float(obj)
        if isinstance(obj, dict):
            return self._plain_redacted(dict(obj), card_context)
        if isinstance(obj, list | tuple):
            return [self._plain_redacted(v, card_context) for v in obj]
        return self._plain_redacted(json_default(obj), card_context)

    def _plain_list(self, obj: list[Any] | tuple[Any, ...]) -> list[Any]:
        texts = self._texts
        out: list[Any] = []
        for v in obj:
            vk = type(v)
            if vk is str:
                r = texts.get(v)
                out.append(self._short_text(v) if r is None else r)
            elif vk is int or vk is float or vk is bool or v is None:
                out.append(v)
            else:
                out.append(self._plain_redacted(v, False))
        return out

    def _plain_dict(self, obj: dict[Any, Any]) -> dict[str, Any]:
        # The walk's hot loop (a span's attributes are dicts of short strings and numbers): the
        # common cases are handled inline, each the same as `_plain_redacted` on the value.
        out: dict[str, Any] = {}
        keys, texts = self._keys, self._texts
        renamed = False  # only a redacted key can collide with another key
        for k, v in obj.items():
            hit = keys.get(k) if type(k) is str else None
            if hit is None:
                hit = self._redact_key(k if type(k) is str else _json_key(k))
            key, about = hit
            if renamed or key != k:
                renamed = True
                key = _free_key(out, key)
            vk = type(v)
            if about == _SECRET:
                out[key] = self._mask(self._plain_redacted(v, False))
            elif about:
                out[key] = self._plain_redacted(v, True)
            elif vk is str:
                r = texts.get(v)
                out[key] = self._short_text(v) if r is None else r
            elif vk is int or vk is float or vk is bool or v is None:
                out[key] = v
            else:
                out[key] = self._plain_redacted(v, False)
        if "value" in out:
            self._header_entry(obj, out)
        return out

    def redact_plain(self, obj: Any) -> Any:
        """`plain(obj)`, redacted: what a JSON sink (log line, export file) may write."""
        return self._plain_redacted(obj, False) if self.enabled else obj

    def dumps(self, obj: Any) -> str:
        """Compact JSON text of `obj`, redacted: `json.dumps(self.redact_plain(obj))`'s values."""
        if not self.enabled:
            return dumps(obj, json_default)
        if self._clean(obj):
            return finite_plain_bytes(obj).decode()
        return dumps(self._plain_redacted(obj, False))

    def dumps_bytes(self, obj: Any) -> bytes:
        """`self.dumps(obj)` as UTF-8 bytes (what the store compresses)."""
        if not self.enabled:
            return dumps_bytes(obj, json_default)
        if self._clean(obj):
            return finite_plain_bytes(obj)
        return dumps_bytes(self._plain_redacted(obj, False))

    def _clean(self, obj: Any) -> bool:
        """True when `obj` is plain JSON already and redaction would change none of it: exact
        dicts with str keys, lists, tuples, str, int, bool, None and finite floats, no key that
        is redacted or names a card, no string that is redacted. Its JSON is then written from
        `obj` itself: no redacted copy is built, and no second walk looks for NaN.

        Most payloads are clean; a dirty one costs this check on top of the copying walk (a long
        string's redaction is computed twice, the short ones come from the cache). A payload of
        more than `_CLEAN_MAX_CONTAINERS` dicts and lists (or one that contains itself) is left
        to the walk, which reports a cycle as it always did."""
        texts, short_text = self._texts, self._short_text
        stack = [obj]
        pop, extend = stack.pop, stack.extend
        containers = _CLEAN_MAX_CONTAINERS
        while stack:
            if containers < 0:
                return False
            value = pop()
            kind = type(value)
            if kind is str:
                hit = texts.get(value)
                if hit is None:
                    hit = short_text(value)
                if hit is not value and hit != value:
                    return False
            elif kind is dict:
                containers -= 1
                if not self._clean_keys(value):
                    return False
                if "value" in value and _names_a_secret(value):
                    return False  # a header entry naming a secret: its value is masked
                extend(value.values())
            elif kind is list or kind is tuple:
                containers -= 1
                if _is_secret_pair(value):
                    return False  # a header pair naming a secret: its value is masked
                extend(value)
            elif kind is float:
                if value - value != 0.0:  # NaN or an infinity: JSON text of its own (`_json`)
                    return False
            elif not (kind is int or kind is bool or value is None):
                return False
        return True

    def _clean_keys(self, value: dict[Any, Any]) -> bool:
        """True when every key of `value` is an exact str that redaction keeps and names no card."""
        keys, redact_key = self._keys, self._redact_key
        for key in value:
            if type(key) is not str:
                return False
            named = keys.get(key)
            if named is None:
                named = redact_key(key)
            if named[1] or named[0] != key:
                return False
        return True

    def redact_model(self, model: _Model) -> _Model:
        """`model` with every string of its JSON form redacted: itself when redaction changes
        nothing, else a validated copy (the original is untouched)."""
        if not self.enabled:
            return model
        dumped = model.model_dump(mode="json")
        return model if self._clean(dumped) else type(model).model_validate(self._plain_redacted(dumped, False))

    def redact_span(self, span: Span) -> Span:
        """`span` with its attributes redacted: itself when redaction changes nothing, else a
        copy (the original, which graders read, is untouched)."""
        if not self.enabled or self._clean(span.attributes):
            return span
        return span.model_copy(update={"attributes": self._plain_redacted(span.attributes, False)})

    def __repr__(self) -> str:
        return f"Redactor(secrets=<{len(self.secrets)}>, enabled={self.enabled})"


class RedactingSink:
    """Hands a span sink redacted copies of the spans, so no sink ever sees what the store would not."""

    def __init__(self, sink: Any, redactor: Redactor) -> None:
        self.sink = sink
        self.redactor = redactor

    def span_started(self, span: Span, depth: int) -> None:
        self.sink.span_started(self.redactor.redact_span(span), depth)

    def span_ended(self, span: Span, depth: int) -> None:
        self.sink.span_ended(self.redactor.redact_span(span), depth)

    def __repr__(self) -> str:
        return f"RedactingSink({self.sink!r})"


@functools.cache
def rules_digest() -> str | None:
    """A digest of the source of the redaction rules (this module, the secret shapes, card numbers
    and secret key names): two aeh installs with the same digest redact alike. None when the
    source cannot be read, so that no stored text counts as redacted by these rules."""
    digest = hashlib.sha256()
    for name in _RULE_MODULES:
        try:
            digest.update((Path(__file__).parent / name).read_bytes())
        except OSError:
            return None
    return digest.hexdigest()[:16]


def redaction_record(redactor: Redactor) -> RedactionRecord:
    """What a run stores about its redaction (`RunConfig.redaction`): on or off, and salted
    fingerprints of its configured secrets, never the secrets themselves."""
    salt = _random.token_hex(8)
    return RedactionRecord(enabled=redactor.enabled, salt=salt, rules=rules_digest() if redactor.enabled else None,
                           secret_fingerprints=secret_fingerprints(redactor.secrets, salt))


def with_rules_of(config: RunConfig, redactor: Redactor) -> RunConfig:
    """`config` as a store with `redactor` records it: its redaction record names these rules only
    when this store redacts with them and the record already named them (or is new with them), so a
    run resumed by an aeh with other rules, or written raw, is never taken as redacted by them."""
    record = config.redaction
    mine = rules_digest() if redactor.enabled else None
    if record is None or record.rules is None or record.rules == mine:
        return config
    return config.model_copy(update={"redaction": record.model_copy(update={"rules": None})})


def redactor_for_stored_text(config: RunConfig | dict[str, Any] | None) -> Redactor:
    """The redactor a reader applies to a run's stored attempts and spans before showing them:
    none when every write of the run went through these same rules (`RedactionRecord.rules`),
    which would change nothing; else the run's (`redactor_for_run`). Secrets given to the reader
    (`Redactor.with_secrets`) still need the run's redactor: the writer did not know them."""
    if isinstance(config, dict):
        config = RunConfig.model_validate(config)
    record = config.redaction if config is not None else None
    if record is not None and record.enabled and record.rules is not None and record.rules == rules_digest():
        return Redactor(enabled=False)
    return redactor_for_run(config)


def redactor_for_run(config: RunConfig | dict[str, Any] | None) -> Redactor:
    """The redactor a reader applies before writing a stored run anywhere (report, export,
    baseline): on unless the run was stored with redaction off on purpose. `config` is the run's
    `RunConfig`, or its JSON (a run dumped to a dict)."""
    if isinstance(config, dict):
        config = RunConfig.model_validate(config)
    record = config.redaction if config is not None else None
    return Redactor(enabled=record is None or record.enabled)
