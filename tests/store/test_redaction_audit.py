"""The secret audit: every shape seeded into a suite's prompt and fixture, a tool's output and
the agent's answer; then every sink is searched for the raw values. Zero survivors.

The shapes are the 19 covered from the start and the 13 added for issue 25 (Stripe, Azure,
header values, GitLab, Hugging Face, npm, SendGrid), taken from `tests/store/shape_table.py`.

Sinks: runs.db (every table, WAL included, runs written with `db=path` and with `db=Store`),
the trace-level jsonl log and the `steps` text log, report and trace HTML, the review export,
a replayed run, imported label notes, an exported baseline, an OTLP export, a run graded
from a trajectory file (`aeh grade`) and a τ-bench import.
"""

from __future__ import annotations

import io
import json
import sqlite3
import textwrap
from pathlib import Path
from typing import Any

import pytest

import aeh
from aeh.cli import main as cli
from aeh.errors import ConfigError
from aeh.experiments import replay_run
from aeh.logs import RunLogger
from aeh.store import Store
from tests.store.shape_table import ADDED
from tests.store.shape_table import SHAPES as ADDED_SHAPES
from tests.store_support import raw_store_bytes

PEM_BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQDZq1x"
#: name -> (text seeded, the raw value that must not survive).
SHAPES: dict[str, tuple[str, str]] = {
    "email": ("jane.doe@example.org", "jane.doe@example.org"),
    "card_grouped": ("4111 1111 1111 1111", "4111 1111 1111 1111"),
    "card_context": ("card number 378282246310005", "378282246310005"),
    "openai": ("sk-proj-Abc123Def456Ghi789Jkl012Mno", "sk-proj-Abc123Def456Ghi789Jkl012Mno"),
    "anthropic": ("sk-ant-api03-Zyx987Wvu654Tsr321Qpo098Nml", "sk-ant-api03-Zyx987Wvu654Tsr321Qpo098Nml"),
    "aws_key_id": ("AKIAZ7Q2LMN4XYPR5TUV", "AKIAZ7Q2LMN4XYPR5TUV"),
    "aws_secret": ("aws_secret_access_key=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",
                   "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq8Lm3Pq2R"),
    "github_classic": ("ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8", "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"),
    "github_pat": ("github_pat_11ABCDEFG0aBcDeFgHiJkL_MnOpQrStUvWxYz0123456789AbCdEfGhIjKlMnOpQrSt",
                   "github_pat_11ABCDEFG0aBcDeFgHiJkL_MnOpQrStUvWxYz0123456789AbCdEfGhIjKlMnOpQrSt"),
    "slack_token": ("xoxb-2048-4096-AbCdEfGhIjKl", "xoxb-2048-4096-AbCdEfGhIjKl"),
    "google": ("AIzaSyD4x9Q2mN7pL1kJ8hG5fD3sA6zX0cV9bN2", "AIzaSyD4x9Q2mN7pL1kJ8hG5fD3sA6zX0cV9bN2"),
    "bearer": ("Authorization: Bearer Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5", "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5"),
    "jwt": ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJqYW5lIn0.Qm9ndXNTaWduYXR1cmVfMTIzNDU2",
            "eyJzdWIiOiJqYW5lIn0.Qm9ndXNTaWduYXR1cmVfMTIzNDU2"),
    "pem": (f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\nc2VjcmV0Ym9keWxpbmUy\n-----END RSA PRIVATE KEY-----",
            PEM_BODY),
    "slack_webhook": ("https://hooks.slack.com/services/T0ABCDEF1/B0ABCDEF2/abcdefghijklmnopqrstuvwx",
                      "T0ABCDEF1/B0ABCDEF2/abcdefghijklmnopqrstuvwx"),
    "dsn_password": ("postgres://svc:Pa55!w#rd%2Fx@db.internal:5432/app", "Pa55!w#rd%2Fx"),
    "suite_secret": ("swordfish-Quartz-42", "swordfish-Quartz-42"),
    "run_secret": ("opal-Vector-77", "opal-Vector-77"),
    "dict_key": ("keyed.user@example.net", "keyed.user@example.net"),  # seeded as a dict key below
}
# The shapes issue 25 found unredacted, from the per-shape table.
SHAPES.update({name: (text, raw) for name, (text, raw, _) in ADDED_SHAPES.items() if name in ADDED})
#: Values with no shape to find, under keys that name a secret (in dicts at any depth, header
#: lists, `name`/`value` entries and JSON text held in a string): name -> the raw value.
KEYED = {
    "authorization": "Tq3Wm8pLxRvKdNyBzQcHfGj", "x_api_key": "7f3c9aE2b8d1F4c6a0e9B7d5",
    "password": "hunter2hunter2", "proxy_authorization": "QmFzZWxpbmVQcm94eVZhbHVl",
    "cookie": "sid=Zp4Rt8Wq2Lm6Vn", "set_cookie": "session=Hx5Jk9Pb3Cy7Dt", "client_secret": "Cs9Vb2Nm5Qw8Er1Ty",
    "refresh_token": "Rt4Gh7Jk1Lz3Xc6Vb", "access_token": "At8Nm2Qw5Er9Ty3Ui", "private_key": "Pk6Lo0Ik4Uj8Yh2Tg",
    "apikey": "Ak3Sd7Fg1Hj5Kl9Zx", "passwd": "correct horse battery", "secret": "Sx1Dc5Fv9Gb3Hn7Jm",
    "json_api_key": "Jk2Wq6Er0Ty4Ui8Op", "json_password": "Jp5As9Df3Gh7Jk1Lz",
}
SUITE_PY_KEYED = f"""
@tools.tool("read_headers", params=NoArgs)
def read_headers(args: NoArgs, env: ToolEnv) -> dict:
    \"\"\"The headers the vault was read with.\"\"\"
    return {{"headers": {{"Authorization": {KEYED["authorization"]!r}, "X-Api-Key": {KEYED["x_api_key"]!r},
                          "Accept": "application/json"}},
            "password": {KEYED["password"]!r}, "password_policy": "min twelve characters", "tokens_in": 17,
            "header_list": [["Cookie", {KEYED["cookie"]!r}], ["Set-Cookie", {KEYED["set_cookie"]!r}]],
            "entries": [{{"name": "Proxy-Authorization", "value": {KEYED["proxy_authorization"]!r}}}],
            "nested": {{"deep": {{"CLIENT_SECRET": {KEYED["client_secret"]!r},
                                  "refresh-token": {KEYED["refresh_token"]!r},
                                  "accessToken": {KEYED["access_token"]!r}, "private_key": {KEYED["private_key"]!r},
                                  "apikey": {KEYED["apikey"]!r}, "passwd": {KEYED["passwd"]!r},
                                  "secret": {KEYED["secret"]!r}, "token_count": 3, "max_tokens": 64}}}},
            "body": {json.dumps(json.dumps({"api_key": KEYED["json_api_key"], "password": KEYED["json_password"]}))}}}
"""
RAW = {name: raw for name, (_, raw) in SHAPES.items()}
RAW.update({f"keyed_{name}": raw for name, raw in KEYED.items()})
SEEDED = "\n".join(text for name, (text, _) in SHAPES.items() if name != "dict_key")
RUN_SECRET = RAW["run_secret"]

