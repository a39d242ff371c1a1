"""The check vocabulary: what an exercise can assert about the learner's code.

Checks are data here (validated with the pack) and behaviour in ``tutor.child.checks`` (run inside
the sandbox child, after the learner's code). Every check runs in a fresh namespace holding the
learner's globals plus ``torch``, ``nn``, ``F`` and ``np``, re-seeded with ``seed``; ``setup``
runs first, once per entry of ``cases`` (whose keys become names), so a check exercises the
learner's functions with inputs the learner never saw.

Strings named ``value``, ``call``, ``close_to``... are Python expressions in that namespace;
``setup`` is a block of statements.
"""

from __future__ import annotations

import ast
from dataclasses import field
from typing import Annotated, Any, ClassVar, Literal, Union, get_args

from tutor.pack.spec import Meta, record
from tutor.pack.text import Text

CheckId = Annotated[str, Meta(pattern=r"^[a-z0-9][a-z0-9_-]*$", max_length=64)]
#: torch's other names for a dtype (checked on torch 2.13: torch.long is torch.int64), and the
#: name a tensor's dtype prints as; a check compares the latter.
DTYPE_ALIASES = {"long": "int64", "int": "int32", "short": "int16", "float": "float32", "double": "float64",
                 "half": "float16", "cfloat": "complex64", "cdouble": "complex128", "chalf": "complex32"}


def _canonical_dtype(name: str | None) -> str | None:
    """``long`` and ``torch.long`` are int64: every alias as the name torch prints."""
    if name is None:
        return None
    bare = name.removeprefix("torch.")
    return DTYPE_ALIASES.get(bare, bare)


DType = Annotated[
    str,
    Meta(
        "a torch dtype name, e.g. float32, bfloat16, int64 (torch's aliases long, int, float, double, half... "
        "are read as the name torch prints: int64, int32, float32, float64, float16...)",
        pattern=r"^(torch\.)?[a-z0-9_]+$",
        examples=["float32"],
        after=_canonical_dtype,
    ),
]


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


def _one_empty_case() -> list[dict[str, Any]]:
    """A check's cases when it names none: one run with no names bound (a named factory)."""
    return [{}]


def _doubling_steps() -> list[int]:
    """A memory check's step counts when it names none (a named factory)."""
    return [4, 8, 16, 32]


def _expr(description: str | None = None) -> Meta:
    """A Python expression, checked to parse when the pack is loaded."""
    return Meta(description, after=_expression)


def _stmts(description: str | None = None) -> Meta:
    """Python statements, checked to parse when the pack is loaded."""
    return Meta(description, after=_statements)


HintStatus = Literal["failed", "error", "timeout"]


@record
class CheckHint:
    """A hint for one way a check can go wrong: in a given case, with a given status, or both."""

    text: Text
    status: Annotated[
        list[HintStatus] | None,
        Meta("the statuses it is shown for (default: failed only; an error or timeout has its own cause)"),
    ] = None
    case: Annotated[int | None, Meta(ge=0), Meta("the index of the case (0 = the first) it is shown for")] = None

    def applies(self, status: str, case: int | None) -> bool:
        statuses = self.status if self.status is not None else ["failed"]
        return status in statuses and (self.case is None or self.case == case)


@record
class CheckBase:
    # The fields every check has; a kind's record adds its own and its ``kind`` tag. (No
    # docstring: the reference in docs/authoring.md shows a record's docstring.)
    #: names the kind binds for its own expressions (besides the case's), e.g. `module`; what
    #: ``validate`` does not ask the contract to declare
    BINDS: ClassVar[frozenset[str]] = frozenset()
    #: the kind measures (time, memory, a profile) and reports a margin to its bound, which
    #: ``validate --repeat`` collects
    MEASURES: ClassVar[bool] = False

    id: Annotated[CheckId, Meta("unique within the exercise")]
    description: Annotated[Text, Meta("what the check asks, in the learner's terms")]
    hint: Annotated[Text | None, Meta("shown when this check fails (unless an entry of `hints` applies)")] = None
    hints: Annotated[
        list[CheckHint],
        Meta("hints for a given case or status, e.g. {case: 1, text: ...} or {status: [timeout], text: ...}; "
             "the first that applies is shown instead of `hint`"),
    ] = field(default_factory=list)
    time_limit: Annotated[
        float | None,
        Meta(gt=0, le=120),
        Meta("seconds this check may take, all its cases together; past it the check's status is `timeout`. "
             "Default: its share of the time left for checks (the exercise's `timeout` x 0.8, split by "
             "weight: profile and timing 4, memory 3, others 1), about 2 s for one of four plain checks"),
    ] = None
    after: Annotated[
        list[CheckId],
        Meta("ids of checks this one depends on: it is skipped unless they all passed"),
    ] = field(default_factory=list)
    setup: Annotated[str | None, _stmts("Python statements run before the check, once per case")] = None
    cases: Annotated[
        list[dict[str, Any]],
        Meta(min_length=1),
        Meta("each mapping binds names for one run of the check (e.g. sizes)"),
    ] = field(default_factory=_one_empty_case)
    seed: Annotated[
        int | None,
        Meta("torch/random/numpy are seeded with this before each case; unset: a fresh seed per case and run"),
    ] = None
    weight: Annotated[
        float, Meta(ge=0), Meta("this check's share of the exercise's points, relative to the others' weights")
    ] = 1.0

    def hint_for(self, status: str, case: int | None = None) -> Text | None:
        """The hint to show for a result with ``status`` in case ``case`` (None: no hint)."""
        for rule in self.hints:
            if rule.applies(status, case):
                return rule.text
        return self.hint if status == "failed" else None


