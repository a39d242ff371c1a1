"""`memory`, `profile` and `timing`: measured checks, with their data for the app."""

MEMORY = {"id": "mem", "kind": "memory", "setup": "model = nn.Linear(32, 16)", "call": "train(model, n)",
          "steps": [2, 4, 8]}
TRAIN = """
import torch
def train(model, n):
    losses = []
    for _ in range(n):
        loss = model(torch.randn(64, 32)).pow(2).mean()
        losses.append({value})
    return losses
"""


def test_memory_leak_grows_and_fix_stays_flat(grade):
    leak = grade(TRAIN.format(value="loss"), MEMORY).checks[0]
    assert leak.status == "failed"
    assert leak.message.startswith("the memory kept alive by the result grows with the number of steps")
    curve = leak.data["curve"]
    assert [n for n, _ in curve] == [2, 4, 8]
    assert curve[0][1] < curve[1][1] < curve[2][1]  # saved activations of every step's graph
    fixed = grade(TRAIN.format(value="loss.item()"), MEMORY).checks[0]
    assert fixed.status == "passed"
    assert fixed.data == {"measure": "graph", "curve": [[2, 0], [4, 0], [8, 0]]}


def test_memory_expect_grows(grade):
    spec = {**MEMORY, "expect": "grows"}
    assert grade(TRAIN.format(value="loss"), spec).passed
    check = grade(TRAIN.format(value="loss.item()"), spec).checks[0]
    assert check.message.startswith("expected the memory kept alive to grow")


PROFILE = {"id": "p", "kind": "profile", "setup": "a = torch.randn(256, 256); b = torch.randn(256, 256)",
           "workload": "lambda: work(a, b)", "top1_in": ["aten::mm"], "top_k": {"k": 1, "within": ["aten::m*"]},
           "share": {"ops": ["aten::mm"], "at_least": 0.5}, "absent": ["aten::item"], "repeat": 3}


def test_profile_table_and_assertions(grade):
    check = grade("def work(a, b):\n    return (a @ b)[:2].sum()\n", PROFILE).checks[0]
    assert check.status == "passed", check.message
    rows = check.data["rows"]
    assert rows[0]["op"] == "aten::mm" and rows[0]["share"] > 0.5
    assert set(rows[0]) == {"op", "self_us", "total_us", "share", "calls", "direct"}


def test_profile_failures_name_the_operator(grade):
    check = grade("def work(a, b):\n    return (a @ b).sum().item()\n", {**PROFILE, "top1_in": None,
                                                                        "top_k": None, "share": None}).checks[0]
    assert check.status == "failed"
    assert check.message.startswith("aten::item still runs (1 call(s)")
    slow = "import torch\ndef work(a, b):\n    return torch.exp(torch.exp(a)) .sum() + (a[:8] @ b[:, :8]).sum()\n"
    check = grade(slow, {**PROFILE, "absent": None, "top_k": None, "share": None}).checks[0]
    assert check.status == "failed"
    assert check.message.startswith("the most expensive operator by self CPU time is aten::exp")


RANK = """
import statistics
import torch
from torch.profiler import ProfilerActivity, profile
def top_ops(workload, k):
    workload()
    times = {}
    for _ in range(5):
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            workload()
        for e in prof.key_averages():
            times.setdefault(e.key, []).append(e.self_cpu_time_total)
    med = {op: statistics.median(v + [0] * (5 - len(v))) for op, v in times.items()}
    return sorted(med, key=med.get, reverse=True)[:k]
"""
COMPARE = {"id": "c", "kind": "profile", "setup": "a = torch.randn(256, 256); b = torch.randn(256, 256)",
           "compare": {"call": "top_ops(workload, k)", "k": 2,
                       "workloads": ["lambda: torch.exp((a @ b)[:32])[:2].sum()",
                                     "lambda: torch.exp((b.t() @ a)[:32])[:2].sum()"]}}


