"""What every step record shares (its id, title and requirements), apart from ``models`` so that a
quiz type's own module (``tutor/pack/quizzes/``) can build on it without importing the pack's
records."""

from __future__ import annotations

from typing import Annotated

from tutor.pack.spec import Meta, record
from tutor.pack.text import Text

#: Ids are what progress, drafts and `torch-tutor check` refer to: keep them stable and simple.
Id = Annotated[
    str,
    Meta(
        "lower-case letters, digits, '-' and '_'; stable, since progress refers to it",
        pattern=r"^[a-z0-9][a-z0-9_-]*$",
        max_length=64,
    ),
]

Seconds = Annotated[float, Meta(gt=0, le=300)]


@record
class Requires:
    """What the learner's machine needs for the pack (or one step) to run."""

    torch: Annotated[
        str | None,
        Meta("a torch version range in PEP 440 form, e.g. '>=2.2' or '>=2.2,<3'", examples=[">=2.2"]),
    ] = None
    cuda: Annotated[bool, Meta("true: needs a CUDA device; skipped with a notice otherwise")] = False

    def __post_init__(self) -> None:
        if self.torch is not None:
            from tutor.pack.versions import parse_specifier

            parse_specifier(self.torch)


@record
class StepBase:
    id: Annotated[Id, Meta("unique within the lesson")]
    title: Text | None = None
    requires: Annotated[Requires | None, Meta("e.g. {cuda: true} for a GPU-only step")] = None