# --------------------------------------------------------------------------- tensor


@record
class TensorCheck(CheckBase):
    """Properties of a value: a tensor, or a Python number where a number is asked for."""

    kind: Literal["tensor"]
    value: Annotated[str, _expr("expression giving the value, e.g. project(x, w)")]
    each: Annotated[bool, Meta("the value is a sequence: check every element")] = False
    dtype: DType | None = None
    shape: Annotated[list[Union[int, str]] | None, Meta("ints or expressions, e.g. [b, out]")] = None
    device: Annotated[str | None, Meta("cpu, cuda, meta (the index is ignored unless given)")] = None
    requires_grad: bool | None = None
    is_leaf: bool | None = None
    grad_fn: Annotated[str | None, Meta("'none', 'present', or a class name such as AddBackward0")] = None
    is_inference: bool | None = None
    contiguous: bool | None = None
    layout: Annotated[str | None, Meta("e.g. strided, sparse_coo")] = None
    number: Annotated[bool | None, Meta("true: must be a plain Python number (e.g. from .item())")] = None
    close_to: Annotated[str | None, _expr("expression for the reference value")] = None
    rtol: Annotated[float, Meta(ge=0)] = 1e-5
    atol: Annotated[float, Meta(ge=0)] = 1e-6
    shares_storage_with: Annotated[str | None, _expr("expression: must share memory with it")] = None
    independent_of: Annotated[str | None, _expr("expression: must not share memory with it")] = None
    broadcast: Annotated[
        bool,
        Meta("compare with close_to after broadcasting the two to one shape (a value of shape (1, n) matches "
             "a reference of shape (n,)); shapes that do not broadcast still fail. `shape` stays exact"),
    ] = False


# --------------------------------------------------------------------------- module


@record
class TensorGroup:
    """Expectations about a module's parameters or buffers."""

    count: Annotated[int | None, Meta(ge=0)] = None
    names: Annotated[list[str] | None, Meta("exact set of dotted names")] = None
    include: Annotated[list[str] | None, Meta("names that must be present")] = None
    exclude: Annotated[list[str] | None, Meta("names that must be absent")] = None
    dtype: DType | None = None
    device: str | None = None
    requires_grad: bool | None = None


@record
class ModuleCheck(CheckBase):
    """A module's mode, parameters and buffers, optionally after moving it or calling code."""

    BINDS = frozenset({"module"})

    kind: Literal["module"]
    value: Annotated[str, _expr("expression giving the module, e.g. Net(width=16, depth=3)")]
    to: Annotated[str | None, Meta("call .to(this) first, e.g. meta; the result is checked")] = None
    run: Annotated[str | None, _stmts("statements run with the module bound as `module`")] = None
    training: Annotated[bool | None, Meta("the module and every submodule")] = None
    parameters: TensorGroup | None = None
    buffers: TensorGroup | None = None
    hyperparameters_unchanged: Annotated[
        bool, Meta("every submodule's settings (e.g. Dropout's p) are the same after `run`")
    ] = False


# --------------------------------------------------------------------------- mode


@record
class ModeState:
    grad_enabled: bool | None = None
    inference_mode: bool | None = None
    autocast: Annotated[
        Union[bool, DType, None],
        Meta("false: off; true: on; or the dtype autocast must use (e.g. bfloat16)"),
    ] = None


