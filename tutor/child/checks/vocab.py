"""The check vocabulary as the child side reads it: one TypedDict per check kind.

GENERATED from the records of ``tutor.pack.check_models`` by ``tutor.pack.docgen.vocab_source``:
do not edit; change a record, then run ``python -m tutor.pack.docgen > tutor/child/checks/vocab.py``
(``tests/unit/test_author_vocab.py`` fails while this file is stale).

The child cannot import ``tutor.pack`` (it may run under another interpreter with only torch), so
it reads each check as the plain JSON ``as_data`` makes of a record, through these TypedDicts
(mypy checks every read), with the records' defaults filled in by :func:`with_defaults`.
Standard library only.
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict, Union

Text = Union[str, dict[str, str]]


class CheckHintData(TypedDict, total=False):
    """``CheckHint`` in tutor/pack/check_models.py."""

    text: Text
    status: list[Literal["failed", "error", "timeout"]] | None
    case: int | None


class CheckData(TypedDict, total=False):
    """``CheckBase`` in tutor/pack/check_models.py."""

    id: str
    description: Text
    hint: Text | None
    hints: list[CheckHintData]
    time_limit: float | None
    after: list[str]
    setup: str | None
    cases: list[dict[str, Any]]
    seed: int | None
    weight: float


class TensorData(CheckData, total=False):
    """``TensorCheck`` in tutor/pack/check_models.py."""

    kind: Literal["tensor"]
    value: str
    each: bool
    dtype: str | None
    shape: list[int | str] | None
    device: str | None
    requires_grad: bool | None
    is_leaf: bool | None
    grad_fn: str | None
    is_inference: bool | None
    contiguous: bool | None
    layout: str | None
    number: bool | None
    close_to: str | None
    rtol: float
    atol: float
    shares_storage_with: str | None
    independent_of: str | None
    broadcast: bool


class TensorGroupData(TypedDict, total=False):
    """``TensorGroup`` in tutor/pack/check_models.py."""

    count: int | None
    names: list[str] | None
    include: list[str] | None
    exclude: list[str] | None
    dtype: str | None
    device: str | None
    requires_grad: bool | None


class ModuleData(CheckData, total=False):
    """``ModuleCheck`` in tutor/pack/check_models.py."""

    kind: Literal["module"]
    value: str
    to: str | None
    run: str | None
    training: bool | None
    parameters: TensorGroupData | None
    buffers: TensorGroupData | None
    hyperparameters_unchanged: bool


class ModeStateData(TypedDict, total=False):
    """``ModeState`` in tutor/pack/check_models.py."""

    grad_enabled: bool | None
    inference_mode: bool | None
    autocast: bool | str | None


class ModeData(CheckData, total=False):
    """``ModeCheck`` in tutor/pack/check_models.py."""

    kind: Literal["mode"]
    module: str
    call: str
    during: ModeStateData | None
    restored: bool
    output_dtypes: dict[str, str] | None


class UnchangedData(CheckData, total=False):
    """``UnchangedCheck`` in tutor/pack/check_models.py."""

    kind: Literal["unchanged"]
    call: str
    names: list[str]


class RaisesData(CheckData, total=False):
    """``RaisesCheck`` in tutor/pack/check_models.py."""

    kind: Literal["raises"]
    call: str
    type: str
    match: str | None


class OutputData(CheckData, total=False):
    """``OutputCheck`` in tutor/pack/check_models.py."""

    kind: Literal["output"]
    call: str
    match: str


class MemoryData(CheckData, total=False):
    """``MemoryCheck`` in tutor/pack/check_models.py."""

    kind: Literal["memory"]
    call: str
    steps: list[int]
    expect: Literal["flat", "grows"]
    measure: Literal["auto", "graph", "rss", "cuda"]
    tolerance: float
    slack_per_step: int


class TopKData(TypedDict, total=False):
    """``TopK`` in tutor/pack/check_models.py."""

    k: int
    within: list[str]


class ShareData(TypedDict, total=False):
    """``Share`` in tutor/pack/check_models.py."""

    ops: list[str]
    at_least: float


class CallCountData(TypedDict, total=False):
    """``CallCount`` in tutor/pack/check_models.py."""

    ops: list[str]
    at_most: int | None
    at_least: int | None


class CompareRankingData(TypedDict, total=False):
    """``CompareRanking`` in tutor/pack/check_models.py."""

    call: str
    k: int
    workloads: list[str]
    near_tie: float


class ProfileData(CheckData, total=False):
    """``ProfileCheck`` in tutor/pack/check_models.py."""

    kind: Literal["profile"]
    workload: str | None
    sort_by: Literal["self", "total"]
    warmup: int
    repeat: int
    top1_in: list[str] | None
    top_k: TopKData | None
    absent: list[str] | None
    share: ShareData | None
    calls: list[CallCountData] | None
    compare: CompareRankingData | None
    threads: int
    only: list[str] | None


class RatioData(TypedDict, total=False):
    """``Ratio`` in tutor/pack/check_models.py."""

    min: float | None
    max: float | None


class TimingData(CheckData, total=False):
    """``TimingCheck`` in tutor/pack/check_models.py."""

    kind: Literal["timing"]
    fast: str
    slow: str
    ratio: RatioData
    warmup: int
    repeat: int
    threads: int


class WarnsData(CheckData, total=False):
    """``WarnsCheck`` in tutor/pack/check_models.py."""

    kind: Literal["warns"]
    call: str
    category: str
    match: str | None


class ExprData(CheckData, total=False):
    """``ExprCheck`` in tutor/pack/check_models.py."""

    kind: Literal["expr"]
    predicate: str
    message: Text


class FormData(CheckData, total=False):
    """``FormCheck`` in tutor/pack/check_models.py."""

    kind: Literal["form"]
    function: str | None
    follow_calls: bool
    max_lines: int | None
    max_statements: int | None
    max_line_length: int | None
    loops: bool
    comprehensions: bool
    imports: bool
    torch_allow: list[str] | None
    torch_deny: list[str] | None
    names_deny: list[str] | None
    attributes_deny: list[str] | None


#: kind -> the TypedDict its checks are read through
KINDS: dict[str, type] = {
    "tensor": TensorData,
    "module": ModuleData,
    "mode": ModeData,
    "unchanged": UnchangedData,
    "raises": RaisesData,
    "output": OutputData,
    "memory": MemoryData,
    "profile": ProfileData,
    "timing": TimingData,
    "warns": WarnsData,
    "expr": ExprData,
    "form": FormData,
}

#: record class name in tutor.pack.check_models -> its TypedDict here (the nested records)
NESTED: dict[str, type] = {
    "CheckHint": CheckHintData,
    "TensorGroup": TensorGroupData,
    "ModeState": ModeStateData,
    "TopK": TopKData,
    "Share": ShareData,
    "CallCount": CallCountData,
    "CompareRanking": CompareRankingData,
    "Ratio": RatioData,
}

#: kind -> its record's defaults (those that are not null), as ``as_data`` writes them
DEFAULTS: dict[str, dict[str, Any]] = {
    "tensor": {
        "hints": [],
        "after": [],
        "cases": [{}],
        "weight": 1.0,
        "each": False,
        "rtol": 1e-05,
        "atol": 1e-06,
        "broadcast": False,
    },
    "module": {
        "hints": [],
        "after": [],
        "cases": [{}],
        "weight": 1.0,
        "hyperparameters_unchanged": False,
    },
    "mode": {
        "hints": [],
        "after": [],
        "cases": [{}],
        "weight": 1.0,
        "restored": True,
    },
    "unchanged": {
        "hints": [],
        "after": [],
        "cases": [{}],
        "weight": 1.0,
    },
    "raises": {
        "hints": [],
        "after": [],
        "cases": [{}],
        "weight": 1.0,
    },
    "output": {
        "hints": [],
        "after": [],
        "cases": [{}],
        "weight": 1.0,
    },
    "memory": {
        "hints": [],
        "after": [],
        "cases": [{}],
        "weight": 1.0,
        "steps": [4, 8, 16, 32],
        "expect": "flat",
        "measure": "auto",
        "tolerance": 0.25,
        "slack_per_step": 64,
    },
    "profile": {
        "hints": [],
        "after": [],
        "cases": [{}],
        "weight": 1.0,
        "sort_by": "self",
        "warmup": 2,
        "repeat": 5,
        "threads": 1,
    },
    "timing": {
        "hints": [],
        "after": [],
        "cases": [{}],
        "weight": 1.0,
        "warmup": 3,
        "repeat": 15,
        "threads": 1,
    },
    "warns": {
        "hints": [],
        "after": [],
        "cases": [{}],
        "weight": 1.0,
        "category": "Warning",
    },
    "expr": {
        "hints": [],
        "after": [],
        "cases": [{}],
        "weight": 1.0,
    },
    "form": {
        "hints": [],
        "after": [],
        "cases": [{}],
        "weight": 1.0,
        "follow_calls": True,
        "loops": True,
        "comprehensions": True,
        "imports": True,
    },
}

#: nested record -> its defaults (those that are not null; records with none left out)
NESTED_DEFAULTS: dict[str, dict[str, Any]] = {
    "CompareRanking": {
        "k": 3,
        "near_tie": 0.15,
    },
}

#: kind -> its fields that hold such a record (or a list of them) -> the record
NESTED_FIELDS: dict[str, dict[str, str]] = {
    "profile": {
        "compare": "CompareRanking",
    },
}


def with_defaults(check: dict[str, Any]) -> dict[str, Any]:
    """``check`` with every field its kind's record defaults filled in where it has none (a
    fresh copy of a list or mapping default), and so every nested record it holds, so a kind
    reads ``check["rtol"]``, never a default of its own. An unknown kind is returned as it is
    (the probe reports it)."""
    kind = str(check.get("kind"))
    filled = {key: _fresh(value) for key, value in DEFAULTS.get(kind, {}).items()}
    filled.update(check)
    for key, record in NESTED_FIELDS.get(kind, {}).items():
        value = filled.get(key)
        if type(value) is dict:
            filled[key] = {**_fresh(NESTED_DEFAULTS[record]), **value}
        elif type(value) is list:
            filled[key] = [{**_fresh(NESTED_DEFAULTS[record]), **item} if type(item) is dict else item
                           for item in value]
    return filled


def _fresh(value: Any) -> Any:
    if type(value) is list:
        return [_fresh(item) for item in value]
    if type(value) is dict:
        return {key: _fresh(item) for key, item in value.items()}
    return value
