"""The foundation commands, through the real `torch-tutor` entry point in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.unit.conftest import install_tiny_pack, write_one_lesson_pack

BUILTIN = Path(__file__).resolve().parents[2] / "lessons" / "debugging-and-speed"


def tutor(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "tutor", *args], capture_output=True, text=True,
                          env=full_env, cwd=cwd, timeout=60)


@pytest.fixture
def isolated(tmp_path: Path) -> dict[str, str]:
    """Config and data under tmp_path, so the learner's real files are never touched."""
    return {"TORCH_TUTOR_CONFIG_DIR": str(tmp_path / "config"), "TORCH_TUTOR_DATA_DIR": str(tmp_path / "data")}


def test_version_and_help():
    out = tutor("--version")
    assert out.returncode == 0 and out.stdout.startswith("torch-tutor ")
    for command in ([], ["list"], ["validate"], ["schema"], ["config"]):
        out = tutor(*command, "--help")
        assert out.returncode == 0, command
        assert "exit codes:" in out.stdout and "usage error" in out.stdout


def test_list_shows_the_builtin_pack(isolated):
    out = tutor("list", env=isolated)
    assert out.returncode == 0
    assert "debugging-and-speed" in out.stdout and "[built-in]" in out.stdout
    rows = json.loads(tutor("list", "--json", env=isolated).stdout)
    row = next(r for r in rows if r["id"] == "debugging-and-speed")
    assert row["origin"] == "built-in" and row["lessons"] >= 1 and row["version"]


def test_list_includes_pack_folders_user_packs_and_broken_packs(make_pack, tmp_path, isolated):
    extra = make_pack()
    write_one_lesson_pack(Path(isolated["TORCH_TUTOR_DATA_DIR"]) / "packs" / "mine", "mine", "Mine", "2")
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "pack.yaml").write_text("id: [\n")
    rows = json.loads(tutor("--pack", str(extra), "--pack", str(broken), "list", "--json", env=isolated).stdout)
    origins = {row["id"]: row["origin"] for row in rows}
    assert origins["demo"] == "--pack" and origins["mine"] == "user folder"
    broken_row = next(r for r in rows if r["path"] == str(broken))
    assert broken_row["id"] is None and "YAML syntax" in broken_row["problems"][0]
    text = tutor("--pack", str(broken), "list", env=isolated).stdout
    assert "broken pack" in text and "torch-tutor validate" in text


def test_validate_exit_codes(make_pack, tmp_path):
    good = tutor("validate", str(BUILTIN), "--no-run") if "--no-run" in tutor("validate", "--help").stdout \
        else tutor("validate", str(BUILTIN))
    assert good.returncode == 0, good.stdout + good.stderr
    bad_root = make_pack(files={"lesson.yaml": "id: x\ntitle: T\nsteps: [{id: a, kind: prose, bdy: b}]\n"})
    bad = tutor("validate", str(bad_root))
    assert bad.returncode == 1
    assert f"{bad_root / 'lesson.yaml'}:3:" in bad.stdout and "did you mean 'body'" in bad.stdout
    assert "Traceback" not in bad.stdout + bad.stderr
    data = json.loads(tutor("validate", str(bad_root), "--json").stdout)
    problems = data[0]["problems"] if isinstance(data, list) else data["packs"][0]["problems"]
    assert problems[0]["line"] == 3
    usage = tutor("validate")
    assert usage.returncode == 2 and "usage:" in usage.stderr
    assert tutor("validate", str(tmp_path / "missing")).returncode == 1


def test_config_sources_and_bad_config(tmp_path, isolated):
    config_dir = Path(isolated["TORCH_TUTOR_CONFIG_DIR"])
    config_dir.mkdir()
    (config_dir / "config.toml").write_text("theme = 'light'\nwall_time = 5\n")
    env = {**isolated, "TORCH_TUTOR_WALL_TIME": "7"}
    rows = {r["name"]: r for r in json.loads(tutor("config", "--json", env=env).stdout)["settings"]}
    assert rows["theme"]["value"] == "light" and "config file" in rows["theme"]["source"]
    assert rows["wall_time"]["value"] == 7.0 and rows["wall_time"]["source"] == "environment TORCH_TUTOR_WALL_TIME"
    assert rows["workers"]["source"] == "default"
    assert rows["data_dir"]["value"] == isolated["TORCH_TUTOR_DATA_DIR"]
    flag = {r["name"]: r for r in json.loads(tutor("--data-dir", str(tmp_path / "d"), "config", "--json",
                                                   env=env).stdout)["settings"]}
    assert flag["data_dir"]["source"] == "command line"

    (config_dir / "config.toml").write_text("theme = 'light'\nwal_time = 5\n")
    out = tutor("config", env=isolated)
    assert out.returncode == 2 and "config.toml:2" in out.stderr and "did you mean 'wall_time'" in out.stderr
    (config_dir / "config.toml").write_text("theme = 'light'\nworkers = 'many'\n")
    out = tutor("list", env=isolated)
    assert out.returncode == 2 and "config.toml:2: workers: expected a whole number" in out.stderr
    (config_dir / "config.toml").write_text("theme = \n")
    out = tutor("config", env=isolated)
    assert out.returncode == 2 and "config.toml:1" in out.stderr and "Traceback" not in out.stderr
    out = tutor("config", env={**isolated, "TORCH_TUTOR_THEME": "purple"})
    assert out.returncode == 2


def test_entry_point_packs_are_discovered(tmp_path, isolated):
    """A pack published as a Python package (entry point torch_tutor.packs) shows in `list`."""
    site = tmp_path / "site"
    package = install_tiny_pack(site)
    env = {**isolated, "PYTHONPATH": str(site)}
    rows = json.loads(tutor("list", "--json", env=env).stdout)
    row = next(r for r in rows if r["id"] == "tiny")
    assert row["origin"] == "package tiny-pack" and row["path"] == str(package)


def test_a_guarded_handler_keeps_its_name_and_turns_usage_errors_into_exit_2(capsys):
    import argparse

    from tutor.cli.common import UsageError, guarded

    @guarded
    def cmd_demo(args: argparse.Namespace) -> int:
        """Say hello to a name."""
        if not args.name:
            raise UsageError("a name is needed")
        return 0

    assert (cmd_demo.__name__, cmd_demo.__doc__) == ("cmd_demo", "Say hello to a name.")
    assert cmd_demo(argparse.Namespace(name="x")) == 0
    assert cmd_demo(argparse.Namespace(name="")) == 2
    assert capsys.readouterr().err == "torch-tutor: error: a name is needed\n"