@record
class ModeCheck(CheckBase):
    """Grad, inference and autocast state seen inside a module's forward, and afterwards."""

    BINDS = frozenset({"module"})

    kind: Literal["mode"]
    module: Annotated[str, _expr("expression giving the module; bound as `module` for `call`")]
    call: Annotated[str, _expr("expression calling the learner's code, e.g. validate(module, x)")]
    during: Annotated[ModeState | None, Meta("state observed at every forward of `module`")] = None
    restored: Annotated[bool, Meta("grad/inference/autocast state after the call equals before")] = True
    output_dtypes: Annotated[
        dict[str, DType] | None,
        Meta("submodule class name (e.g. Linear) or dotted name -> dtype of its output"),
    ] = None


# --------------------------------------------------------------------------- unchanged


@record
class UnchangedCheck(CheckBase):
    """The learner's function leaves the caller's arguments as they were."""

    kind: Literal["unchanged"]
    call: Annotated[str, _stmts("expression or statements calling the learner's code")]
    names: Annotated[list[str], Meta(min_length=1), Meta("names from setup that must not change")]


# --------------------------------------------------------------------------- raises / output


@record
class RaisesCheck(CheckBase):
    kind: Literal["raises"]
    call: Annotated[str, _stmts("statements that must raise")]
    type: Annotated[str, Meta("exception class name, e.g. RuntimeError")]
    match: Annotated[str | None, Meta("regular expression searched in the message")] = None


@record
class OutputCheck(CheckBase):
    kind: Literal["output"]
    call: Annotated[str, _stmts("statements whose stdout is captured")]
    match: Annotated[str, Meta("regular expression searched in what they print")]


# --------------------------------------------------------------------------- memory


def _increasing(steps: list[int]) -> list[int]:
    if any(b <= a for a, b in zip(steps, steps[1:])) or steps[0] < 1:
        raise ValueError("steps must be positive and increasing")
    return steps


@record
class MemoryCheck(CheckBase):
    """Memory kept alive by what a call returns, as the number of steps grows."""

    BINDS = frozenset({"n"})
    MEASURES = True

    kind: Literal["memory"]
    call: Annotated[str, _expr("expression using `n` (the number of steps), e.g. log_losses(model, batches(n))")]
    steps: Annotated[list[int], Meta(min_length=2), Meta(after=_increasing)] = field(
        default_factory=_doubling_steps)
    expect: Literal["flat", "grows"] = "flat"
    measure: Annotated[
        Literal["auto", "graph", "rss", "cuda"],
        Meta(
            "graph: bytes of tensors reachable from the result, through autograd graphs too "
            "(exact and noise-free, on CPU and CUDA); rss: the process's resident memory (only for large "
            "signals); cuda: torch.cuda.memory_allocated; auto: graph"
        ),
    ] = "auto"
    tolerance: Annotated[
        float, Meta(ge=0), Meta("flat: the last step may keep at most this fraction more than the first")
    ] = 0.25
    slack_per_step: Annotated[
        int,
        Meta(ge=0),
        Meta(
            "flat: bytes per extra step allowed on top of tolerance (a list of floats or of "
            "detached scalars grows a little, and is not a leak)"
        ),
    ] = 64


# --------------------------------------------------------------------------- profile


@record
class TopK:
    k: Annotated[int, Meta(ge=1)]
    within: Annotated[
        list[str], Meta(min_length=1), Meta("operator names (aten::mm) or prefixes ending in *")
    ]


@record
class Share:
    ops: Annotated[list[str], Meta(min_length=1), Meta("operator names or prefixes ending in *")]
    at_least: Annotated[float, Meta(gt=0, le=1)]


@record
class CallCount:
    """How many times operators run per call of the workload (summed over the operators listed)."""

    ops: Annotated[list[str], Meta(min_length=1), Meta("operator names (aten::select) or prefixes ending in *")]
    at_most: Annotated[int | None, Meta(ge=0)] = None
    at_least: Annotated[int | None, Meta(ge=0)] = None

    def __post_init__(self) -> None:
        if self.at_most is None and self.at_least is None:
            raise ValueError("a call count needs at_most or at_least")


Threads = Annotated[
    int,
    Meta(ge=1, le=64),
    Meta("intra-op threads the measured calls run with (torch.set_num_threads); 1 keeps the verdict a "
         "property of the work, not of the machine's load"),
]