def test_profile_compare_ranking_functions(grade):
    check = grade(RANK, COMPARE).checks[0]
    assert check.status == "passed", check.message
    assert [c["workload"] for c in check.data["compare"]] == COMPARE["compare"]["workloads"]
    wrong = grade("def top_ops(workload, k):\n    return ['aten::sum', 'aten::mm'][:k]\n", COMPARE).checks[0]
    assert wrong.status == "failed"
    assert wrong.message.startswith("on workload 1 your ranking puts aten::sum 1st")


def upset(first: int) -> str:
    """RANK, its answer reversed on its first ``first`` calls (what a stall might do, made certain)."""
    return RANK.replace("def top_ops(workload, k):", "def _measured(workload, k):") + (
        f"\ncalls = []\n\ndef top_ops(workload, k):\n    calls.append(k)\n    ranking = _measured(workload, k)\n"
        f"    return ranking[::-1] if len(calls) <= {first} else ranking\n")


def test_a_ranking_a_stall_upset_is_measured_again_and_one_upset_every_time_fails(grade):
    """A ranking is a measurement: on a busy machine one stall can put a 13 us op above a 45 us
    one in an honest learner's medians. A ranking that disagrees is measured again (both
    rankings), up to COMPARE_ATTEMPTS times, and fails only if it disagrees every time."""
    from tutor.child.checks.kinds.profile import COMPARE_ATTEMPTS

    assert COMPARE_ATTEMPTS == 3
    check = grade(upset(COMPARE_ATTEMPTS - 1), COMPARE).checks[0]  # right on its last try at workload 1
    assert check.status == "passed", check.message
    assert [c["yours"] for c in check.data["compare"]] == [c["reference"] for c in check.data["compare"]]
    wrong = grade(upset(COMPARE_ATTEMPTS), COMPARE).checks[0]
    assert wrong.status == "failed"
    assert wrong.message.startswith("on workload 1 your ranking puts aten::"), wrong.message
    assert wrong.got == ", ".join(reversed(wrong.expected.split(", "))), (wrong.expected, wrong.got)


TIMING = {"id": "t", "kind": "timing", "setup": "x = torch.randn(100, 20)",
          "fast": "lambda: fast(x)", "slow": "lambda: torch.stack([sum(r) for r in x])",
          "ratio": {"min": 4}, "warmup": 1, "repeat": 5}


def test_timing_ratio(grade):
    check = grade("def fast(x):\n    return x.sum(1)\n", TIMING).checks[0]
    assert check.status == "passed", check.message
    assert check.data["ratio"] > 4
    check = grade("import torch\ndef fast(x):\n    return torch.stack([sum(r) for r in x])\n", TIMING).checks[0]
    assert check.status == "failed" and "expected at least 4x" in check.message


def test_a_learners_ranking_function_profiles_with_one_thread_as_the_checks_do(grade):
    """The check ranks its reference with one intra-op thread; the learner's code, in the runner,
    runs with the same one (a multi-threaded matmul on a busy machine ranks differently)."""
    code = ("import torch\ndef top_ops(workload, k):\n    workload()\n"
            "    return [f'threads={torch.get_num_threads()}', 'aten::none']\n")
    check = {"id": "rank", "kind": "profile", "setup": "a = torch.randn(64, 64)\ndef w():\n    return a @ a",
             "compare": {"call": "top_ops(workload, k)", "k": 2, "workloads": ["w"]}}
    result = grade(code, check).checks[0]
    assert result.status == "failed" and "threads=1" in (result.got or "") + result.message, result


def test_a_share_of_one_is_met_by_a_workload_that_runs_only_those_operators(grade):
    check = {"id": "s", "kind": "profile", "setup": "x = torch.randn(64, 64)", "workload": "lambda: f(x)",
             "share": {"ops": ["aten::*"], "at_least": 1.0}}
    report = grade("import torch\ndef f(x):\n    return torch.exp(x)\n", check)
    assert report.passed, [c.message for c in report.checks]
