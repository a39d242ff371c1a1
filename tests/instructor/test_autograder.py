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
from tutor.pack.loader import load_pack
from tutor.pack.scaffold import scaffold

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
    # Without byte-compiling every file of torch at install (pip's default: ~18 s of CPU, the largest
    # part of setup.sh's time here): what the runs import is compiled once, just below. pip reads
    # PIP_NO_COMPILE backwards ("0" is --no-compile). What setup.sh installs is unchanged.
    clean["PIP_NO_COMPILE"] = "0"
    setup = subprocess.run(["bash", str(root / "source" / "setup.sh")], capture_output=True, text=True,
                           env={**clean, **env}, timeout=1800)
    if setup.returncode == 0:  # runs import torch inside bubblewrap, where site-packages is read-only
        subprocess.run([str(root / "venv" / "bin" / "python"), "-c", "import torch"], env={**clean, **env},
                       capture_output=True, timeout=600)
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
    ({"add-to-copy.py": WRONG}, 0.33, "failed"),  # 1/3 rounded half up to 2 places, as every output
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


def _classroom_pack(tmp_path: Path, points: int) -> Path:
    pack = tmp_path / "pack"
    scaffold(pack, title="Classroom test")
    lesson = pack / "01-first-lesson.yaml"
    text = lesson.read_text().replace("    kind: exercise\n", f"    kind: exercise\n    points: {points}\n")
    lesson.write_text(text.replace("    style: choice\n", "    style: choice\n    points: 1\n"))
    return pack


def _run_like_classroom(repo: Path, steps: list[dict], env: dict[str, str]) -> tuple[int, int, dict[str, str]]:
    """The workflow's steps after the install, as the runner runs them: `run` steps through bash,
    each command grader's command granting its max-score on exit 0 (and nothing on stderr)."""
    import shlex

    earned, possible, outputs = 0, 0, {}
    for step in steps:
        # The install step's wheel path names .torch-tutor too: run here, it replaced this
        # checkout's editable install in the venv running the tests with a copy of the wheel.
        if "run" in step and "torch-tutor" in step["run"] and "pip install" not in step["run"]:
            done = subprocess.run(["bash", "-c", step["run"].replace("torch-tutor ", f"{sys.executable} -m tutor ")],
                                  capture_output=True, text=True, env={**os.environ, **env}, cwd=repo, timeout=900)
            assert done.returncode == 0, done.stdout + done.stderr
        elif step.get("uses", "").startswith("classroom-resources/autograding-command-grader"):
            command = shlex.split(step["with"]["command"])
            assert command[0] == "torch-tutor"
            done = tutor(*command[1:], env=env, cwd=repo)
            possible += step["with"]["max-score"]
            if done.returncode == 0 and not done.stderr:
                earned += step["with"]["max-score"]
            outputs[step["with"]["test-name"]] = done.stdout
    return earned, possible, outputs


def test_github_classroom_gives_partial_credit_per_check_and_quiz_points(tmp_path):
    """Classroom grants a test's points all or nothing: one test per check, worth its share of the
    exercise's points, and one per graded quiz (its answer from a hand-in archive committed to the
    repository) add up to what `grade` gives the same files."""
    from tutor.record.handin import write_handin

    pack = _classroom_pack(tmp_path, points=3)
    repo = tmp_path / "starter"
    done = tutor("autograder", str(pack), "--github-classroom", str(repo))
    assert done.returncode == 0, done.stderr
    assert "and 1 starter file(s)" in done.stdout and "Classroom points" not in done.stdout  # shares are whole
    workflow = yaml.safe_load((repo / ".github" / "workflows" / "classroom.yml").read_text())
    steps = workflow["jobs"]["run-autograding-tests"]["steps"]
    graders = [s for s in steps if s.get("uses", "").startswith("classroom-resources/autograding-command-grader")]
    assert [(g["with"]["test-name"], g["with"]["max-score"]) for g in graders] == [
        ("add-to-copy: values", 1), ("add-to-copy: caller-unchanged", 1), ("add-to-copy: new-memory", 1),
        ("quiz first-lesson/which-is-a-view", 1)]
    reporter = steps[-1]
    assert reporter["with"]["runners"] == ",".join(g["id"] for g in graders)
    config = json.loads((repo / ".github" / "classroom" / "autograding.json").read_text())
    assert [(t["name"], t["points"], t["run"]) for t in config["tests"]] == [
        (g["with"]["test-name"], g["with"]["max-score"], g["with"]["command"]) for g in graders]
    assert (repo / "add-to-copy.py").read_text() == load_pack(pack).exercises()[0][1].starter
    # a learner's push: the wrong fix (1 check of 3) and a hand-in archive with the quiz right
    (repo / "add-to-copy.py").write_text(WRONG)
    write_handin(repo / "me-pack.handin.zip", learner="me", pack_id="pack", pack_version="0.1.0", tutor_version="t",
                 exercises={}, quizzes={"first-lesson/which-is-a-view": {"answer": "0", "correct": True}})
    env = {"TORCH_TUTOR_DATA_DIR": str(tmp_path / "d")}
    earned, possible, outputs = _run_like_classroom(repo, steps, env)
    assert (earned, possible) == (2, 4), outputs
    assert outputs["add-to-copy: values"].startswith("PASS add-to-copy, check values")
    assert outputs["add-to-copy: caller-unchanged"].startswith("FAILED add-to-copy, check caller-unchanged")
    assert "hint: `t += 1` writes" in outputs["add-to-copy: caller-unchanged"]
    # the same files through `grade`: the same points
    subs = tmp_path / "subs" / "me"
    subs.mkdir(parents=True)
    (subs / "add-to-copy.py").write_text(WRONG)
    (subs / "me-pack.handin.zip").write_bytes((repo / "me-pack.handin.zip").read_bytes())
    graded = tutor("grade", str(pack), str(tmp_path / "subs"), "--totals", str(tmp_path / "t.csv"), "--unisolated",
                   env=env)
    assert graded.returncode == 0, graded.stderr
    assert (tmp_path / "t.csv").read_text().splitlines()[1].split(",")[3:] == ["2", "4"]
    # a stale or forged results file is not what the tests read: the grading step deletes it first
    (repo / "add-to-copy.py").write_text("def bumped(t)\n")
    earned, _possible, outputs = _run_like_classroom(repo, steps, env)
    assert earned == 1 and outputs["add-to-copy: values"].startswith("SKIPPED"), outputs

    # issue 51: loose files and no archive: the quiz's test fails and says why, out of the same 4
    (repo / "add-to-copy.py").write_text(WRONG)
    (repo / "me-pack.handin.zip").unlink()
    earned, possible, outputs = _run_like_classroom(repo, steps, env)
    assert (earned, possible) == (1, 4), outputs
    quiz = outputs["quiz first-lesson/which-is-a-view"]
    assert quiz.startswith("FAIL first-lesson/which-is-a-view: missing: no answer: loose .py files carry no "
                           "quiz answers; the archive `torch-tutor handin` writes does"), quiz


