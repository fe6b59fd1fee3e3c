"""The one registry type behind every extension point."""

from __future__ import annotations

from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from aeh._util import registry as _registry
from aeh._util.registry import Registry, RegistryError


class _One:
    pass


class _Other:
    pass


def test_builtins_register_and_describe_their_source() -> None:
    reg: Registry[type] = Registry("adapter")
    reg.register("one", _One)
    reg.register("one", _One)  # the same object again is not a collision
    assert reg.names() == ["one"] and reg.get("one") is _One
    assert reg.describe() == {"one": "builtin"}


def test_a_name_collision_is_an_error_naming_both_sources() -> None:
    reg: Registry[type] = Registry("adapter")
    reg.register("one", _One)
    with pytest.raises(RegistryError, match=r"adapter 'one' is registered twice: by builtin and by pkg-x"):
        reg.register("one", _Other, source="pkg-x")


def test_an_entry_point_colliding_with_a_builtin_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    ep = EntryPoint(name="one", value=f"{__name__}:_Other", group="aeh.test")
    monkeypatch.setattr(_registry, "group_entry_points", lambda group, **_: [ep] if group == "aeh.test" else [])
    reg: Registry[type] = Registry("adapter", group="aeh.test")
    reg.register("one", _One)
    with pytest.raises(RegistryError, match=r"by builtin and by entry point aeh\.test:one"):
        reg.names()


def test_entry_points_load_once_and_plugins_installed_later_are_found(monkeypatch: pytest.MonkeyPatch) -> None:
    installed: list[EntryPoint] = []
    monkeypatch.setattr(_registry, "group_entry_points", lambda group, **_: list(installed))
    reg: Registry[type] = Registry("adapter", group="aeh.test")
    assert "late" not in reg
    installed.append(EntryPoint(name="late", value=f"{__name__}:_One", group="aeh.test"))
    assert "late" in reg and reg.get("late") is _One
    assert reg.describe()["late"].startswith("entry point aeh.test:late")


def test_a_broken_plugin_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    ep = EntryPoint(name="broken", value="no_such_module_xyz:thing", group="aeh.test")
    monkeypatch.setattr(_registry, "group_entry_points", lambda group, **_: [ep])
    with pytest.raises(RegistryError, match="plugin 'broken' .* failed to load"):
        Registry("adapter", group="aeh.test").names()


def test_the_entry_point_scan_is_cached_until_a_package_appears(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    site = tmp_path / "site-packages"
    site.mkdir()
    work = tmp_path / "notebooks"  # a working directory on sys.path, where runs.db comes and goes
    work.mkdir()
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.syspath_prepend(str(work))
    monkeypatch.setattr(_registry, "RECHECK_S", 0.0)  # look at sys.path on every call
    assert _registry.group_entry_points("aeh.cache_test") == []
    calls = []
    real = _registry._entry_points_with_homes
    monkeypatch.setattr(_registry, "_entry_points_with_homes", lambda: calls.append(1) or real())
    assert _registry.group_entry_points("aeh.cache_test") == [] and not calls  # unchanged path: no rescan
    time.sleep(0.01)  # a new mtime, even on coarse clocks
    (work / "runs.db-wal").write_text("")
    assert _registry.group_entry_points("aeh.cache_test") == [] and not calls  # not a place for packages
    dist = site / "late_plugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: late-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[aeh.cache_test]\nlate = json:dumps\n")
    found = _registry.group_entry_points("aeh.cache_test")
    assert [ep.name for ep in found] == ["late"] and calls == [1]


def test_a_name_missed_right_after_a_package_appears_is_found_at_once(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from aeh._util.registry import Registry

    monkeypatch.setattr(_registry, "RECHECK_S", 3600.0)  # the periodic check never comes
    registry: Registry[object] = Registry("thing", group="aeh.late_test")
    assert "late" not in registry
    target = tmp_path / "target"  # a `pip install --target` directory put on sys.path afterwards
    dist = target / "late_thing-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: late-thing\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[aeh.late_test]\nlate = json:dumps\n")
    monkeypatch.syspath_prepend(str(target))
    import json

    assert registry.get("late") is json.dumps
