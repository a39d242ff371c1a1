"""Running the suite in parallel: the README's command and CI run ``-n auto --dist loadgroup``
(pyproject.toml's addopts; ``-n 0`` runs serially), one pytest-xdist worker per core this
process may use and one more, at most ``MAX_WORKERS`` (``pytest_xdist_auto_num_workers`` below).

What costs seconds to set up (a warm
sandbox of a given setup, a module's own fixture: a ``grade`` batch, an autograder bundle) is
built once per worker that needs it, so the tests of a module that share such a thing carry an
``xdist_group`` mark naming the module and the setup (``tests/checks/test_tensor.py=fork``), and
loadgroup sends each group to one worker: a module's fixture is built once, as in a serial run,
and a session's sandbox at most once per worker. The groups and the other tests go out longest
first (``cost``), so that no long one starts last.

One group is about the machine rather than a fixture (``SAME_USER``): see below. What a run
leaves behind is checked once, by the controller, after its workers are done
(``pytest_sessionfinish``); a test's own check counts its worker's processes only
(tests/sandbox/conftest.py, ``leftover_processes``).
"""

from __future__ import annotations

import os
import re
import sys

import pytest
import textual._wait

# Textual's pilot (tests/app, tests/snapshots) waits for the app to go idle after every key and
# pause: sleeps of 20 ms (``SLEEP_GRANULARITY``) until one in which the process spent under a
# twentieth of it on its CPU. Sleeps of 5 ms keep that rule and wait a quarter as long: a test
# typing 120 keys waited ~5 s for them, and tests/app took 174 s on 3 workers with the CPU half
# idle, 114 s with these.
textual._wait.SLEEP_GRANULARITY = 1 / 200
textual._wait.SLEEP_IDLE = textual._wait.SLEEP_GRANULARITY / 20.0

# Compiled modules are kept even where PYTHONDONTWRITEBYTECODE is set (as on this project's CI
# machines): in this process for the test modules (pytest's rewritten ones, else rewritten again by
# each xdist worker) and, compiled once by the controller (``compile_the_tutor``), for the tutor's
# modules, which every interpreter a test starts imports (a command, a sandbox worker, a spare's
# judge and runner: thousands per run; at isolation bwrap they cannot write them). Without it each
# compiled the tutor from source again: 70 ms of CPU per spare interpreter here. Subprocesses still
# write none of their own: the environment variable is left as it is.
sys.dont_write_bytecode = False

# The tests read the tutor in English: a developer's own locale (LANG=zh_CN.UTF-8) would turn
# its words to Chinese (tutor.words.i18n.locale_language); tests of the locale pass their own.
for _name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
    if os.environ.get(_name, "").split(".")[0].split("_")[0] not in ("", "C", "POSIX", "en"):
        os.environ[_name] = "C.UTF-8"

@pytest.fixture(autouse=True)
def _no_terminal_width_inherited(monkeypatch):
    """The commands fit their lines to ``COLUMNS`` when it is set (``cli.common.line_width``), and
    pytest-xdist's workers run with ``COLUMNS=80``: a command a test ran then wrapped a long path
    onto two lines where the serial run kept one. A test that wants a width sets it."""
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("LINES", raising=False)


@pytest.fixture(autouse=True)
def _the_tutor_speaks_english_after_each_test():
    """Every test ends with the tutor speaking English: the one reset of the language, for every
    test (the copies of it that nine modules kept are gone). A test that switched it (the app's
    ``set_language``, a command run in process with ``--language zh``, a sync test's own
    ``i18n.set_language("zh")``) left the next test of its worker in Chinese (a progress-file
    notice came out in Chinese in a clean-clone run, after ``test_app_navigation``'s switch).
    A thin wrapper over ``i18n.set_language``: it holds whether the language is a module global
    or a ContextVar (a sync test runs in the worker's own context, so what it sets stays there)."""
    yield
    from tutor.words import i18n

    i18n.set_language(None)


#: The variables the tutor reads its locale from, in gettext's order (``i18n.locale_language``).
LOCALE_VARIABLES = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")


@pytest.fixture
def no_locale(monkeypatch: pytest.MonkeyPatch) -> None:
    """No locale at all, for a test that picks the tutor's language by flag, saved choice or a
    locale it sets itself: the module-level English above still leaves ``C.UTF-8``, which a test
    of the locale's order would read. (Every test ends in English anyway: the fixture above.)"""
    for name in LOCALE_VARIABLES:
        monkeypatch.delenv(name, raising=False)


