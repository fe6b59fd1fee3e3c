"""What redaction costs on the write path: microseconds per typical span payload.

    .venv/bin/python benchmarks/redaction.py [--repeats 2000]

Each payload is a span's attributes as the store sees them (a tool call with a short result, a
tool call returning a 4 kB document, a model turn with its messages, a grading span) — clean,
and with secrets seeded in. The time is `Redactor.redact(plain(attributes))`, what the store,
the logger and the exports run per span, in CPU time. "every shape" seeds one of each of the 32
shapes of `tests/store/shape_table.py`. Best of 5 repeats; prints a Markdown table to paste
into benchmarks/RESULTS.md. With `detect-secrets` importable (it is not a dependency), also
times its plugin scan over the same text for comparison. With `--gitleaks config/gitleaks.toml`
(a copy of gitleaks' rule file), also compares those rules with aeh's shapes: shapes found, false
positives on numbers and clean payloads, CPU time.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import random
import re
import sys
import time
import timeit
import tomllib
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

from aeh.store import Redactor
from aeh.store._redact import plain

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.store.shape_table import SHAPES  # noqa: E402 — the shape table the tests use

SECRETS = ("mail bob@example.com, card 4111 1111 1111 1111, key sk-proj-abcdefghijklmnopqrstuvwx12, "
           "db postgres://app:p!ss#w0rd@db:5432/x, aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
#: One of each of the 32 shapes of the test table, in one text.
EVERY_SHAPE = " ".join(text for text, _, _ in SHAPES.values())
DOC = ("Order 1042 shipped on 2025-03-14 to Berlin; 3 items, total 129.90 EUR, tracking DE123456789. " * 40)[:4000]


def payloads(seeded: bool, secrets: str = SECRETS) -> dict[str, dict[str, Any]]:
    extra = f" {secrets}" if seeded else ""
    return {
        "tool call, short result": {"args": {"order_id": "1042"}, "result": {"status": "shipped" + extra},
                                    "tool": "lookup_order", "duration_ms": 12},
        "tool call, 4 kB document": {"args": {"path": "orders.txt"}, "result": DOC + extra},
        "model turn, messages": {"gen_ai.request.model": "gpt-4o-mini", "gen_ai.usage.input_tokens": 812,
                                 "gen_ai.request.messages": [{"role": "user", "content": DOC[:1500] + extra},
                                                             {"role": "assistant", "content": "Looking it up."}],
                                 "gen_ai.output.messages": [{"role": "assistant", "content": "Shipped." + extra}]},
        "grading span": {"grader": "exact", "passed": True,
                         "evidence": {"expected": "shipped", "got": "shipped" + extra}},
    }


def best_us(fn: Any, repeats: int) -> float:
    """CPU µs per call, best of 5 (process time: other processes on a shared machine do not count)."""
    return min(timeit.Timer(fn, timer=time.process_time).repeat(repeat=5, number=repeats)) / repeats * 1e6


def detect_secrets_scanner() -> Any:
    """A function scanning text with detect-secrets' default plugins, or None when not installed."""
    try:
        from detect_secrets.core.scan import scan_line
        from detect_secrets.settings import default_settings
    except ImportError:
        return None

    def scan(text: str) -> int:
        with default_settings():
            return sum(1 for line in text.splitlines() for _ in scan_line(line))

    return scan


def _entropy(s: str) -> float:
    return -sum(n / len(s) * math.log2(n / len(s)) for n in Counter(s).values()) if s else 0.0


def gitleaks_scanner(path: Path) -> tuple[Any, int, int]:
    """gitleaks' rules as Python regexes: (scan, rules compiled, rules in the file).

    Like gitleaks: a rule runs only when the lower-cased text holds one of its keywords, a
    match counts when the secret group's Shannon entropy reaches the rule's `entropy`, and the
    global allowlist's stopwords drop a match. Go-only syntax (a mid-pattern `(?i)`) is rewritten
    to a whole-pattern IGNORECASE, which can only match more; rules that still do not compile
    are counted and left out.
    """
    config = tomllib.loads(path.read_text(encoding="utf-8"))
    stop = [w.lower() for w in config.get("allowlist", {}).get("stopwords", [])]
    rules = []
    for rule in config["rules"]:
        if "regex" not in rule:
            continue
        pattern, flags = rule["regex"], 0
        if "(?i)" in pattern[1:]:
            pattern, flags = pattern.replace("(?i)", ""), re.IGNORECASE
        try:
            with warnings.catch_warnings():  # Go character classes Python reads as maybe-nested sets
                warnings.simplefilter("ignore", FutureWarning)
                compiled = re.compile(pattern, flags)
        except re.error:
            continue
        rules.append((compiled, [k.lower() for k in rule.get("keywords", [])], rule.get("entropy", 0.0)))

    def scan(text: str) -> list[str]:
        low = text.lower()
        found = []
        for compiled, keywords, entropy in rules:
            if keywords and not any(k in low for k in keywords):
                continue
            for m in compiled.finditer(text):
                secret = next((g for g in m.groups() if g), m.group(0))
                if _entropy(secret) >= entropy and not any(w in secret.lower() for w in stop):
                    found.append(secret)
        return found

    return scan, len(rules), sum(1 for r in config["rules"] if "regex" in r)


