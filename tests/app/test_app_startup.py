"""Start-up: `torch-tutor` itself, in a fresh interpreter, up to its first frame with content.

What the first screen may cost is checked by what it loads, never by timing (timings are for
bench/startup.py): after the first start has filled the caches, drawing the contents or a
resumed exercise needs no YAML, no pydantic, no markdown-it, no distribution metadata scan and
no torch; and the garbage collector, paused for the start-up, is back on afterwards.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

MINI = Path(__file__).parent / "packs" / "mini"

SCRIPT = textwrap.dedent("""
    import gc, json, os, sys
    from functools import partialmethod
    from textual.app import App

    App.run = partialmethod(App.run, headless=True, size=(100, 32))
    import tutor.app.launch  # headless: no terminal needed (the command refuses to start without one)
    tutor.app.launch.at_a_terminal = lambda: True
    _display = App._display
    HEAVY = ("yaml", "pydantic", "pydantic_core", "markdown_it", "torch", "importlib.metadata")

    def shows_content(screen):
        name = type(screen).__name__
        if name == "HomeScreen":
            return any(table.row_count for table in screen.query("#toc"))
        return name == "LessonScreen" and bool(screen.query("StepView"))

    def display(self, screen, renderable):
        _display(self, screen, renderable)
        if renderable is not None and not self._batch_count and shows_content(screen):
            loaded = sorted(m for m in HEAVY if m in sys.modules)
            print("FIRST", json.dumps({"screen": type(screen).__name__, "loaded": loaded,
                                       "gc": gc.isenabled()}), flush=True)
            App._display = _display
            self.set_timer(0.3, lambda: print("LATER", json.dumps({"gc": gc.isenabled()}), flush=True)
                           or self.exit())

    App._display = display
    from tutor.cli.main import main
    sys.exit(main(sys.argv[1:]))
""")


def _start(data: Path, *args: str) -> tuple[dict, dict]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TORCH_TUTOR_")}
    env["TORCH_TUTOR_CONFIG_DIR"] = str(data / "config")
    out = subprocess.run([sys.executable, "-c", SCRIPT, "--data-dir", str(data), "--pack", str(MINI), *args],
                         capture_output=True, text=True, env=env, timeout=180)
    lines = {line.split(" ", 1)[0]: json.loads(line.split(" ", 1)[1])
             for line in out.stdout.splitlines() if line.startswith(("FIRST ", "LATER "))}
    assert "FIRST" in lines and "LATER" in lines, out.stdout[-2000:] + out.stderr[-3000:]
    return lines["FIRST"], lines["LATER"]


@pytest.mark.parametrize("resumed", [False, True], ids=["contents", "resumed-exercise"])
def test_a_second_start_loads_nothing_heavy_before_its_first_frame(tmp_path, resumed):
    if resumed:
        from tutor.record.progress import ProgressStore

        store = ProgressStore.open(tmp_path)
        store.positions.set("mini", "exercises", "double")
        store.close()
    first, later = _start(tmp_path)
    assert first["screen"] == ("LessonScreen" if resumed else "HomeScreen")
    # It reads and validates the YAML (pydantic itself only where no process kept the validators).
    assert "yaml" in first["loaded"] and "pydantic_core" in first["loaded"], "the first start reads the YAML"
    assert (tmp_path / "cache" / "packs").is_dir() and (tmp_path / "cache" / "entry-points.json").is_file()
    first, later = _start(tmp_path)
    assert first["screen"] == ("LessonScreen" if resumed else "HomeScreen")
    assert first["loaded"] == [], f"loaded before the first frame: {first['loaded']}"
    assert first["gc"] is False and later["gc"] is True


def test_a_changed_pack_is_read_again(tmp_path):
    pack = tmp_path / "pack"
    subprocess.run(["cp", "-r", str(MINI), str(pack)], check=True)
    data = tmp_path / "data"
    env = {k: v for k, v in os.environ.items() if not k.startswith("TORCH_TUTOR_")}
    env["TORCH_TUTOR_CONFIG_DIR"] = str(data / "config")

    def titles() -> list[str]:
        code = textwrap.dedent(f"""
            import json
            from pathlib import Path
            from tutor.pack.discovery import discover
            found = discover([Path({str(pack)!r})], Path({str(data)!r}), cache=True)
            print(json.dumps([f.pack.title for f in found if f.origin == "--pack"]))
        """)
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    assert titles() == ["Mini pack"]
    pack_yaml = pack / "pack.yaml"
    pack_yaml.write_text(pack_yaml.read_text().replace("title: Mini pack", "title: Renamed pack"))
    st = pack_yaml.stat()
    os.utime(pack_yaml, ns=(st.st_atime_ns, st.st_mtime_ns + 2_000_000_000))
    assert titles() == ["Renamed pack"]