#: Session-scoped fixtures that start something expensive (warm sandboxes, every run of the
#: built-in pack); their users are grouped per module and parameter.
SHARED_SESSION = ("sandbox", "runs")

#: Function-scoped fixtures that hand out a session's warm sandbox picked by their parameter
#: (tests/checks/conftest.py: ``sandbox`` -> ``fork_sandbox`` or ``spawn_sandbox``).
SHARED_BY_PARAM = ("sandbox",)

#: Runs at isolation none as a normal user are that user's, and the kernel counts against their
#: RLIMIT_NPROC *every* task the user owns on the machine: other workers' runs at isolation none
#: too. The limit is what the user has when the run starts plus the run's own (3118f5c), so a run
#: that started before another run floods the user still fails (status error, no message: a fork
#: bomb at none beside a run at none that starts a thread 2.5 s in). As root each run has a uid of
#: its own (``isolation.RUN_UID_BASE``) and this cannot happen; the suite may run as either. The
#: tests that flood processes on purpose (in every setup) therefore share one group with the tests
#: that run code at none. So do the other tests of tests/sandbox that run code at none (whole
#: modules, so that their module fixtures stay built once) and the forgery batch at none.
SAME_USER = "isolation-none-same-user"
FLOODS_USER = ("tests/sandbox/test_hostile.py::test_fork_bomb_is_contained[",
                 "tests/sandbox/test_hostile.py::test_64_spinning_threads[")
AT_NONE = ("tests/sandbox/test_spawn.py::", "tests/sandbox/test_scratch_sweep.py::",
           "tests/sandbox/test_tmp_interpreter.py::", "tests/sandbox/test_cli.py::",
           "tests/sandbox/test_overlapping_runs.py::", "tests/sandbox/test_deferred_profiler.py::",
           "tests/sandbox/test_template.py::")

#: Workers ``-n auto`` starts at most: each holds its own warm sandboxes (a few hundred MB each).
MAX_WORKERS = 4


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: one worker per core this process may use (its CPU affinity, which a
    container's CPU set narrows; os.cpu_count() would count the host's) and one more, at most
    ``MAX_WORKERS``; ``TORCH_TUTOR_TEST_WORKERS`` overrides. The one more fills what the others
    wait for (a subprocess importing torch, a run's wall time, a terminal, a browser): on 2 cores
    with 2 workers the CPU was 81 % busy and with 3 all but saturated, and the clean clone's run
    went from 17 min 46 s to 14 min 22 s (docs/performance.md, "The test suite"). Two more
    starve the timing tests: 4 workers on 2 cores failed a check's wall cap once in two runs."""
    wanted = os.environ.get("TORCH_TUTOR_TEST_WORKERS")
    if wanted:
        return int(wanted)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(cores + 1, MAX_WORKERS))


#: Seconds a test takes, roughly, to send the longest work out first: the tests that take
#: minutes (CI's durations of 2026-12-02 on 2 cores), then a spawn-mode test (each of its runs
#: takes a spare, two interpreters importing torch), then the rest.
KNOWN_COST = {
    "tests/e2e/test_e2e_tmux.py::test_an_output_of_200000_lines": 130.0,
    "tests/sandbox/test_spawn_validate.py": 120.0,
    "tests/instructor/test_autograder.py": 30.0,  # per test: the bundle's venv is a module fixture
    "tests/sandbox/test_fresh_install.py": 40.0,
    "tests/packs/test_cpu_classes.py": 15.0,  # per test: a module fixture of every class's runs
    "tests/packs/test_verdicts.py": 12.0,
    "tests/checks/test_stability.py": 20.0,
    "tests/sandbox/test_windows_emulated.py": 8.0,  # per test: one module fixture of ~12 runs, subprocess CLIs
    "tests/e2e/test_e2e_exit.py": 30.0,  # one test: 7 rounds of starting and ending the app
    "tests/e2e/test_leftover_check.py": 13.0,  # per test: a pytest run of its own
    "tests/cli/test_validate_verdicts.py": 10.0,  # per test: a `validate` of a fixture pack
    "tests/browser/": 10.0,  # per test: a tab's sandbox imports torch
    "tests/bench/": 8.0,  # per test: a bench script at its smallest, most with a sandbox of their own
    # Tests that mostly wait (a real terminal) or hold one core for long (a cold mypy): sent out
    # before the many one-second tests, so that other workers' computing overlaps them and mypy
    # no longer ends the run. (The minutes at ~60-75 % busy near the end of a run are not theirs:
    # they are the app tests, single-threaded and partly waiting; docs/performance.md, "The test suite".)
    "tests/e2e/": 5.0,
    "tests/static/test_static.py::test_mypy_finds_no_errors": 25.0,
}
SPAWN_TEST_COST = 6.0
TEST_COST = 1.0