def test_github_classroom_points_that_are_not_whole(tmp_path):
    """1 point over 3 checks: Classroom takes whole numbers, so every test is worth x100 and an
    exercise's tests add up to its points exactly; the summary line says so."""
    pack = _classroom_pack(tmp_path, points=1)
    wheel = tmp_path / "torch_tutor-0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("x", "")
    repo = tmp_path / "starter"
    done = tutor("autograder", str(pack), "--github-classroom", str(repo), "--tutor-wheel", str(wheel))
    assert done.returncode == 0, done.stderr
    assert "worth 100 Classroom points (a total of 200 means 2 of the pack's points)" in done.stdout
    workflow = yaml.safe_load((repo / ".github" / "workflows" / "classroom.yml").read_text())
    scores = [s["with"]["max-score"] for s in workflow["jobs"]["run-autograding-tests"]["steps"]
              if "with" in s and "max-score" in s["with"]]
    assert scores[:3] in ([34, 33, 33], [33, 34, 33], [33, 33, 34]) and scores[3] == 100
    (repo / "add-to-copy.py").write_text("kept")
    again = tutor("autograder", str(pack), "--github-classroom", str(repo), "--tutor-wheel", str(wheel))
    assert "starter file(s)" not in again.stdout and "kept your add-to-copy.py" in again.stdout
    assert (repo / "add-to-copy.py").read_text() == "kept"


@pytest.mark.slow
def test_run_autograder_on_a_handin_archive(installed, tmp_path):
    from tutor.record.handin import write_handin

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


def test_the_github_classroom_starter_repository_carries_no_solution(tmp_path):
    """Every student clones the starter repository: no reference solution may reach it (issue 26,
    part 3), nor the author's YAML comments; the pack there still runs `check`."""
    pack = tmp_path / "pack"
    scaffold(pack, title="Leak test")
    marker = "SECRET_REFERENCE_7f3a"
    lesson = pack / "01-first-lesson.yaml"
    text = lesson.read_text().replace("    solution: |\n      def bumped(t):\n          return t + 1\n",
                                      f"    solution: |\n      def bumped(t):\n          {marker} = t + 1\n"
                                      f"          return {marker}\n")
    text = text.replace("# Checks run in order", f"# instructor note {marker}_NOTE\n    # Checks run in order")
    # a further reference solution (`solutions:`) is a solution too
    text = text.replace("    # Checks run in order", f"    solutions:\n      - |\n        def bumped(t):\n"
                        f"            {marker}_TWO = t + 1\n            return {marker}_TWO\n    # Checks run in order", 1)
    assert marker in text and f"{marker}_NOTE" in text and f"{marker}_TWO" in text
    lesson.write_text(text)
    repo = tmp_path / "starter"
    done = tutor("autograder", str(pack), "--github-classroom", str(repo))
    assert done.returncode == 0, done.stderr
    leaks = []
    for path in repo.rglob("*"):
        if not path.is_file():
            continue
        data = path.read_bytes()
        if path.suffix in (".whl", ".zip"):
            with zipfile.ZipFile(path) as archive:
                data = b"".join(archive.read(name) for name in archive.namelist())
        if marker.encode() in data:
            leaks.append(str(path.relative_to(repo)))
    assert leaks == []
    public = load_pack(repo / ".torch-tutor" / "pack")
    exercise = public.exercises()[0][1]
    assert "not published" in exercise.solution and exercise.checks == load_pack(pack).exercises()[0][1].checks
    # the starter still fails there and a fix passes, as the workflow runs it
    env = {"TORCH_TUTOR_DATA_DIR": str(tmp_path / "d")}
    command = ["check", "first-lesson/add-to-copy", "add-to-copy.py", "--pack", ".torch-tutor/pack"]
    assert tutor(*command, env=env, cwd=repo).returncode == 1
    (repo / "add-to-copy.py").write_text(RIGHT)
    assert tutor(*command, env=env, cwd=repo).returncode == 0
