"""The validators kept between processes (issue 55): a start that reads a pack's YAML skips
pydantic's schema build when an earlier process built the validators, and is never different:
the same pack, the same problems; and a kept file someone else could have written is never
unpickled."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.unit.conftest import MINIMAL_LESSON
from tutor.pack import validation

#: One process: validators kept in argv[1], the pack at argv[2] loaded from YAML.
LOAD = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    from tutor.pack import validation
    validation.kept_file = lambda: Path(sys.argv[1])
    from tutor.pack.loader import load_pack
    from tutor.pack.problems import PackError
    out = {}
    try:
        out["pack"] = repr(load_pack(Path(sys.argv[2])))
    except PackError as exc:
        out["problems"] = [str(problem) for problem in exc.problems]
    out["pydantic"] = "pydantic" in sys.modules
    print(json.dumps(out))
""")

BROKEN_LESSON = MINIMAL_LESSON + """\
    colour: blue
  - id: ex
    kind: exercise
    starter: "x = 1"
    checks: [{kind: tensor, name: y, shape: [2, "a"]}]
"""


def _load(kept: Path, pack: Path, *, bytecode: bool = True) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if not bytecode:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    out = subprocess.run([sys.executable, "-c", LOAD, str(kept), str(pack)], capture_output=True, text=True,
                         env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_a_later_process_loads_the_same_pack_and_problems_without_pydantic(make_pack, tmp_path):
    kept = tmp_path / "kept" / "validators.pickle"
    good = make_pack()
    first = _load(kept, good)
    assert kept.is_file() and first["pydantic"] is True  # built, with pydantic, and kept
    second = _load(kept, good)
    assert second == {**first, "pydantic": False}  # the same pack, pydantic never imported
    (good / "lesson.yaml").write_text(BROKEN_LESSON, encoding="utf-8")
    broken = _load(kept, good)
    assert broken["pydantic"] is False and len(broken["problems"]) >= 2, broken
    assert any("colour" in problem for problem in broken["problems"]), broken
    kept.unlink()
    assert _load(kept, good) == {**broken, "pydantic": True}  # built afresh: word for word the same


def _plant(kept: Path, stamp: object, marker: Path) -> None:
    """A kept file whose validators, once unpickled, run code: they create ``marker``."""

    class Payload:
        def __reduce__(self):
            return (os.mkdir, (str(marker),))

    kept.parent.mkdir(exist_ok=True)
    with open(kept, "wb") as handle:
        pickle.dump(stamp, handle)
        pickle.dump({"tutor.pack.models.PackHeader": Payload()}, handle)


def _stamp_of_a_process() -> object:
    code = "import pickle, sys; from tutor.pack import validation; sys.stdout.buffer.write(pickle.dumps(validation._stamp()))"
    return pickle.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60).stdout)


def test_a_kept_file_others_can_write_or_other_code_wrote_is_never_unpickled(make_pack, tmp_path):
    good = make_pack()
    kept, marker = tmp_path / "kept" / "validators.pickle", tmp_path / "ran"
    stamp = _stamp_of_a_process()
    _plant(kept, stamp, marker)  # the attack as the tutor's own user: trusted, like a .pyc file
    _load(kept, good)
    assert marker.exists()
    for mode, folder_mode, file_stamp in ((0o666, 0o755, stamp), (0o644, 0o777, stamp), (0o644, 0o755, ("other",))):
        os.rmdir(marker)
        _plant(kept, file_stamp, marker)
        kept.chmod(mode)
        kept.parent.chmod(folder_mode)
        assert "pack" in _load(kept, good)  # validated all the same, with validators built afresh
        assert not marker.exists(), (oct(mode), oct(folder_mode), file_stamp)
        os.mkdir(marker)


def test_no_file_where_python_writes_no_bytecode(make_pack, tmp_path):
    kept = tmp_path / "kept" / "validators.pickle"
    assert "pack" in _load(kept, make_pack(), bytecode=False)
    assert not kept.exists()


def test_the_kept_file_lives_beside_the_module_like_its_bytecode():
    assert validation.kept_file().parent == Path(validation.__file__).parent / "__pycache__"