def _name(text: str) -> str:
    # xdist appends "@group" to the node id and splits on the last "@" after any "]".
    return re.sub(r"[^\w./:+=-]", "-", text)


def _param(value: object) -> str:
    return "-".join(map(str, value)) if isinstance(value, tuple) else str(value)


def group_of(item: pytest.Item) -> str | None:
    """What the item shares with others (see the module's docstring), or None."""
    if not isinstance(item, pytest.Function):  # a doctest or another plugin's item: no fixtures
        return None
    params = item.callspec.params if hasattr(item, "callspec") else {}
    if item.nodeid.startswith(FLOODS_USER + AT_NONE) \
            or (item.nodeid.startswith("tests/sandbox/") and params.get("sandbox") == ("none", "fork")) \
            or (item.nodeid.startswith("tests/checks/test_forgery.py::") and params.get("isolation") == "none"):
        return SAME_USER
    defs = item._fixtureinfo.name2fixturedefs
    module = item.nodeid.split("::", 1)[0]
    shared: set[str] = set()
    for name in item.fixturenames:
        if not defs.get(name):
            continue
        fixture = defs[name][-1]
        own = fixture.scope == "module" and getattr(fixture.func, "__module__", None) == item.module.__name__
        if own or (fixture.scope == "session" and name in SHARED_SESSION) \
                or (fixture.scope == "function" and name in SHARED_BY_PARAM and name in params):
            shared.add(f"={_param(params[name])}" if name in params else "")
    if not shared:
        return None
    # Per module, not per fixture: a worker builds a session's sandbox once for all its modules,
    # so a sandbox used by several modules costs at most one warm-up per worker, and the
    # modules spread over the workers.
    return _name(module + "".join(sorted(shared)))


def cost(item: pytest.Item) -> float:
    for prefix, seconds in KNOWN_COST.items():
        if item.nodeid.startswith(prefix):
            return seconds
    params = getattr(getattr(item, "callspec", None), "params", {})
    spawn = any("spawn" in _param(params.get(name, "")) for name in ("sandbox", "isolation"))
    return SPAWN_TEST_COST if spawn else TEST_COST


def loadgroup(config: pytest.Config) -> bool:
    """Whether this run is `-n N --dist loadgroup` (in the controller, or in one of its workers,
    where xdist sets ``dist`` to "no" and ``loadgroup`` to True)."""
    return config.getoption("dist", "no") == "loadgroup" or bool(getattr(config.option, "loadgroup", False))


class LongestFirst:
    """Orders the items so that each group (or ungrouped test) first appears in order of its
    estimated cost, longest first: loadgroup hands out work in the order its units first appear
    when ``--no-loadscope-reorder`` is set (below; xdist's own order is most tests first).
    Stable, so a group keeps its tests in pytest's order, which keeps one parameter of a session
    fixture alive at a time."""

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        groups: dict[str, float] = {}
        for item in items:
            group = group_of(item)
            if group is not None:
                groups[group] = groups.get(group, 0.0) + cost(item)

        def key(pair: tuple[int, pytest.Item]) -> tuple[float, int]:
            group = group_of(pair[1])
            return (-(groups[group] if group is not None else cost(pair[1])), pair[0])

        items[:] = [item for _, item in sorted(enumerate(items), key=key)]


def pytest_configure(config: pytest.Config) -> None:
    mark_this_run(config)
    compile_the_tutor(config)
    if loadgroup(config):
        config.option.loadscopereorder = False
        config.pluginmanager.register(LongestFirst(), "tutor-longest-first")


