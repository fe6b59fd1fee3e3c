"""`aeh-llama-server` picks its build from the CPU's flags and translates llama-server's flags for both."""

from __future__ import annotations

from pathlib import Path

import pytest

from aeh.integrations import llama_server as ls

AVX2_ONLY = frozenset("fpu sse2 avx avx2 fma f16c bmi2".split())
AVX512_AMX = AVX2_ONLY | {"avx512f", "avx512bw", "avx512vl", "avx512dq", "amx_tile", "amx_int8", "amx_bf16"}


def test_cpu_flags_are_read_from_the_flags_line(tmp_path: Path) -> None:
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nvendor_id\t: AuthenticAMD\nflags\t\t: fpu avx2 avx512f\nbugs\t\t: sysret_ss_attrs\n")
    assert ls.cpu_flags(info) == {"fpu", "avx2", "avx512f"}
    assert ls.cpu_flags(tmp_path / "absent") == frozenset()  # no /proc: no flags, so the portable build


@pytest.mark.parametrize("flags, skulk, expected", [
    (AVX2_ONLY, True, "xllamacpp"),        # the AVX2-only EPYC where skulk dies with SIGILL
    (AVX512_AMX - {"amx_int8"}, True, "xllamacpp"),
    (AVX512_AMX, True, "skulk"),
    (AVX512_AMX, False, "xllamacpp"),      # the CPU could, the binary is not installed
])
def test_auto_takes_skulk_only_with_every_flag_it_executes(flags: frozenset[str], skulk: bool, expected: str) -> None:
    choice = ls.choose_backend("auto", flags, skulk_installed=skulk, xllamacpp_available=True)
    assert choice.backend == expected
    if expected == "xllamacpp" and skulk:
        assert "lacks" in choice.reason and "amx_int8" in choice.reason


def test_forcing_a_build() -> None:
    assert ls.choose_backend("xllamacpp", AVX512_AMX, skulk_installed=True, xllamacpp_available=True).backend == "xllamacpp"
    assert ls.choose_backend("skulk", AVX512_AMX, skulk_installed=True, xllamacpp_available=True).backend == "skulk"
    with pytest.raises(ls.LaunchError, match=r"lacks amx_int8, amx_tile, avx512bw, avx512f, avx512vl.*SIGILL"):
        ls.choose_backend("skulk", AVX2_ONLY, skulk_installed=True, xllamacpp_available=True)
    with pytest.raises(ls.LaunchError, match="xllamacpp is not installed"):
        ls.choose_backend("xllamacpp", AVX2_ONLY, skulk_installed=True, xllamacpp_available=False)
    with pytest.raises(ls.LaunchError, match=r"no llama.cpp server installed: pip install -e '.\[llama\]'"):
        ls.choose_backend("auto", AVX2_ONLY, skulk_installed=True, xllamacpp_available=False)
    with pytest.raises(ls.LaunchError, match="unknown backend 'gpu'.*AEH_LLAMA_BACKEND"):
        ls.choose_backend("gpu", AVX2_ONLY, skulk_installed=True, xllamacpp_available=True)


def test_the_environment_forces_the_portable_build_on_any_cpu(monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(ls, "cpu_flags", lambda: AVX512_AMX)
    monkeypatch.setattr(ls, "skulk_binary", lambda: Path("/opt/skulk/bin/llama-server"))
    monkeypatch.setattr(ls, "xllamacpp_installed", lambda: True)
    monkeypatch.delenv("AEH_LLAMA_BACKEND", raising=False)
    assert ls.main(["--version"]) == 0
    assert "this CPU: skulk" in capsys.readouterr().out
    monkeypatch.setenv("AEH_LLAMA_BACKEND", "xllamacpp")
    assert ls.main(["--version"]) == 0
    assert "this CPU: xllamacpp (asked for)" in capsys.readouterr().out
    monkeypatch.setattr(ls, "cpu_flags", lambda: AVX2_ONLY)
    assert ls.main(["--version", "--backend", "skulk"]) == 2
    assert "SIGILL" in capsys.readouterr().err


def test_missing_files_are_named(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ls, "xllamacpp_installed", lambda: True)
    monkeypatch.setenv("AEH_LLAMA_BACKEND", "xllamacpp")
    assert ls.main(["-m", str(tmp_path / "nope.gguf")]) == 2
    assert f"-m {tmp_path / 'nope.gguf'}: no such file" in capsys.readouterr().err
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    assert ls.main(["-m", str(model), "--chat-template-file", str(tmp_path / "t.jinja")]) == 2
    assert "--chat-template-file" in capsys.readouterr().err


def test_llama_server_flags_reach_both_builds(tmp_path: Path) -> None:
    template = tmp_path / "t.jinja"
    template.write_text("{{ messages }}")
    args = ls.parser().parse_args(["-m", "x.gguf", "--alias", "smollm2", "--jinja", "-t", "1", "-tb", "1",
                                   "--host", "127.0.0.1", "--port", "8089", "-c", "2048", "--metrics", "--slots",
                                   "--chat-template-file", str(template)])
    cmd = ls.skulk_command(Path("/b/llama-server"), args, Path("x.gguf"))
    assert cmd[:3] == ["/b/llama-server", "-m", "x.gguf"]
    for flag in (["--alias", "smollm2"], ["-t", "1"], ["-tb", "1"], ["--port", "8089"], ["-c", "2048"],
                 ["--chat-template-file", str(template)]):
        i = cmd.index(flag[0])
        assert cmd[i:i + 2] == flag
    assert {"--jinja", "--metrics", "--slots"} <= set(cmd)
    pytest.importorskip("xllamacpp")
    p = ls.xllamacpp_params(args, Path("x.gguf"))
    assert p.model.path == "x.gguf" and p.model_alias == {"smollm2"}
    assert p.n_ctx == 2048 and p.port == 8089 and p.hostnames == ["127.0.0.1"]
    assert p.cpuparams.n_threads == 1 and p.cpuparams_batch.n_threads == 1
    assert p.use_jinja and p.chat_template == "{{ messages }}"
    assert p.endpoint_metrics and p.endpoint_slots and p.n_parallel == 4 and p.kv_unified