SUITE_PY = '''
from aeh.tools._tools import ToolEnv, ToolRegistry
from pydantic import BaseModel

tools = ToolRegistry()
secrets = ["swordfish-Quartz-42"]


class NoArgs(BaseModel):
    pass


@tools.tool("read_vault", params=NoArgs)
def read_vault(args: NoArgs, env: ToolEnv) -> dict:
    """Read the vault file."""
    text = env.resolve("vault.txt").read_text(encoding="utf-8")
    return {"text": text, "keyed.user@example.net": "owner", "card_number": 378282246310005}
'''


def _task(task_id: str, substring: str) -> str:
    prompt = json.dumps("Summarise the vault. Context:\n" + SEEDED)
    return textwrap.dedent(f"""\
        id: {task_id}
        prompt: {prompt}
        tools: [read_vault, read_headers]
        fixtures: [fixtures/vault.txt]
        graders:
          - kind: contains
            substring: {json.dumps(substring)}
        """)


def _suite(root: Path) -> Path:
    (root / "tasks").mkdir(parents=True)
    (root / "fixtures").mkdir()
    (root / "suite.py").write_text(SUITE_PY + SUITE_PY_KEYED, encoding="utf-8")
    (root / "fixtures" / "vault.txt").write_text(SEEDED, encoding="utf-8")
    # `leak` fails (a review packet is flagged); `order` passes only when graded on the raw answer.
    (root / "tasks" / "leak.yaml").write_text(_task("leak", "a phrase the agent never writes"), encoding="utf-8")
    (root / "tasks" / "order.yaml").write_text(_task("order", "4111 1111 1111 1111"), encoding="utf-8")
    return root