@record
class CompareRanking:
    """The learner's ranking function against the checker's own measurement, workload by workload.
    A ranking that disagrees beyond a near-tie is measured again, both rankings, and fails only
    if it disagrees three times running (one stall of a busy core can upset an honest ranking)."""

    call: Annotated[str, _expr("expression calling the learner's ranking, with `workload` and `k` bound")]
    k: Annotated[int, Meta(ge=1)] = 3
    workloads: Annotated[
        list[str], Meta(min_length=1), Meta("expressions giving zero-argument callables")
    ]
    near_tie: Annotated[
        float,
        Meta(ge=0, le=1),
        Meta("operators within this relative distance in self time may swap places"),
    ] = 0.15


@record
class ProfileCheck(CheckBase):
    """Operators ranked by CPU time for a workload, measured robustly (warm-up, median of runs)."""

    BINDS = frozenset({"workload", "k"})
    MEASURES = True

    kind: Literal["profile"]
    workload: Annotated[str | None, _expr("expression giving a zero-argument callable")] = None
    sort_by: Literal["self", "total"] = "self"
    warmup: Annotated[int, Meta(ge=0)] = 2
    repeat: Annotated[int, Meta(ge=1, le=50)] = 5
    top1_in: list[str] | None = None
    top_k: TopK | None = None
    absent: list[str] | None = None
    share: Share | None = None
    calls: Annotated[
        list[CallCount] | None,
        Meta("operator call counts per call of the workload, e.g. [{ops: [aten::select], at_most: 10}]"),
    ] = None
    compare: CompareRanking | None = None
    threads: Threads = 1
    only: Annotated[
        list[str] | None,
        Meta("the only operators the workload's own code may call directly (operators run from inside "
             "another one, such as what indexing runs, do not count), names or prefixes ending in *, e.g. "
             "[aten::arange, aten::where, aten::index, aten::select, aten::slice]"),
    ] = None

    def __post_init__(self) -> None:
        if self.compare is None and self.workload is None:
            raise ValueError("a profile check needs a workload (or a compare block)")
        if not any((self.top1_in, self.top_k, self.absent, self.share, self.calls, self.compare,
                    self.only is not None)):
            raise ValueError("a profile check needs one of top1_in, top_k, absent, share, calls, compare, only")


# --------------------------------------------------------------------------- timing / expr


@record
class Ratio:
    """Bounds on slow/fast, written as a mapping: {min: 20}, {max: 2}, or {min: 0.5, max: 2}."""

    min: Annotated[float | None, Meta(gt=0), Meta("slow/fast must be at least this (fast is min times faster)")] = None
    max: Annotated[float | None, Meta(gt=0), Meta("slow/fast must be at most this")] = None


@record
class TimingCheck(CheckBase):
    """slow/fast time ratio (medians after warm-up), asserted only as a range with slack."""

    MEASURES = True

    kind: Literal["timing"]
    fast: Annotated[str, _expr("expression giving a zero-argument callable")]
    slow: Annotated[str, _expr("expression giving a zero-argument callable")]
    ratio: Annotated[
        Ratio,
        Meta("bounds on median(slow) / median(fast), e.g. {min: 20}; no slack is added: put the margin "
             "in the bound (validate --repeat shows the margin)"),
    ]
    warmup: Annotated[int, Meta(ge=0)] = 3
    repeat: Annotated[int, Meta(ge=3, le=200)] = 15
    threads: Threads = 1


@record
class WarnsCheck(CheckBase):
    """The code emits a warning of a given category (the learner's code, called from `call`)."""

    kind: Literal["warns"]
    call: Annotated[str, _stmts("statements that must warn")]
    category: Annotated[
        str, Meta("warning class name, e.g. UserWarning, DeprecationWarning (a subclass also counts)")
    ] = "Warning"
    match: Annotated[str | None, Meta("regular expression searched in the warning's message")] = None


@record
class ExprCheck(CheckBase):
    """The escape hatch: an instructor's predicate."""

    kind: Literal["expr"]
    predicate: Annotated[str, _expr("expression that must be truthy")]
    message: Annotated[Text, Meta("shown when the predicate is false")]


# --------------------------------------------------------------------------- form


