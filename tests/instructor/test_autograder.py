"""The Gradescope bundle, installed for real into a fresh virtual environment from its own wheels
(offline: no package index at all when this machine has a torch wheel on disk), grading a right, a
wrong and a hostile submission; and the GitHub Classroom setup's commands."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import jsonschema
import pytest
import yaml

from tutor.grading.autograder import results_schema
from tutor.core.loader import load_pack
from tutor.core.scaffold import scaffold

RIGHT = "def bumped(t):\n    return t + 1\n"
WRONG = "def bumped(t):\n    t += 1\n    return t\n"
LOCAL_WHEELS = Path("/opt/wheels")


def tutor(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tutor", *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=900, cwd=cwd)


def _torch_pip_args() -> str | None:
    """Where setup.sh gets torch here: this machine's wheel folder when it has one (offline)."""
    if "TORCH_TUTOR_TEST_TORCH_PIP_ARGS" in os.environ:
        return os.environ["TORCH_TUTOR_TEST_TORCH_PIP_ARGS"]
    if list(LOCAL_WHEELS.glob("torch-*.whl")):
        return f"--no-index --find-links {LOCAL_WHEELS}"
    return None


def _offline() -> bool:
    """Whether setup.sh runs with every package index switched off (torch from a local file)."""
    return "--no-index" in (_torch_pip_args() or "")


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    base = tmp_path_factory.mktemp("gradescope")
    pack = base / "pack"
    scaffold(pack, title="Autograder test")
    bundle = base / "autograder.zip"
    built = tutor("autograder", str(pack), "--gradescope", str(bundle))
    assert built.returncode == 0, built.stderr
    root = base / "autograder"
    (root / "source").mkdir(parents=True)
    with zipfile.ZipFile(bundle) as archive:
        archive.extractall(root / "source")
    for name in ("setup.sh", "run_autograder"):  # zipfile does not restore modes; Gradescope does
        (root / "source" / name).chmod(0o755)
    env = {"AUTOGRADER_ROOT": str(root)}
    if _torch_pip_args() is not None:
        env["TORCH_PIP_ARGS"] = _torch_pip_args()
    # A fresh venv from a clean environment: nothing of this checkout on the path. torch-tutor, the
    # pack and every dependency install from the bundle's wheels. With a local torch wheel, pip's
    # configuration (its indexes) is dropped and every index switched off, so nothing downloads.
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHON"))}
    clean["PATH"] = os.pathsep.join(p for p in clean["PATH"].split(os.pathsep) if ".venv" not in p)
    if _offline():
        clean.update(PIP_CONFIG_FILE=os.devnull, PIP_NO_INDEX="1")
        clean.pop("PIP_EXTRA_INDEX_URL", None)
        clean.pop("PIP_INDEX_URL", None)
    setup = subprocess.run(["bash", str(root / "source" / "setup.sh")], capture_output=True, text=True,
                           env={**clean, **env}, timeout=1800)
    return {"base": base, "root": root, "bundle": bundle, "setup": setup, "env": {**clean, **env}, "pack": pack}


def run_autograder(installed, files: dict[str, str | bytes]) -> tuple[subprocess.CompletedProcess, dict]:
    root = installed["root"]
    submission = root / "submission"
    results = root / "results" / "results.json"
    if submission.exists():
        for path in sorted(submission.rglob("*"), reverse=True):
            path.unlink() if not path.is_dir() else path.rmdir()
    submission.mkdir(exist_ok=True)
    if results.exists():
        results.unlink()
    for name, content in files.items():
        (submission / name).write_bytes(content if isinstance(content, bytes) else content.encode())
    done = subprocess.run(["bash", str(root / "source" / "run_autograder")], capture_output=True, text=True,
                          env=installed["env"], timeout=900, cwd=root)
    data = json.loads(results.read_text()) if results.exists() else {}
    return done, data


