"""What redaction costs on the write path: microseconds per typical span payload.

    .venv/bin/python benchmarks/redaction.py [--repeats 2000]

Each payload is a span's attributes as the store sees them (a tool call with a short result, a
tool call returning a 4 kB document, a model turn with its messages, a grading span) — clean,
and with secrets seeded in. The time is `Redactor.redact(plain(attributes))`, what the store,
the logger and the exports run per span. Best of 5 repeats; prints a Markdown table to paste
into benchmarks/RESULTS.md. With `detect-secrets` importable (it is not a dependency), also
times its plugin scan over the same text for comparison.
"""

from __future__ import annotations

import argparse
import json
import platform
import timeit
from typing import Any

from aeh.store import Redactor
from aeh.store._redact import plain

SECRETS = ("mail bob@example.com, card 4111 1111 1111 1111, key sk-proj-abcdefghijklmnopqrstuvwx12, "
           "db postgres://app:p!ss#w0rd@db:5432/x, aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
DOC = ("Order 1042 shipped on 2025-03-14 to Berlin; 3 items, total 129.90 EUR, tracking DE123456789. " * 40)[:4000]


def payloads(seeded: bool) -> dict[str, dict[str, Any]]:
    extra = f" {SECRETS}" if seeded else ""
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
    return min(timeit.Timer(fn).repeat(repeat=5, number=repeats)) / repeats * 1e6


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2000)
    args = parser.parse_args()
    redactor = Redactor(secrets=["hunter2-configured"])
    scan = detect_secrets_scanner()
    print(f"Python {platform.python_version()}, best of 5 × {args.repeats} repeats\n")
    head = "| payload | bytes | clean µs | seeded µs |" + (" detect-secrets µs |" if scan else "")
    print(head)
    print("| --- | ---: | ---: | ---: |" + (" ---: |" if scan else ""))
    clean, seeded = payloads(False), payloads(True)
    for name in clean:
        size = len(json.dumps(seeded[name]))
        a = best_us(lambda p=clean[name]: redactor.redact(plain(p)), args.repeats)
        b = best_us(lambda p=seeded[name]: redactor.redact(plain(p)), args.repeats)
        row = f"| {name} | {size:,} | {a:.1f} | {b:.1f} |"
        if scan:
            text = json.dumps(seeded[name], indent=1)
            row += f" {best_us(lambda t=text: scan(t), max(args.repeats // 20, 10)):.0f} |"
        print(row)


if __name__ == "__main__":
    main()