def _number_corpus() -> list[str]:
    rng = random.Random(25)
    return ([f"Your order number is {rng.randrange(10**15, 10**16)}." for _ in range(500)]
            + [f"id {rng.getrandbits(128):032x}" for _ in range(500)]
            + [f"commit {rng.getrandbits(160):040x}" for _ in range(500)]
            + [f"score {rng.random():.17f}, auth ok" for _ in range(500)])


def compare_gitleaks(path: Path, redactor: Redactor, clean: dict[str, dict[str, Any]]) -> None:
    """Coverage of the shape table, false positives on clean payloads and numbers, and CPU cost."""
    scan, compiled, total = gitleaks_scanner(path)
    print(f"\ngitleaks rules: {compiled} of {total} compile as Python regexes\n")
    ours = sum(all(raw not in redactor.redact_text(text) for _ in [0]) for text, raw, _ in SHAPES.values())
    theirs = sum(any(raw in hit or hit in raw for hit in scan(text)) for text, raw, _ in SHAPES.values())
    numbers = _number_corpus()
    fp_ours = sum(redactor.redact_text(t) != t for t in numbers)
    fp_theirs = sum(bool(scan(t)) for t in numbers)
    docs = [json.dumps(p) for p in clean.values()]
    clean_ours = sum(redactor.redact_text(d) != d for d in docs)
    clean_theirs = sum(bool(scan(d)) for d in docs)
    print("| | aeh shapes | gitleaks rules |")
    print("| --- | ---: | ---: |")
    print(f"| shapes of the table found (of {len(SHAPES)}) | {ours} | {theirs} |")
    print(f"| false positives, {len(numbers):,} numbers, ids, hashes | {fp_ours} | {fp_theirs} |")
    print(f"| false positives, {len(docs)} clean payloads | {clean_ours} | {clean_theirs} |")
    text = json.dumps(payloads(True)["tool call, 4 kB document"])
    reps = 20
    print(f"| CPU µs, seeded 4 kB document | {best_us(lambda: redactor.redact_text(text), reps * 10):.0f} "
          f"| {best_us(lambda: scan(text), reps):.0f} |")
    missed = [n for n, (t, raw, _) in SHAPES.items() if not any(raw in h or h in raw for h in scan(t))]
    print(f"\ngitleaks misses: {', '.join(missed)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2000)
    parser.add_argument("--gitleaks", type=Path, metavar="TOML",
                        help="also evaluate gitleaks' config/gitleaks.toml against the shape table")
    args = parser.parse_args()
    redactor = Redactor(secrets=["hunter2-configured", "swordfish-Quartz-42"])
    scan = detect_secrets_scanner()
    print(f"Python {platform.python_version()}, CPU time, best of 5 × {args.repeats} repeats\n")
    head = "| payload | bytes | clean µs | seeded µs | every shape µs |" + (" detect-secrets µs |" if scan else "")
    print(head)
    print("| --- | ---: | ---: | ---: | ---: |" + (" ---: |" if scan else ""))
    clean, seeded, every = payloads(False), payloads(True), payloads(True, EVERY_SHAPE)
    for name in clean:
        size = len(json.dumps(seeded[name]))
        a = best_us(lambda p=clean[name]: redactor.redact(plain(p)), args.repeats)
        b = best_us(lambda p=seeded[name]: redactor.redact(plain(p)), args.repeats)
        c = best_us(lambda p=every[name]: redactor.redact(plain(p)), max(args.repeats // 4, 10))
        row = f"| {name} | {size:,} | {a:.1f} | {b:.1f} | {c:.1f} |"
        if scan:
            text = json.dumps(seeded[name], indent=1)
            row += f" {best_us(lambda t=text: scan(t), max(args.repeats // 20, 10)):.0f} |"
        print(row)
    if args.gitleaks:
        compare_gitleaks(args.gitleaks, redactor, clean)


if __name__ == "__main__":
    main()
