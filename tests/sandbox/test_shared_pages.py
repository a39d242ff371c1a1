"""Issue 55: a run is a process forked from a warm worker (or spawn mode's runner template) and
shares its pages until it writes to them; each first write is a copy (2-4 µs). The collector's
full pass writes into the header of every object it tracks, so a run's first full collection
copied the page of every object the worker had loaded (~10 000 pages; the Linear + profiler
snippet's `key_averages()` 17 ms of its 37). The worker freezes what it loaded out of the
collector's sight before it forks (``gc.freeze``), as the runner template does."""

from __future__ import annotations

GC_COPIES = ("import gc, resource\n"
             "before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt\n"
             "gc.collect()\n"
             "print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)\n")


def test_a_runs_full_collection_copies_none_of_the_workers_pages(sandbox):
    faults = []
    for _ in range(2):
        result = sandbox.run(GC_COPIES)
        assert result.status == "ok", result.message
        faults.append(int(result.stdout))
    # ~60-80 here with what the worker loaded frozen, ~10 000 without.
    assert min(faults) < 1000, faults


def test_a_learners_own_cycles_are_still_collected(sandbox):
    """Freezing is the worker's objects only: garbage a run makes is collected as ever."""
    code = ("import gc\n"
            "gc.disable()\n"
            "class Node:\n"
            "    pass\n"
            "for _ in range(1000):\n"
            "    a, b = Node(), Node()\n"
            "    a.other, b.other = b, a\n"
            "del a, b\n"
            "print(gc.collect() >= 2000)\n")
    result = sandbox.run(code)
    assert (result.status, result.stdout) == ("ok", "True\n"), result.message
