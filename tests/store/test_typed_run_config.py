"""The stored run is typed (migration 7): an older store migrates and resumes; an older aeh
refuses a store this one wrote, with the upgrade hint."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

import aeh
from aeh.errors import StoreError
from aeh.models import LEGACY_CONFIG_KEYS, RunConfig
from aeh.store import Store, _migrations, applied_versions

#: A store written by aeh at schema 6 (runs.config flat): smoke with the mock adapter, 2 attempts
#: of 5 tasks, seed 11, stopped after 6 of its 10 attempts (status interrupted).
OLD_STORE = Path(__file__).resolve().parents[1] / "fixtures" / "stores" / "store_v6.db"


@pytest.fixture
def old_store(tmp_path: Path) -> Path:
    copy = tmp_path / "runs.db"
    shutil.copyfile(OLD_STORE, copy)
    return copy


def _raw_config(db: Path) -> dict:
    with sqlite3.connect(db) as conn:
        return json.loads(conn.execute("SELECT config FROM runs WHERE run_id = 'old-run-v6'").fetchone()[0])


def test_the_fixture_is_a_flat_schema_6_store() -> None:
    with sqlite3.connect(OLD_STORE) as conn:
        assert applied_versions(conn)[-1] == 6
    raw = _raw_config(OLD_STORE)
    assert {"run_spec", "suite_spec", "live_checks", "harness_health", "redaction", "tasks"} <= set(raw)


def test_an_old_store_migrates_into_typed_parts(old_store: Path) -> None:
    before = _raw_config(old_store)
    with Store(old_store) as store:
        info = store.run_info("old-run-v6")
    config = info.config
    assert isinstance(config, RunConfig)
    assert config.spec == before["run_spec"] and config.spec["seed"] == 11
    assert config.suite.location == "smoke" and config.suite.hash == info.suite_hash
    assert config.tasks == before["tasks"]
    assert config.live_checks is not None and config.live_checks.attempts == before["live_checks"]["attempts"]
    assert config.health is not None and config.health.stall_threshold_s == before["harness_health"]["stall_threshold_s"]
    assert config.redaction is not None and config.redaction.salt == before["redaction"]["salt"]
    assert config.facts == {}  # every key smoke's run stored has a typed home (adapter_options: the spec's)
    raw = _raw_config(old_store)
    assert set(raw) <= set(RunConfig.model_fields) and "run_spec" not in raw  # rewritten, not read around
    with sqlite3.connect(old_store) as conn:
        assert 7 in applied_versions(conn)


def test_an_old_store_resumes_after_migrating(old_store: Path) -> None:
    result = aeh.run(resume="old-run-v6", db=old_store, progress=False)
    assert result.run_id == "old-run-v6" and result.resume is not None
    with Store(old_store) as store:
        info = store.run_info("old-run-v6")
        assert len(store.attempts_frame("old-run-v6", columns=["attempt"])) == 10
    assert info.status == "finished" and info.seed == 11
    assert info.config.spec["seed"] == 11 and info.config.suite.location == "smoke"


def test_an_aeh_older_than_the_typed_config_refuses_the_store_with_the_upgrade_hint(old_store: Path) -> None:
    Store(old_store).close()  # migrated to 7
    older = _migrations.schema.copy(up_to=6)
    with sqlite3.connect(old_store, isolation_level=None) as conn, pytest.raises(StoreError, match="upgrade aeh"):
        older.apply(conn)


def test_every_legacy_key_has_a_typed_home_and_unknown_ones_stay_facts() -> None:
    flat = {"run_spec": {"seed": 1}, "suite_spec": "smoke", "shard": "1/2", "merged_from": [{"store": "a"}],
            "adapter_options": {"x": 1}, "max_connections": 2, "solver": "noop", "judge_all": True}
    config = RunConfig.model_validate(flat)
    assert config.spec == {"seed": 1} and config.suite.location == "smoke"
    assert config.provenance.shard == "1/2" and config.provenance.merged_from == [{"store": "a"}]
    assert config.judge_all is True and config.facts == {"solver": "noop"}
    assert set(LEGACY_CONFIG_KEYS) >= {"run_spec", "suite_spec", "harness_health", "live_checks", "redaction"}
