"""The check vocabulary: what an exercise can assert about the learner's code.

Checks are data here (validated with the pack) and behaviour in ``tutor.checks`` (run inside
the sandbox child, after the learner's code). Every check runs in a fresh namespace holding the
learner's globals plus ``torch``, ``nn``, ``F`` and ``np``, re-seeded with ``seed``; ``setup``
runs first, once per entry of ``cases`` (whose keys become names), so a check exercises the
learner's functions with inputs the learner never saw.

Strings named ``value``, ``call``, ``close_to``... are Python expressions in that namespace;
``setup`` is a block of statements.
"""

from __future__ import annotations

import ast
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from tutor.core.text import Text

CheckId = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9_-]*$", max_length=64)]
DType = Annotated[
    str,
    Field(
        pattern=r"^(torch\.)?[a-z0-9_]+$",
        description="a torch dtype name, e.g. float32, bfloat16, int64",
        examples=["float32"],
    ),
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _compiles(source: str | None, mode: str) -> str | None:
    if source is not None:
        try:
            ast.parse(source, mode=mode)
        except SyntaxError as exc:
            where = f" (line {exc.lineno})" if exc.lineno and mode == "exec" else ""
            raise ValueError(f"not valid Python{where}: {exc.msg}") from None
    return source


def _expression(value: str | None) -> str | None:
    return _compiles(value, "eval")


def _statements(value: str | None) -> str | None:
    return _compiles(value, "exec")


class CheckBase(_Strict):
    id: CheckId = Field(description="unique within the exercise")
    description: Text = Field(description="what the check asks, in the learner's terms")
    hint: Text | None = Field(None, description="shown when this check fails")
    after: list[CheckId] = Field(
        default_factory=list,
        description="ids of checks this one depends on: it is skipped unless they all passed",
    )
    setup: str | None = Field(None, description="Python statements run before the check, once per case")
    cases: list[dict[str, Any]] = Field(
        default_factory=lambda: [{}],
        min_length=1,
        description="each mapping binds names for one run of the check (e.g. sizes)",
    )
    seed: int = Field(0, description="torch/random/numpy are seeded with this before each case")

    _setup = field_validator("setup")(_statements)


# --------------------------------------------------------------------------- tensor


class TensorCheck(CheckBase):
    """Properties of a value: a tensor, or a Python number where a number is asked for."""

    kind: Literal["tensor"]
    value: str = Field(description="expression giving the value, e.g. project(x, w)")
    each: bool = Field(False, description="the value is a sequence: check every element")
    dtype: DType | None = None
    shape: list[Union[int, str]] | None = Field(None, description="ints or expressions, e.g. [b, out]")
    device: str | None = Field(None, description="cpu, cuda, meta (the index is ignored unless given)")
    requires_grad: bool | None = None
    is_leaf: bool | None = None
    grad_fn: str | None = Field(None, description="'none', 'present', or a class name such as AddBackward0")
    is_inference: bool | None = None
    contiguous: bool | None = None
    layout: str | None = Field(None, description="e.g. strided, sparse_coo")
    number: bool | None = Field(None, description="true: must be a plain Python number (e.g. from .item())")
    close_to: str | None = Field(None, description="expression for the reference value")
    rtol: float = Field(1e-5, ge=0)
    atol: float = Field(1e-6, ge=0)
    shares_storage_with: str | None = Field(None, description="expression: must share memory with it")
    independent_of: str | None = Field(None, description="expression: must not share memory with it")

    _exprs = field_validator("value", "close_to", "shares_storage_with", "independent_of")(_expression)


# --------------------------------------------------------------------------- module


class TensorGroup(_Strict):
    """Expectations about a module's parameters or buffers."""

    count: int | None = Field(None, ge=0)
    names: list[str] | None = Field(None, description="exact set of dotted names")
    include: list[str] | None = Field(None, description="names that must be present")
    exclude: list[str] | None = Field(None, description="names that must be absent")
    dtype: DType | None = None
    device: str | None = None
    requires_grad: bool | None = None


class ModuleCheck(CheckBase):
    """A module's mode, parameters and buffers, optionally after moving it or calling code."""

    kind: Literal["module"]
    value: str = Field(description="expression giving the module, e.g. Net(width=16, depth=3)")
    to: str | None = Field(None, description="call .to(this) first, e.g. meta; the result is checked")
    run: str | None = Field(None, description="statements run with the module bound as `module`")
    training: bool | None = Field(None, description="the module and every submodule")
    parameters: TensorGroup | None = None
    buffers: TensorGroup | None = None
    hyperparameters_unchanged: bool = Field(
        False, description="every submodule's settings (e.g. Dropout's p) are the same after `run`"
    )

    _value = field_validator("value")(_expression)
    _run = field_validator("run")(_statements)


# --------------------------------------------------------------------------- mode


class ModeState(_Strict):
    grad_enabled: bool | None = None
    inference_mode: bool | None = None
    autocast: Union[bool, DType, None] = Field(
        None, description="false: off; true: on; or the dtype autocast must use (e.g. bfloat16)"
    )


class ModeCheck(CheckBase):
    """Grad, inference and autocast state seen inside a module's forward, and afterwards."""

    kind: Literal["mode"]
    module: str = Field(description="expression giving the module; bound as `module` for `call`")
    call: str = Field(description="expression calling the learner's code, e.g. validate(module, x)")
    during: ModeState | None = Field(None, description="state observed at every forward of `module`")
    restored: bool = Field(True, description="grad/inference/autocast state after the call equals before")
    output_dtypes: dict[str, DType] | None = Field(
        None, description="submodule class name (e.g. Linear) or dotted name -> dtype of its output"
    )

    _exprs = field_validator("module", "call")(_expression)


# --------------------------------------------------------------------------- unchanged


class UnchangedCheck(CheckBase):
    """The learner's function leaves the caller's arguments as they were."""

    kind: Literal["unchanged"]
    call: str = Field(description="expression or statements calling the learner's code")
    names: list[str] = Field(min_length=1, description="names from setup that must not change")

    _call = field_validator("call")(_statements)


# --------------------------------------------------------------------------- raises / output


class RaisesCheck(CheckBase):
    kind: Literal["raises"]
    call: str = Field(description="statements that must raise")
    type: str = Field(description="exception class name, e.g. RuntimeError")
    match: str | None = Field(None, description="regular expression searched in the message")

    _call = field_validator("call")(_statements)


class OutputCheck(CheckBase):
    kind: Literal["output"]
    call: str = Field(description="statements whose stdout is captured")
    match: str = Field(description="regular expression searched in what they print")

    _call = field_validator("call")(_statements)


# --------------------------------------------------------------------------- memory


class MemoryCheck(CheckBase):
    """Memory kept alive by what a call returns, as the number of steps grows."""

    kind: Literal["memory"]
    call: str = Field(description="expression using `n` (the number of steps), e.g. log_losses(model, batches(n))")
    steps: list[int] = Field(default_factory=lambda: [4, 8, 16, 32], min_length=2)
    expect: Literal["flat", "grows"] = "flat"
    measure: Literal["auto", "graph", "rss", "cuda"] = Field(
        "auto",
        description="graph: bytes of tensors reachable from the result, through autograd graphs too "
        "(exact and noise-free, on CPU and CUDA); rss: the process's resident memory (only for large "
        "signals); cuda: torch.cuda.memory_allocated; auto: graph",
    )
    tolerance: float = Field(
        0.25, ge=0, description="flat: the last step may keep at most this fraction more than the first"
    )
    slack_per_step: int = Field(
        64, ge=0,
        description="flat: bytes per extra step allowed on top of tolerance (a list of floats or of "
        "detached scalars grows a little, and is not a leak)",
    )

    _call = field_validator("call")(_expression)

    @field_validator("steps")
    @classmethod
    def _increasing(cls, steps: list[int]) -> list[int]:
        if any(b <= a for a, b in zip(steps, steps[1:])) or steps[0] < 1:
            raise ValueError("steps must be positive and increasing")
        return steps


# --------------------------------------------------------------------------- profile


class TopK(_Strict):
    k: int = Field(ge=1)
    within: list[str] = Field(min_length=1, description="operator names (aten::mm) or prefixes ending in *")


class Share(_Strict):
    ops: list[str] = Field(min_length=1, description="operator names or prefixes ending in *")
    at_least: float = Field(gt=0, le=1)


class CompareRanking(_Strict):
    call: str = Field(description="expression calling the learner's ranking, with `workload` and `k` bound")
    k: int = Field(3, ge=1)
    workloads: list[str] = Field(min_length=1, description="expressions giving zero-argument callables")
    near_tie: float = Field(
        0.15, ge=0, le=1, description="operators within this relative distance in self time may swap places"
    )

    _exprs = field_validator("call")(_expression)


class ProfileCheck(CheckBase):
    """Operators ranked by CPU time for a workload, measured robustly (warm-up, median of runs)."""

    kind: Literal["profile"]
    workload: str | None = Field(None, description="expression giving a zero-argument callable")
    sort_by: Literal["self", "total"] = "self"
    warmup: int = Field(2, ge=0)
    repeat: int = Field(5, ge=1, le=50)
    top1_in: list[str] | None = None
    top_k: TopK | None = None
    absent: list[str] | None = None
    share: Share | None = None
    compare: CompareRanking | None = None

    _workload = field_validator("workload")(_expression)

    @model_validator(mode="after")
    def _something_to_assert(self) -> "ProfileCheck":
        if self.compare is None and self.workload is None:
            raise ValueError("a profile check needs a workload (or a compare block)")
        if not any((self.top1_in, self.top_k, self.absent, self.share, self.compare)):
            raise ValueError("a profile check needs one of top1_in, top_k, absent, share, compare")
        return self


# --------------------------------------------------------------------------- timing / expr


class Ratio(_Strict):
    min: float | None = Field(None, gt=0)
    max: float | None = Field(None, gt=0)


class TimingCheck(CheckBase):
    """slow/fast time ratio (medians after warm-up), asserted only as a range with slack."""

    kind: Literal["timing"]
    fast: str = Field(description="expression giving a zero-argument callable")
    slow: str = Field(description="expression giving a zero-argument callable")
    ratio: Ratio
    warmup: int = Field(3, ge=0)
    repeat: int = Field(15, ge=3, le=200)

    _exprs = field_validator("fast", "slow")(_expression)


class ExprCheck(CheckBase):
    """The escape hatch: an instructor's predicate."""

    kind: Literal["expr"]
    predicate: str = Field(description="expression that must be truthy")
    message: Text = Field(description="shown when the predicate is false")

    _predicate = field_validator("predicate")(_expression)


Check = Annotated[
    Union[
        TensorCheck,
        ModuleCheck,
        ModeCheck,
        UnchangedCheck,
        RaisesCheck,
        OutputCheck,
        MemoryCheck,
        ProfileCheck,
        TimingCheck,
        ExprCheck,
    ],
    Field(discriminator="kind"),
]

CHECK_KINDS = ("tensor", "module", "mode", "unchanged", "raises", "output", "memory", "profile", "timing", "expr")