def agent(task: aeh.Task, tools: Any) -> str:
    vault = tools.read_vault()
    headers = tools.read_headers()
    return f"Order 7731 paid with card 4111 1111 1111 1111. Vault:\n{vault['text']}\nHeaders: {json.dumps(headers)}"


def _survivors(text: str) -> list[str]:
    return sorted(name for name, raw in RAW.items() if raw in text)


def _db_text(path: Path) -> str:
    """Every table of the store as text, plus the raw bytes of the file and its WAL (compressed spans inflated)."""
    with sqlite3.connect(path) as conn:
        dump = "\n".join(conn.iterdump())
    conn.close()
    return dump + raw_store_bytes(path).decode("utf-8", "replace")


@pytest.fixture(scope="module")
def audit(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("audit")
    suite = _suite(tmp / "vault_suite")
    db = tmp / "runs.db"
    out: dict[str, Any] = {"tmp": tmp, "db": db}

    trace_log = io.StringIO()
    table = aeh.run(suite, agent=agent, attempts=1, seed=1, db=db, secrets=[RUN_SECRET],
                    progress=RunLogger(level="trace", fmt="jsonl", stream=trace_log))
    out["run_id"] = table.run_id
    out["trace_log"] = trace_log.getvalue()

    steps_log = io.StringIO()
    with Store(db) as store:  # a Store object, not a path: redacted alike
        aeh.run(suite, agent=agent, attempts=1, seed=2, db=store, secrets=[RUN_SECRET],
                progress=RunLogger(level="steps", stream=steps_log))
    out["steps_log"] = steps_log.getvalue()

    with pytest.raises(ConfigError, match="configured secret"):
        replay_run(out["run_id"], db=db, progress=False)
    out["replay_id"] = replay_run(out["run_id"], db=db, secrets=[RUN_SECRET], progress=False)

    run_id = out["run_id"]
    out["trace_html"] = tmp / "trace.html"
    assert cli(["trace", "--run-id", run_id, "--task", "leak", "--out", str(out["trace_html"]), "--db", str(db)]) == 0
    review = tmp / "review.jsonl"
    assert cli(["review", "--run-id", run_id, "--all", "--export", str(review), "--db", str(db)]) == 0
    out["review"] = review
    labels = [dict(json.loads(line), label=False, reviewer=RAW["email"], note=SEEDED)
              for line in review.read_text(encoding="utf-8").splitlines()]
    labelled = tmp / "labels.jsonl"
    labelled.write_text("\n".join(json.dumps(x) for x in labels), encoding="utf-8")
    # The suite's secrets come from the suite the run recorded; a run's own --secret is given again.
    assert cli(["review", "--run-id", run_id, "--import", str(labelled), "--secret", RUN_SECRET,
                "--db", str(db)]) == 0
    out["baseline"] = tmp / "baseline.json"
    assert cli(["baseline", "save", run_id, "--out", str(out["baseline"]), "--suite", str(suite),
                "--db", str(db)]) == 0
    out["otel"] = tmp / "run.otlp.json"
    assert cli(["export", "otel", run_id, "--out", str(out["otel"]), "--db", str(db)]) == 0

    trajectory = {"task_id": "leak", "final_output": SEEDED,
                  "steps": [{"kind": "tool", "name": "read_vault", "args": {"q": SEEDED},
                             "result": {"text": SEEDED, RAW["dict_key"]: 1}}]}
    recorded = tmp / "recorded.jsonl"
    recorded.write_text(json.dumps(trajectory) + "\n", encoding="utf-8")
    assert cli(["grade", "--suite", str(suite), str(recorded), "--secret", RUN_SECRET, "--db", str(db)]) == 0

    call = {"id": "c1", "type": "function",
            "function": {"name": "read_vault", "arguments": json.dumps({"q": SEEDED, RAW["dict_key"]: 1})}}
    tau = [{"task_id": 1, "trial": 0, "reward": 0.0, "info": {"note": SEEDED},
            "traj": [{"role": "user", "content": SEEDED},
                     {"role": "assistant", "content": None, "tool_calls": [call]},
                     {"role": "tool", "tool_call_id": "c1", "content": SEEDED},
                     {"role": "assistant", "content": SEEDED}]}]
    tau_file = tmp / "tau.json"
    tau_file.write_text(json.dumps(tau), encoding="utf-8")
    # Another harness's file: no suite, so its configured secrets are given on the command line.
    assert cli(["import", "tau-bench", str(tau_file), "--secret", RAW["suite_secret"], "--secret", RUN_SECRET,
                "--db", str(db)]) == 0
    return out


def test_the_seeds_are_where_the_audit_looks(audit: dict[str, Any]) -> None:
    vault = (audit["tmp"] / "vault_suite" / "fixtures" / "vault.txt").read_text(encoding="utf-8")
    suite_py = (audit["tmp"] / "vault_suite" / "suite.py").read_text(encoding="utf-8")
    assert _survivors(vault + RAW["dict_key"] + suite_py) == sorted(RAW)  # the audit would see every raw value


def test_store_holds_no_raw_secret(audit: dict[str, Any]) -> None:
    text = _db_text(audit["db"])
    assert _survivors(text) == []
    assert "[REDACTED:private_key]" in text and "[REDACTED:jwt]" in text and "[REDACTED:password]" in text
    # Ordinary fields beside the secret-named ones keep their values.
    assert "min twelve characters" in text and '"tokens_in": 17' in text and '"max_tokens": 64' in text


def test_logs_hold_no_raw_secret(audit: dict[str, Any]) -> None:
    assert '"event": "span"' in audit["trace_log"] and "read_vault" in audit["steps_log"]
    assert _survivors(audit["trace_log"]) == []
    assert _survivors(audit["steps_log"]) == []


def test_files_hold_no_raw_secret(audit: dict[str, Any]) -> None:
    for key in ("trace_html", "review", "baseline", "otel"):
        text = audit[key].read_text(encoding="utf-8")
        assert text and _survivors(text) == [], key


def test_replay_is_redacted_and_keeps_verdicts_graded_on_raw_answers(audit: dict[str, Any]) -> None:
    original = aeh.attempts(audit["run_id"], db=audit["db"]).set_index("task_id")["success"].to_dict()
    replayed = aeh.attempts(audit["replay_id"], db=audit["db"]).set_index("task_id")["success"].to_dict()
    # `order` passed on the raw answer; its stored answer reads [REDACTED:card], so the replay
    # keeps the stored verdict instead of failing a correct answer.
    assert original == replayed == {"leak": False, "order": True}


@pytest.mark.slow
def test_report_html_holds_no_raw_secret(audit: dict[str, Any]) -> None:
    out = audit["tmp"] / "report.html"
    assert cli(["report", "--run-id", audit["run_id"], "--out", str(out), "--db", str(audit["db"])]) == 0
    assert _survivors(out.read_text(encoding="utf-8")) == []