def compile_the_tutor(config: pytest.Config) -> None:
    """The tutor's modules compiled to bytecode, once, by the controller, before any worker starts
    (a module changed since is compiled again; see ``sys.dont_write_bytecode`` above)."""
    if hasattr(config, "workerinput"):
        return
    import compileall
    from pathlib import Path

    compileall.compile_dir(str(Path(__file__).resolve().parents[1] / "tutor"), quiet=1)


def runs_bwrap(item: pytest.Item) -> bool:
    """Whether the item runs a sandbox under bubblewrap by its parameters (a setup of
    tests/sandbox, an isolation of the forgery suite): such items carry the ``bwrap`` marker."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    return any("bwrap" in _param(value) for value in params.values())


@pytest.hookimpl(tryfirst=True)  # before xdist reads the marks (and appends "@group" to node ids)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if runs_bwrap(item):
            item.add_marker(pytest.mark.bwrap)
    if not loadgroup(config):
        return
    for item in items:
        group = group_of(item)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))


# --------------------------------------------------------------------------- nothing left behind

#: Set for the whole session to an id of its own: every process the run starts inherits it (the
#: sandbox passes it on to its workers and spares: ``tutor.sandbox.process.PASSED_ON``), so the
#: end-of-session check tells this run's processes from those of other runs on the machine.
RUN_MARK = "PYTEST_TORCH_TUTOR_RUN"
#: How long the check waits for a process that is on its way out before calling it left behind
#: (tests/e2e/test_leftover_check.py shortens it for its inner runs, whose leak never leaves).
LEFTOVER_GRACE_S = float(os.environ.get("PYTEST_TORCH_TUTOR_LEFTOVER_GRACE_S", "5"))


def mark_this_run(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput"):  # an xdist worker keeps its controller's mark
        import uuid

        os.environ[RUN_MARK] = uuid.uuid4().hex


def _ancestors(pid: int) -> set[int]:
    seen: set[int] = set()
    while pid > 1 and pid not in seen:
        seen.add(pid)
        try:
            with open(f"/proc/{pid}/stat", "rb") as handle:
                text = handle.read().decode("utf-8", "replace")
        except OSError:
            break
        pid = int(text[text.rindex(")") + 2:].split()[1])
    return seen


def _is_ours(pid: int, mark: str) -> str | None:
    """The command line of a live torch-tutor or sandbox process carrying ``mark``, else None."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            environ = handle.read().split(b"\0")
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            argv = [a.decode("utf-8", "replace") for a in handle.read().split(b"\0") if a]
        with open(f"/proc/{pid}/stat", "rb") as handle:
            state = handle.read().decode("utf-8", "replace").rsplit(")", 1)[1].split()[0]
    except OSError:
        return None
    if state == "Z" or f"{RUN_MARK}={mark}".encode() not in environ or not argv:
        return None
    tutorish = any(os.path.basename(a) == "torch-tutor" or "tutor.child.worker" in a for a in argv) \
        or os.path.basename(argv[0]) == "bwrap"
    return " ".join(argv)[:300] if tutorish else None


def leftovers(mark: str) -> dict[int, str]:
    """This run's torch-tutor and sandbox processes that outlived the process that started them
    (they are no descendants of this pytest: those still go with it, as its sandboxes close)."""
    if not os.path.isdir("/proc"):
        return {}
    mine = os.getpid()
    found = {}
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == mine:
            continue
        command = _is_ours(int(name), mark)
        if command is not None and mine not in _ancestors(int(name)):
            found[int(name)] = command
    return found


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run if a torch-tutor or sandbox process it started is still alive; say which,
    then end them."""
    import signal
    import time

    mark = os.environ.get(RUN_MARK)
    if mark is None or hasattr(session.config, "workerinput"):  # the controller checks, once
        return
    deadline = time.monotonic() + LEFTOVER_GRACE_S
    left = leftovers(mark)
    while left and time.monotonic() < deadline:
        time.sleep(0.2)
        left = leftovers(mark)
    if not left:
        return
    lines = [f"{len(left)} torch-tutor or sandbox process(es) this test run started are still "
             f"running (ended now):"] + [f"  pid {pid}: {command}" for pid, command in sorted(left.items())]
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    for line in lines:
        if reporter is not None:
            reporter.write_line(line, red=True, bold=True)
        else:
            print(line, file=sys.stderr)
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    session.exitstatus = pytest.ExitCode.TESTS_FAILED
