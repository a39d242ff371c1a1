"""A class graded by `torch-tutor grade` beside the same class graded by `nbgrader autograde`.

    python bench/nbgrader_compare.py [--learners 10,40,100] [--rounds 2] [--workers 1,2]
                                     [--nbgrader-procs 1,2] [--seed 0] [--loops 1]
                                     [--skip-nbgrader] [--trees .,/work/main] [--keep DIR]

Three exercises of the built-in pack (shape-mismatch, accumulate-graph, forgot-eval) are handed in
by every learner twice over: as ``<learner>/<exercise>.py`` files for `torch-tutor grade`, and as
one nbgrader assignment (one notebook: per exercise, an answer cell and a hidden test cell that
checks the same properties as the pack's checks) for `nbgrader autograde`. The answers come from
the pack (its solution and starter) and from a few hand-written variants, drawn from ``--seed``:
60% right, 30% wrong, 10% crashing, and ``--loops`` of the crashing ones an infinite loop.

nbgrader is installed from PyPI into a venv of its own (``--nbgrader-venv``, made on first use:
`python -m venv` + `pip install nbgrader`), never into the tutor's; its kernel reaches torch
through a .pth file naming the tutor's site-packages. Its cell timeout is ``--nbgrader-timeout``.

Each round times, at each class size and in an order that turns every round, `torch-tutor grade
--no-cache` with each ``--workers`` count (from each of ``--trees``, through PYTHONPATH), and
`nbgrader autograde` with each ``--nbgrader-procs`` count (N processes by hand, each over its own
course folder holding a share of the learners). Printed: the medians of the wall time and of the
CPU time of the command and every process it waited for, and how many answers each judged as
intended (a right answer passes every test, any other passes none: a crash or an infinite loop
is not a pass).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import random
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE))

EXERCISES = ("shape-mismatch", "accumulate-graph", "forgot-eval")
ASSIGNMENT = "ps1"
SHARES = (("right", 0.6), ("wrong", 0.3), ("crash", 0.1))

#: Right and wrong answers besides the pack's solution and starter: what a learner writes.
RIGHT = {
    "shape-mismatch": [
        "import torch\nimport torch.nn.functional as F\n\n\ndef project(x, w):\n    return F.linear(x, w)\n",
        "import torch\n\n\ndef project(x, w):\n    return torch.matmul(x, w.t())\n",
    ],
    "accumulate-graph": [
        "import torch\nimport torch.nn.functional as F\n\n\ndef log_losses(model, batches):\n"
        "    return [F.mse_loss(model(x), y).detach() for x, y in batches]\n",
    ],
    "forgot-eval": [
        "import torch\n\n\ndef evaluate(net, z):\n    net.eval()\n    with torch.no_grad():\n"
        "        out = net(z)\n    net.train()\n    return out\n",
    ],
}
WRONG = {
    "shape-mismatch": ["import torch\n\n\ndef project(x, w):\n    return x @ w.reshape(w.shape[1], w.shape[0])\n"],
    "accumulate-graph": [
        "import torch\nimport torch.nn.functional as F\n\n\ndef log_losses(model, batches):\n"
        "    return [F.mse_loss(model(x), y).clone() for x, y in batches]\n",
    ],
    "forgot-eval": ["import torch\n\n\ndef evaluate(net, z):\n    net.eval()\n    with torch.no_grad():\n"
                    "        return net(z)\n"],
}
SIGNATURES = {"shape-mismatch": "project(x, w)", "accumulate-graph": "log_losses(model, batches)",
              "forgot-eval": "evaluate(net, z)"}
CRASH = [
    "import torch\n\nraise RuntimeError('not finished')\n\n\ndef {sig}:\n    return None\n",
    "import torch\n\n\ndef {sig}:\n    return undefined_helper({args})\n",
    "import torch\n\n\ndef {sig}:\n    return 1 / 0\n",
]
LOOP = "import torch\n\n\ndef {sig}:\n    while True:\n        pass\n"

#: The hidden test cells: the pack's checks of each exercise, as plain asserts.
TESTS = {
    "shape-mismatch": '''\
import torch
import torch.nn.functional as F
### BEGIN HIDDEN TESTS
for b, i, o in [(4, 8, 3), (2, 5, 7), (1, 16, 2), (6, 6, 6)]:
    x, w = torch.randn(b, i), torch.randn(o, i)
    assert tuple(project(x, w).shape) == (b, o), "the result has shape (batch, out)"
for b, i, o in [(4, 8, 3), (5, 5, 5), (3, 4, 4), (4, 4, 4)]:
    x, w = torch.randn(b, i), torch.randn(o, i)
    assert torch.allclose(project(x, w), F.linear(x, w), rtol=1e-5, atol=1e-5), "equals F.linear(x, w)"
### END HIDDEN TESTS
''',
    "accumulate-graph": '''\
import torch
import torch.nn.functional as F
from torch import nn
### BEGIN HIDDEN TESTS
def _model(i=6, h=16):
    return nn.Sequential(nn.Linear(i, h), nn.ReLU(), nn.Linear(h, 1))
for n in (1, 7):
    model = _model()
    assert len(log_losses(model, [(torch.randn(5, 6), torch.randn(5, 1)) for _ in range(n)])) == n, \\
        "one logged value per batch"
model = _model()
batches = [(torch.randn(5, 6), torch.randn(5, 1)) for _ in range(4)]
expected = torch.stack([F.mse_loss(model(x), y) for x, y in batches]).detach()
got = torch.tensor([float(v) for v in log_losses(model, batches)])
assert torch.allclose(got, expected, rtol=1e-5, atol=1e-6), "the logged values equal the true losses"
model = _model()
batches = [(torch.randn(5, 6), torch.randn(5, 1)) for _ in range(3)]
assert all(getattr(v, "grad_fn", None) is None for v in log_losses(model, batches)), "no value carries a graph"
def _graph_nodes(values):  # what the returned list keeps alive of the graphs: flat as batches grow
    seen, todo = set(), [getattr(v, "grad_fn", None) for v in values]
    while todo:
        node = todo.pop()
        if node is not None and node not in seen:
            seen.add(node)
            todo.extend(f for f, _ in node.next_functions)
    return len(seen)
model = _model(32, 128)
kept = [_graph_nodes(log_losses(model, [(torch.randn(16, 32), torch.randn(16, 1)) for _ in range(n)]))
        for n in (4, 8, 16, 32)]
assert max(kept) == min(kept), "memory kept by the returned list stays flat as the batches grow"
### END HIDDEN TESTS
''',
    "forgot-eval": '''\
import copy
import torch
from torch import nn
### BEGIN HIDDEN TESTS
def _net(f=5):
    return nn.Sequential(nn.Linear(f, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Dropout(0.5), nn.Linear(16, 2))
for b, f in [(8, 5), (4, 3)]:
    net, z = _net(f), torch.randn(b, f)
    assert torch.equal(evaluate(net, z), evaluate(net, z)), "two calls give the same predictions"
net = _net()
mean, var = net[1].running_mean.clone(), net[1].running_var.clone()
evaluate(net, torch.randn(8, 5))
assert torch.equal(net[1].running_mean, mean) and torch.equal(net[1].running_var, var), "statistics unchanged"
def _settings(module):
    return [(type(m).__name__, {k: v for k, v in vars(m).items() if not k.startswith("_") and k != "training"})
            for m in module.modules()]
net = _net()
before = _settings(net)
evaluate(net, torch.randn(8, 5))
assert _settings(net) == before, "Dropout's p and every other layer setting unchanged"
for b, f in [(8, 5), (4, 3), (2, 7)]:
    net = _net(f)
    with torch.no_grad():
        net[1].running_mean.copy_(torch.randn(16))
        net[1].running_var.copy_(torch.rand(16) + 0.5)
    reference = copy.deepcopy(net).eval()
    z = torch.randn(b, f)
    assert torch.allclose(evaluate(net, z), reference(z).detach(), rtol=1e-5, atol=1e-6), "eval-mode output"
    assert all(m.training for m in net.modules()), "back in training mode afterwards"
### END HIDDEN TESTS
''',
}


@dataclass
class Answer:
    learner: str
    exercise: str
    kind: str  # right, wrong, crash, loop
    code: str


def answers_for(pack, learners: int, seed: int, loops: int) -> list[Answer]:
    """learners x EXERCISES answers: 60/30/10% right/wrong/crashing, ``loops`` of them looping."""
    rng = random.Random(seed)
    exercises = {ex.id: ex for _lesson, ex in pack.exercises()}
    slots = [(f"learner-{n:03d}", eid) for n in range(learners) for eid in EXERCISES]
    total = len(slots)
    kinds = ["right"] * round(total * 0.6) + ["wrong"] * round(total * 0.3)
    kinds += ["crash"] * (total - len(kinds))
    kinds = kinds[:total]
    rng.shuffle(kinds)
    # the loops replace crashing answers where there are some, else wrong ones
    for _ in range(min(loops, total)):
        for wanted in ("crash", "wrong", "right"):
            if wanted in kinds:
                kinds[kinds.index(wanted)] = "loop"
                break
    out = []
    for (learner, eid), kind in zip(slots, kinds):
        ex = exercises[eid]
        sig = SIGNATURES[eid]
        args = sig[sig.index("(") + 1:-1]
        if kind == "right":
            code = rng.choice([ex.solution, *RIGHT[eid]])
        elif kind == "wrong":
            code = rng.choice([ex.starter, *WRONG[eid]])
        elif kind == "crash":
            code = rng.choice(CRASH).format(sig=sig, args=args)
        else:
            code = LOOP.format(sig=sig)
        # a comment makes each answer unique, as real hand-ins are
        out.append(Answer(learner, eid, kind, f"# {learner}\n{code}"))
    return out


# ---------------------------------------------------------------- torch-tutor


def write_tutor(answers: list[Answer], root: Path) -> Path:
    folder = root / "tutor-submissions"
    for a in answers:
        (folder / a.learner).mkdir(parents=True, exist_ok=True)
        (folder / a.learner / f"{a.exercise}.py").write_text(a.code)
    return folder


def tutor_verdicts(json_path: Path) -> dict[tuple[str, str], bool]:
    data = json.loads(json_path.read_text())
    return {(r["learner"], r["exercise"]): bool(r["passed"]) for r in data["rows"] if r["exercise"] in EXERCISES}


# ---------------------------------------------------------------- nbgrader


def _cell(kind: str, source: str, **nbgrader) -> dict:
    cell = {"cell_type": kind, "id": nbgrader.get("grade_id", "cell"), "metadata": {}, "source": source}
    if kind == "code":
        cell.update(execution_count=None, outputs=[])
    if nbgrader:
        cell["metadata"]["nbgrader"] = {"schema_version": 3, "locked": False, "solution": False, "grade": False,
                                        **nbgrader}
    return cell


def source_notebook(pack) -> dict:
    """The instructor's notebook: per exercise its task, the solution between markers, the tests."""
    exercises = {ex.id: ex for _lesson, ex in pack.exercises()}
    cells = []
    for eid in EXERCISES:
        ex = exercises[eid]
        cells.append(_cell("markdown", f"## {eid}\n\n{ex.body['en'] if isinstance(ex.body, dict) else ex.body}",
                           grade_id=f"task-{eid}", locked=True))
        cells.append(_cell("code", f"### BEGIN SOLUTION\n{ex.solution}### END SOLUTION\n",
                           grade_id=f"answer-{eid}", solution=True))
        cells.append(_cell("code", TESTS[eid], grade_id=f"test-{eid}", grade=True, locked=True, points=1))
    return {"cells": cells, "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                         "language": "python"}},
            "nbformat": 4, "nbformat_minor": 5}