def test_bundle_layout(installed):
    with zipfile.ZipFile(installed["bundle"]) as archive:
        names = sorted(archive.namelist())
        modes = {i.filename: i.external_attr >> 16 for i in archive.infolist()}
    assert names[:2] == ["run_autograder", "setup.sh"]
    assert any(n.startswith("wheels/torch_tutor-") for n in names)
    assert "wheels/torch_tutor_pack_pack-0.1.0-py3-none-any.whl" in names
    deps = {n.split("/")[-1].split("-")[0].lower() for n in names if n.startswith("wheels/deps/")}
    # torch-tutor's dependencies and torch's, but never torch itself (it comes from PyTorch's index)
    assert {"numpy", "pydantic", "pydantic_core", "textual", "pyyaml", "sympy", "jinja2"} <= deps
    assert "torch" not in deps and "torch_tutor" not in deps
    assert modes["setup.sh"] & 0o111 and modes["run_autograder"] & 0o111
    setup = (installed["root"] / "source" / "setup.sh").read_text()
    assert 'torch==2.13.0"' in setup and "download.pytorch.org/whl/cpu" in setup
    assert "--no-index" in setup and f'WANT="{sys.version_info.major}.{sys.version_info.minor}"' in setup


@pytest.mark.slow
def test_setup_installs_from_the_bundled_wheels(installed):
    setup = installed["setup"]
    assert setup.returncode == 0, setup.stdout[-2000:] + setup.stderr[-3000:]
    assert "fetching them from the index" not in setup.stdout  # the bundled wheels fit this Python
    venv = installed["root"] / "venv"
    listed = subprocess.run([str(venv / "bin" / "torch-tutor"), "list"], capture_output=True, text=True,
                            env=installed["env"], timeout=300, cwd=installed["base"])
    assert "pack" in listed.stdout  # the pack came in by its entry point, from the bundled wheel
    where = subprocess.run([str(venv / "bin" / "python"), "-c", "import tutor, torch; print(tutor.__file__, "
                            "torch.__version__)"], capture_output=True, text=True, timeout=300,
                           cwd=installed["base"])
    assert str(venv) in where.stdout and "2.13.0" in where.stdout  # not this checkout


@pytest.mark.slow
@pytest.mark.parametrize("files, score, status", [
    ({"add-to-copy.py": RIGHT}, 1.0, "passed"),
    ({"add-to-copy.py": WRONG}, 0.3333, "failed"),
])
def test_run_autograder_grades_like_grade(installed, files, score, status):
    assert installed["setup"].returncode == 0
    done, results = run_autograder(installed, files)
    assert done.returncode == 0, done.stderr
    jsonschema.validate(results, results_schema())
    assert results["score"] == score
    (test,) = results["tests"]
    assert (test["name"], test["status"], test["max_score"]) == ("add-to-copy", status, 1.0)
    assert "Isolation:" in results["output"]
    if status == "failed":
        assert "FAIL  leaves the caller's tensor as it was" in test["output"]
        assert "hint: `t += 1` writes" in test["output"]


@pytest.mark.slow
def test_run_autograder_on_a_hostile_submission(installed):
    assert installed["setup"].returncode == 0
    root = installed["root"]
    forged = json.dumps({"score": 100, "tests": []})
    hostile = (f"import os\nfor p in [{str(root / 'results' / 'results.json')!r}, 'results/results.json']:\n"
               f"    try:\n        open(p, 'w').write({forged!r})\n    except OSError:\n        pass\n"
               "print('{\"passed\": true}')\nos._exit(0)\n")
    done, results = run_autograder(installed, {"add-to-copy.py": hostile, "notes.txt": "hello",
                                               "extra.handin.zip": b"PK\x03\x04 not a zip"})
    assert done.returncode == 0, done.stderr
    jsonschema.validate(results, results_schema())
    assert results["score"] == 0
    by_name = {t["name"]: t for t in results["tests"]}
    assert by_name["add-to-copy"]["status"] == "failed" and by_name["add-to-copy"]["score"] == 0
    assert any("bad-archive" in name for name in by_name) and any("unrecognised" in name for name in by_name)


