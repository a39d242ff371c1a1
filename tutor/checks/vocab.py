"""The check vocabulary as the child side reads it: one TypedDict per check kind.

The parent's records (``tutor.core.check_models``) are the definition: validated, documented,
turned into the schema. The child cannot import ``tutor.core`` (it may run under another
interpreter with only torch), so it reads each check as the plain JSON ``as_data`` makes of a
record, through these TypedDicts; mypy checks every read of the kinds against them, and
``tests/unit/test_author_vocab.py`` fails when a field here and the record's field disagree (a
renamed field, a new one, a changed default). Standard library only.
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict, Union

Text = Union[str, dict[str, str]]


class CheckHintData(TypedDict, total=False):
    text: Text
    status: list[Literal["failed", "error", "timeout"]] | None
    case: int | None


class CheckData(TypedDict, total=False):
    """The fields every check has (``description`` and the hints stay with the parent)."""

    id: str
    kind: str
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
    count: int | None
    names: list[str] | None
    include: list[str] | None
    exclude: list[str] | None
    dtype: str | None
    device: str | None
    requires_grad: bool | None


class ModuleData(CheckData, total=False):
    value: str
    to: str | None
    run: str | None
    training: bool | None
    parameters: TensorGroupData | None
    buffers: TensorGroupData | None
    hyperparameters_unchanged: bool


class ModeStateData(TypedDict, total=False):
    grad_enabled: bool | None
    inference_mode: bool | None
    autocast: bool | str | None


class ModeData(CheckData, total=False):
    module: str
    call: str
    during: ModeStateData | None
    restored: bool
    output_dtypes: dict[str, str] | None


class UnchangedData(CheckData, total=False):
    call: str
    names: list[str]


class RaisesData(CheckData, total=False):
    call: str
    type: str
    match: str | None


class OutputData(CheckData, total=False):
    call: str
    match: str


class MemoryData(CheckData, total=False):
    call: str
    steps: list[int]
    expect: Literal["flat", "grows"]
    measure: Literal["auto", "graph", "rss", "cuda"]
    tolerance: float
    slack_per_step: int


class TopKData(TypedDict, total=False):
    k: int
    within: list[str]


class ShareData(TypedDict, total=False):
    ops: list[str]
    at_least: float


class CallCountData(TypedDict, total=False):
    ops: list[str]
    at_most: int | None
    at_least: int | None


class CompareRankingData(TypedDict, total=False):
    call: str
    k: int
    workloads: list[str]
    near_tie: float


class ProfileData(CheckData, total=False):
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
    min: float | None
    max: float | None


class TimingData(CheckData, total=False):
    fast: str
    slow: str
    ratio: RatioData
    warmup: int
    repeat: int
    threads: int


class WarnsData(CheckData, total=False):
    call: str
    category: str
    match: str | None


class ExprData(CheckData, total=False):
    predicate: str
    message: Text


class FormData(CheckData, total=False):
    """Judged by the parent (``tutor.core.form``), never by the probe: listed so the two sides agree."""

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

#: record class name in tutor.core.check_models -> its TypedDict here (the nested records)
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