def nbgrader_venv(path: Path) -> Path:
    """The venv's python, made on first use; its site-packages reach the tutor's torch."""
    python = path / "bin" / "python"
    if not (path / "bin" / "nbgrader").exists():
        print(f"installing nbgrader into {path} (python -m venv, pip install nbgrader)", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "nbgrader"], check=True)
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    # after the venv's own packages: the kernel imports torch (and numpy, if nbgrader brought none) from here
    Path(site, "zz_torch_tutor_bench.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python


def nbgrader_env(venv: Path) -> dict[str, str]:
    """nbgrader runs ``alembic`` (and its kernel's python) from PATH: the venv's bin first."""
    return dict(os.environ, PATH=f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}")


def make_courses(venv: Path, pack, answers: list[Answer], root: Path, procs: int, timeout: int) -> list[Path]:
    """``procs`` course folders, each with the assignment generated and a share of the learners."""
    learners = sorted({a.learner for a in answers})
    courses = []
    for k in range(procs):
        course = root / f"nbgrader-{procs}" / f"course-{k}"
        (course / "source" / ASSIGNMENT).mkdir(parents=True)
        (course / "nbgrader_config.py").write_text(
            "c = get_config()\n"
            f"c.CourseDirectory.root = {str(course)!r}\n"
            "c.CourseDirectory.course_id = 'bench'\n"
            f"c.Execute.timeout = {timeout}\n")
        (course / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").write_text(json.dumps(source_notebook(pack)))
        made = subprocess.run([str(venv / "bin" / "nbgrader"), "generate_assignment", ASSIGNMENT, "--force"],
                              cwd=course, capture_output=True, text=True, env=nbgrader_env(venv))
        if made.returncode != 0:
            sys.exit(f"nbgrader generate_assignment failed:\n{made.stderr[-3000:]}")
        released = json.loads((course / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_text())
        mine = learners[k::procs]
        for learner in mine:
            nb = json.loads(json.dumps(released))
            for cell in nb["cells"]:
                grade_id = cell["metadata"].get("nbgrader", {}).get("grade_id", "")
                if grade_id.startswith("answer-"):
                    eid = grade_id.removeprefix("answer-")
                    cell["source"] = next(a.code for a in answers if a.learner == learner and a.exercise == eid)
            target = course / "submitted" / learner / ASSIGNMENT
            target.mkdir(parents=True)
            (target / f"{ASSIGNMENT}.ipynb").write_text(json.dumps(nb))
        courses.append(course)
    return courses


READ_GRADES = """\
import json, sys
from nbgrader.api import Gradebook
out = {}
for url in sys.argv[1:]:
    with Gradebook(url) as gb:
        for student in gb.students:
            try:
                nb = gb.find_submission_notebook(%(nb)r, %(a)r, student.id)
            except Exception:
                continue
            for grade in nb.grades:
                if grade.name.startswith("test-"):
                    out[student.id + "/" + grade.name[5:]] = grade.score == grade.max_score
print(json.dumps(out))
""" % {"nb": ASSIGNMENT, "a": ASSIGNMENT}


def nbgrader_verdicts(venv: Path, courses: list[Path]) -> dict[tuple[str, str], bool]:
    urls = [f"sqlite:///{c / 'gradebook.db'}" for c in courses]
    got = subprocess.run([str(venv / "bin" / "python"), "-c", READ_GRADES, *urls], check=True,
                         capture_output=True, text=True).stdout
    return {tuple(k.split("/", 1)): v for k, v in json.loads(got).items()}  # type: ignore[misc]


# ---------------------------------------------------------------- timing


class ProcessAccounting:
    """The CPU time of every process a command started, the exited included, from the kernel's
    process accounting (acct(2): one record per exiting process, in any pid namespace, with its
    parent's pid). A command's waited-for CPU (``wait4``) misses what runs under bubblewrap's pid
    namespace: the namespace's processes are reaped by no process the command waits for. Needs
    root and a kernel with BSD process accounting; it is on only while a command runs (one
    accounting file per machine: another user's is replaced meanwhile). Each record's CPU is in
    10 ms ticks, rounded down: a process's last part-tick is lost. Two benches timing at once
    switch each other's accounting off: run one at a time. A record names the parent a
    process had when it exited; one whose parent ended first (bubblewrap's pid 1, when the command
    is gone) names init instead, so the parents of the processes alive are also read from /proc
    every 50 ms while the command runs (``watch``)."""

    RECORD = struct.Struct("=BBHIIIIIIf8H16s")  # struct acct_v3

    def __init__(self) -> None:
        self.path = Path(tempfile.mkstemp(prefix="nbgrader-compare-acct-")[1])
        self._libc = ctypes.CDLL(None, use_errno=True)
        self.works = os.geteuid() == 0 and self._switch(True)
        self._switch(False)

    def _switch(self, on: bool) -> bool:
        return self._libc.acct(str(self.path).encode() if on else None) == 0

    def __enter__(self) -> "ProcessAccounting":
        self.path.write_bytes(b"")
        self.parents: dict[int, int] = {}
        self.roots: list[int] = []
        self._watching = threading.Event()
        self._watcher = threading.Thread(target=self._watch, daemon=True)
        if self.works:
            self._switch(True)
            self._watcher.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.works:
            settle = time.monotonic() + 5  # what the command left behind ends (and is recorded) first
            while time.monotonic() < settle and any(os.path.exists(f"/proc/{pid}") for pid in self._tree()):
                time.sleep(0.05)
            self._watching.set()
            self._watcher.join()
            self._switch(False)

    def _watch(self) -> None:
        while not self._watching.wait(0.05):
            for entry in os.scandir("/proc"):
                if entry.name.isdigit():
                    try:
                        stat = Path(entry.path, "stat").read_text()
                    except OSError:
                        continue
                    pid = int(entry.name)
                    self.parents.setdefault(pid, int(stat[stat.rindex(")") + 2:].split()[1]))

    def _tree(self) -> set[int]:
        """The alive processes descended from the roots, as the watcher saw them."""
        tree = set(self.roots)
        grown = True
        while grown:
            grown = False
            for pid, ppid in list(self.parents.items()):
                if ppid in tree and pid not in tree:
                    tree.add(pid)
                    grown = True
        return tree - set(self.roots)

    def cpu_of(self, roots: list[int]) -> float:
        """Seconds of CPU of the roots and everything descended from them that has exited."""
        data = self.path.read_bytes()
        size = self.RECORD.size
        records = []
        for at in range(0, len(data) - size + 1, size):
            fields = self.RECORD.unpack_from(data, at)
            if fields[1] != 3:  # ac_version
                continue
            pid, ppid, utime, stime = fields[6], fields[7], fields[10], fields[11]
            records.append((pid, ppid, (_comp(utime) + _comp(stime)) / 100))  # AHZ ticks
        links = [(pid, ppid) for pid, ppid, _cpu in records] + list(self.parents.items())
        tree = set(roots)
        grown = True
        while grown:  # a child may exit after or before its parent: grow to a fixed point
            grown = False
            for pid, ppid in links:
                if ppid in tree and pid not in tree:
                    tree.add(pid)
                    grown = True
        return sum(cpu for pid, _ppid, cpu in records if pid in tree)

    def close(self) -> None:
        self.path.unlink(missing_ok=True)


def _comp(value: int) -> int:
    """A comp_t: 13 bits of mantissa, 3 of base-8 exponent."""
    return (value & 0x1FFF) << (3 * (value >> 13))


def timed(commands: list[tuple[list[str], Path, dict[str, str]]],
          accounting: ProcessAccounting | None) -> tuple[float, float, list[int]]:
    """Run the commands at once; the wall time until the last ends, the CPU (user + system) of
    each and of every process it started (``ProcessAccounting``; without it, of every process
    it waited for), and their exit codes."""
    account = accounting if accounting is not None and accounting.works else None
    started = time.perf_counter()
    if account is not None:
        account.__enter__()
    procs: list[subprocess.Popen] = []
    try:
        procs += [subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                 for cmd, cwd, env in commands]
        if account is not None:
            account.roots = [p.pid for p in procs]
        waited, codes, errs = 0.0, [], []
        for p in procs:
            assert p.stderr is not None
            errs.append(p.stderr.read())  # to the end (nothing blocks on a full pipe), then reap with wait4
            _pid, status, usage = os.wait4(p.pid, 0)
            p.returncode = os.waitstatus_to_exitcode(status)
            waited += usage.ru_utime + usage.ru_stime
            codes.append(p.returncode)
        wall = time.perf_counter() - started
    finally:
        for p in procs:
            if p.returncode is None:  # interrupted: nothing of the bench's outlives it
                p.kill()
                p.wait()
        if account is not None:
            account.__exit__()  # accounting is the machine's: never left on
    cpu = account.cpu_of([p.pid for p in procs]) if account is not None else waited
    for code, err in zip(codes, errs):
        if code != 0:
            print(err.decode(errors="replace")[-2000:], file=sys.stderr)
    return wall, cpu, codes


@dataclass
class Contender:
    name: str
    run: object  # () -> (wall, cpu, verdicts)
    walls: dict[int, list[float]] = field(default_factory=dict)
    cpus: dict[int, list[float]] = field(default_factory=dict)
    intended: dict[int, int] = field(default_factory=dict)


def main() -> int:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # killed: the finally blocks still run
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--learners", default="10,40,100", help="class sizes, comma-separated")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--workers", default="1,2", help="torch-tutor's --workers counts, comma-separated")
    parser.add_argument("--nbgrader-procs", default="1", help="nbgrader processes by hand, comma-separated")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--loops", type=int, default=1, help="infinite loops among the answers")
    parser.add_argument("--skip-nbgrader", action="store_true", help="time torch-tutor only")
    parser.add_argument("--trees", default=str(HERE),
                        help="torch-tutor source trees to time, comma-separated (each through PYTHONPATH)")
    parser.add_argument("--nbgrader-venv", default=str(Path.home() / ".cache" / "torch-tutor-bench" / "nbgrader-venv"))
    parser.add_argument("--nbgrader-timeout", type=int, default=10,
                        help="nbgrader's cell timeout, s (the tutor's is the exercise's, 10 s at the defaults)")
    parser.add_argument("--keep", metavar="DIR", help="build in DIR and keep it (default: a temporary folder)")
    args = parser.parse_args()

    from tutor.pack.discovery import builtin_pack_dirs
    from tutor.pack.loader import load_pack

    sizes = [int(n) for n in args.learners.split(",")]
    workers = [int(n) for n in args.workers.split(",")]
    nb_procs = [] if args.skip_nbgrader else [int(n) for n in args.nbgrader_procs.split(",")]
    trees = [str(Path(t).resolve()) for t in args.trees.split(",")]
    pack_dir = builtin_pack_dirs()[0]
    pack = load_pack(pack_dir)
    venv_python = nbgrader_venv(Path(args.nbgrader_venv)) if nb_procs else None
    venv = venv_python.parent.parent if venv_python else None

    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="nbgrader-compare-"))
    data_home = work / "tutor-data"  # the tutor's settings and data: none of the user's
    results = []
    accounting = ProcessAccounting()
    try:
        for size in sizes:
            answers = answers_for(pack, size, args.seed, args.loops)
            intended = {(a.learner, a.exercise): a.kind == "right" for a in answers}
            root = work / f"class-{size}"
            if root.exists():
                shutil.rmtree(root)
            root.mkdir(parents=True)
            subs = write_tutor(answers, root)
            contenders: list[Contender] = []
            for tree in trees:
                for n in workers:
                    env = dict(os.environ, PYTHONPATH=tree, XDG_DATA_HOME=str(data_home),
                               XDG_CONFIG_HOME=str(data_home / "config"))
                    out = root / f"tutor-{len(contenders)}.json"
                    cmd = [sys.executable, "-m", "tutor", "grade", str(pack_dir), str(subs), "--no-cache",
                           "--workers", str(n), "--json", str(out)]
                    label = f"torch-tutor, {n} worker{'s' if n > 1 else ''}" + (
                        f" ({tree})" if len(trees) > 1 else "")

                    def run_tutor(cmd=cmd, env=env, out=out):
                        wall, cpu, _codes = timed([(cmd, Path(tree), env)], accounting)
                        return wall, cpu, tutor_verdicts(out)
                    contenders.append(Contender(label, run_tutor))
            for p in nb_procs:
                assert venv is not None
                courses = make_courses(venv, pack, answers, root, p, args.nbgrader_timeout)
                nbgrader = str(venv / "bin" / "nbgrader")
                label = "nbgrader" if p == 1 else f"nbgrader, {p} processes by hand"

                def run_nb(courses=courses, nbgrader=nbgrader):
                    wall, cpu, _codes = timed([([nbgrader, "autograde", ASSIGNMENT, "--force"], c, nbgrader_env(venv))
                                               for c in courses], accounting)
                    return wall, cpu, nbgrader_verdicts(venv, courses)
                contenders.append(Contender(label, run_nb))
            for r in range(args.rounds):
                order = contenders[r % len(contenders):] + contenders[:r % len(contenders)]
                for c in order:
                    wall, cpu, verdicts = c.run()
                    c.walls.setdefault(size, []).append(wall)
                    c.cpus.setdefault(size, []).append(cpu)
                    c.intended[size] = sum(verdicts.get(k) == v for k, v in intended.items())
                    print(f"  {size} learners, round {r + 1}: {c.name}: {wall:.1f} s, CPU {cpu:.1f} s, "
                          f"{c.intended[size]}/{len(intended)} as intended", file=sys.stderr, flush=True)
            results.append((size, len(intended), contenders))
    finally:
        accounting.close()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)

    print(f"medians of {args.rounds} round(s), alternating; answers 60% right, 30% wrong, 10% crashing, "
          f"{args.loops} infinite loop(s), seed {args.seed}; {os.cpu_count()} CPUs; CPU: "
          + ("every process each command started (process accounting)" if accounting.works else
             "the processes each command waited for (no process accounting here: runs under a pid "
             "namespace are not counted)"))
    for size, answers_n, contenders in results:
        print(f"\n{size} learners ({answers_n} answers):")
        base = next((statistics.median(c.walls[size]) for c in contenders if c.name == "nbgrader"), None)
        for c in contenders:
            wall, cpu = statistics.median(c.walls[size]), statistics.median(c.cpus[size])
            ratio = f", {base / wall:.1f}x nbgrader's speed" if base and c.name != "nbgrader" else ""
            print(f"  {c.name:<34} {wall:7.1f} s ({wall / size:.2f} s a learner), CPU {cpu:6.1f} s, "
                  f"{c.intended[size]}/{answers_n} as intended{ratio}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