def test_the_schema_refuses_what_gradescope_does_not_document():
    schema = results_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    good = {"score": 1, "execution_time": 3, "stdout_visibility": "hidden",
            "tests": [{"name": "a", "score": 1, "max_score": 1, "status": "passed", "visibility": "visible"}]}
    jsonschema.validate(good, schema)
    for bad in ({"tests": [{"name": "a"}]},  # no score anywhere
                {**good, "tests": [{"name": "a", "score": 1, "status": "ok"}]},
                {**good, "visibility": "sometimes"},
                {**good, "grade": 3}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)


def test_github_classroom_setup_runs_check_per_exercise(tmp_path):
    pack = tmp_path / "pack"
    scaffold(pack, title="Classroom test")
    text = (pack / "01-first-lesson.yaml").read_text().replace("    kind: exercise\n",
                                                               "    kind: exercise\n    points: 5\n")
    (pack / "01-first-lesson.yaml").write_text(text)
    repo = tmp_path / "starter"
    done = tutor("autograder", str(pack), "--github-classroom", str(repo))
    assert done.returncode == 0, done.stderr
    workflow = yaml.safe_load((repo / ".github" / "workflows" / "classroom.yml").read_text())
    steps = workflow["jobs"]["run-autograding-tests"]["steps"]
    (grader,) = [s for s in steps if s.get("uses", "").startswith("classroom-resources/autograding-command-grader")]
    assert grader["with"]["max-score"] == 5 and grader["id"] == "add-to-copy"
    reporter = steps[-1]
    assert reporter["with"]["runners"] == "add-to-copy"
    assert reporter["env"] == {"ADD-TO-COPY_RESULTS": "${{steps.add-to-copy.outputs.result}}"}
    config = json.loads((repo / ".github" / "classroom" / "autograding.json").read_text())
    assert config["tests"][0]["points"] == 5 and config["tests"][0]["run"] == grader["with"]["command"]
    assert (repo / "add-to-copy.py").read_text() == load_pack(pack).exercises()[0][1].starter
    assert list((repo / ".torch-tutor" / "wheels").glob("torch_tutor-*.whl"))
    # the command itself, as the runner would run it in the repository: the starter fails, a fix passes
    command = grader["with"]["command"].split()
    assert command[:2] == ["torch-tutor", "check"]
    env = {"TORCH_TUTOR_DATA_DIR": str(tmp_path / "d")}
    assert tutor(*command[1:], env=env, cwd=repo).returncode == 1
    (repo / "add-to-copy.py").write_text(RIGHT)
    passed = tutor(*command[1:], env=env, cwd=repo)
    assert passed.returncode == 0, passed.stdout + passed.stderr


@pytest.mark.slow
def test_run_autograder_on_a_handin_archive(installed, tmp_path):
    from tutor.core.handin import write_handin

    assert installed["setup"].returncode == 0
    archive = write_handin(tmp_path / "ann-pack.handin.zip", learner="Ann", pack_id="pack", pack_version="0.1.0",
                           tutor_version="t", exercises={"add-to-copy": (RIGHT, True)}, quizzes={})
    done, results = run_autograder(installed, {"ann-pack.handin.zip": archive.read_bytes()})
    assert done.returncode == 0, done.stderr
    jsonschema.validate(results, results_schema())
    assert results["score"] == 1.0 and [t["name"] for t in results["tests"]] == ["add-to-copy"]


def test_dependency_pins_follow_the_target_python():
    from tutor.grading.autograder import dependency_pins

    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    pins, missing = dependency_pins(here)
    names = {pin.split("==")[0] for pin in pins}
    assert {"numpy", "pydantic", "pydantic-core", "textual", "sympy", "filelock"} <= names
    assert not names & {"torch", "torch-tutor"} and missing == []
    assert all(pin.count("==") == 1 for pin in pins)
    # a 3.10 target needs tomli (torch-tutor reads TOML with it there), whether or not it is here
    pins310, missing310 = dependency_pins("3.10")
    assert any(p.startswith("tomli") for p in pins310 + missing310)
    assert not any(p.startswith("tomli") for p in pins)