_MaxLines = Annotated[int | None, Meta(ge=1), Meta("lines holding code (blank and comment lines do not count)")]
_MaxStatements = Annotated[int | None, Meta(ge=1), Meta("statements, nested ones included")]
_MaxLineLength = Annotated[int | None, Meta(ge=1), Meta("characters on any line of code")]
_Loops = Annotated[bool, Meta("false: no for or while loops")]
_Comprehensions = Annotated[bool, Meta("false: no list, set, dict or generator comprehensions")]
_Imports = Annotated[bool, Meta("false: no import statements")]
_TorchAllow = Annotated[
    list[str] | None,
    Meta("the only things from torch the code may use (torch.X, or imported from torch), e.g. [arange, "
         "where]; dotted names or patterns with *, e.g. nn.functional.*; [] allows nothing from torch"),
]
_TorchDeny = Annotated[list[str] | None, Meta("things from torch the code may not use, e.g. [cumsum, 'linalg.*']")]
_NamesDeny = Annotated[
    list[str] | None,
    Meta("names the code may not use, e.g. [torch, sum, getattr, eval]; patterns with * allowed"),
]
_AttributesDeny = Annotated[
    list[str] | None,
    Meta("attributes and methods the code may not use on anything, e.g. [view, squeeze, 'unsqueeze*']"),
]


@record
class FormRules:
    """Rules every `form` check of the pack starts from (pack.yaml's `form_rules`); its own keys win.

    Defined once, for a set whose every exercise has the same rules.
    """

    max_lines: _MaxLines = None
    max_statements: _MaxStatements = None
    max_line_length: _MaxLineLength = None
    loops: _Loops = True
    comprehensions: _Comprehensions = True
    imports: _Imports = True
    torch_allow: _TorchAllow = None
    torch_deny: _TorchDeny = None
    names_deny: _NamesDeny = None
    attributes_deny: _AttributesDeny = None


@record
class _FormCheckHead(CheckBase):
    """The keys of a `form` check that come before its rules (FormCheck's fields, in order)."""

    kind: Literal["form"]
    function: Annotated[
        str | None,
        Meta(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$"),
        Meta("the rules apply to the body of this top-level function (its docstring aside) and, unless "
             "`follow_calls` is false, to every function of the submission it reaches; default: the whole file"),
    ] = None
    follow_calls: Annotated[
        bool,
        Meta("with `function`: the rules also judge every function (or class, or `name = lambda`) of the "
             "submission that the function names, and what those name in turn, as one piece of code (its "
             "lines and statements count together); false: the function's own body only"),
    ] = True


@record
class FormCheck(FormRules, _FormCheckHead):
    """Rules about how the code is written, read from its syntax tree (judged without running it).

    Opt-in, for exercises about the form of code (one line, no loops, only these torch functions).
    Judged by the tutor from the source text, outside any process the learner's code runs in.
    """

    # The rules are FormRules' fields, defined once there (dataclass fields follow the reversed
    # MRO: every check's, then kind and function, then the rules, as the schema lists them).

    def __post_init__(self) -> None:
        rules = (self.max_lines, self.max_statements, self.max_line_length, self.torch_allow, self.torch_deny,
                 self.names_deny, self.attributes_deny)
        if all(rule is None for rule in rules) and self.loops and self.comprehensions and self.imports:
            raise ValueError("a form check needs a rule: max_lines, max_statements, max_line_length, loops: false, "
                             "comprehensions: false, imports: false, torch_allow, torch_deny, names_deny or "
                             "attributes_deny")
        if self.cases != [{}] or self.setup is not None or self.seed is not None:
            raise ValueError("a form check reads the code without running it: it takes no cases, setup or seed")


#: Every check kind, one record each: this union is where a kind is registered (docs/architecture.md,
#: "Adding a check kind"); the tables below and the reference in docs/authoring.md are built from it.
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
        WarnsCheck,
        ExprCheck,
        FormCheck,
    ],
    Meta(discriminator="kind"),
]


def _tag(record_class: type) -> str:
    """The ``kind`` a check record's ``Literal`` names, read from its annotation's text (this module
    is imported at start-up, and resolving every record's annotations is not free)."""
    for klass in record_class.__mro__:
        annotation = klass.__dict__.get("__annotations__", {}).get("kind")
        if annotation is not None:
            literal = ast.literal_eval(ast.parse(annotation, mode="eval").body.slice)
            return str(literal)
    raise TypeError(f"{record_class.__name__} has no `kind: Literal[...]`")


#: The check records, in the union's order.
CHECK_RECORDS: tuple[type[CheckBase], ...] = get_args(get_args(Check)[0])
#: kind -> its record
RECORDS: dict[str, type[CheckBase]] = {_tag(record_class): record_class for record_class in CHECK_RECORDS}
CHECK_KINDS = tuple(RECORDS)
#: Kinds judged by the tutor itself from the submission's text, before the run, never in the sandbox.
PARENT_KINDS = ("form",)
