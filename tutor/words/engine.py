"""The check engine's own sentences, by key: what a check says about a learner's code.

The child side (the judge) cannot import ``tutor.pack`` (see docs/architecture.md), so its
sentences live here, in a module that imports nothing, and each travels to the parent as a
*said* (``{"key": ..., "fields": {...}}``, plain JSON) beside its English ``message``. The
parent merges :data:`WORDS` into the UI table (``tutor.words.i18n``), so the table's parity tests
cover these keys and every language has them; it shows a check's said in the learner's language.

Fields hold values as the check saw them (numbers, shapes, names, code): never translated. A
field may itself be a said (a phrase inside a sentence), rendered in the same language.
"""

from __future__ import annotations

TYPE_CHECKING = False  # this module imports nothing, typing included (tests/unit/test_layers.py)
if TYPE_CHECKING:
    from typing import Any

#: key -> English template (``str.format`` fields).
WORDS: dict[str, str] = {
    # how a sentence is put together
    "checks.lead": "{what}: {sentence}",
    "checks.where": "{sentence} ({where})",
    "checks.item": "item {index}",
    "checks.for": "for {inputs}",
    "checks.reference_value": "the reference value",
    # probe: the status of a check as a whole
    "checks.skipped": "skipped: needs {names} to pass first",
    "checks.unknown_kind": "this tutor does not know check kind {kind}",
    "checks.out_of_time": "not run: the time for checks ran out (earlier checks were too slow)",
    "checks.prelude_failed": "the pack's prelude failed in the checks: {error}",
    "checks.tampered": "tampering detected: {lie} (the checks cannot trust your code's process, so this check "
                       "cannot pass)",
    # what a canary caught (tutor/child/checks/canary.py), or the runner's broken seal (tutor/child/checks/remote.py):
    # the {lie} of checks.tampered
    "checks.seal_broken": "the checker's own code in your code's process was replaced while it ran",
    "checks.canary.call": "the answers about a call whose effects the checker knows were wrong (its changes to the "
                          "arguments, shared memory, autograd graph or values)",
    "checks.canary.raised": "a call the checker knows to succeed raised {type}",
    "checks.canary.modes": "the modes reported during a forward pass whose modes the checker set were wrong",
    "checks.canary.module_changed": "a module the checker made came back with other parameters or buffers",
    "checks.canary.not_a_module": "a module the checker asked for did not come back as a module",
    "checks.canary.module_state": "the state reported for a module after a call whose effects the checker knows was "
                                  "wrong (its modes, settings, parameters or buffers)",
    "checks.canary.memory": "the memory reported for a result whose size the checker knows was wrong",
    "checks.canary.profile_runs": "the profiles of a workload the checker knows did not come back as {repeat} run(s)",
    "checks.canary.profile_calls": "a profile of a workload that calls {op} {count} time(s) said otherwise",
    "checks.canary.profile_direct": "a profile of a workload that calls {op} directly {count} time(s) said otherwise",
    "checks.canary.profile_rank": "profiles of a workload dominated by {big} ranked {ranked} first",
    "checks.canary.timing": "the timings reported for calls whose durations the checker knows were wrong",
    "checks.and_then": "{first} and {rest}",
    "checks.runner_gone": "your code's process ended or stopped answering while this check ran "
                          "(os._exit? sys.exit in a thread? a crash? out of memory?)",
    "checks.checker_failed": "the checker itself failed: {error}",
    "checks.pattern_slow": "the check's pattern /{pattern}/ did not finish in {seconds} s (it backtracks "
                           "catastrophically: nested quantifiers such as (a+)+); this is a problem in the pack, "
                           "not in your code",
    "checks.time_limit": "the check's time_limit of {seconds} s",
    "checks.time_share": "its share of the time",
    "checks.stopped": "stopped after {seconds} s ({which})",
    "checks.stopped_wall": "stopped after {seconds} s of wall time, having used {used} s of CPU time ({which} is "
                           "{cpu} s of CPU time, and up to {wall} s of wall time): the code waited (a sleep, input, "
                           "a lock) or this machine was too busy to run it",
    "checks.stopped_cpu": "stopped after {used} s of CPU time ({which})",
    "checks.while_running": "{sentence} while running `{code}`",
    "checks.stuck": "not run: check '{check}' had to stop your code at line {line}, and this check "
                    "calls the same code",
    "checks.stuck_code": "not run: check '{check}' had to stop your code at line {line} (`{code}`), and "
                         "this check calls the same code",
    # a checked run's top level ran past its limit (tutor/child/worker/judging.py): no check started
    "checks.top_level_cpu": "not run: no check had started; your code's top level was stopped after {used} s of "
                            "CPU time (it may use {limit} s before the checks start)",
    "checks.at_line": "{sentence}, at line {line} of your code",
    "checks.at_line_code": "{sentence}, at line {line} of your code: `{code}`",
    # an exception, as the learner should read it
    "checks.raised_line": "{error} (line {line} of your code)",
    "checks.raised_line_code": "{error} (line {line} of your code: `{code}`)",
    "checks.raised_while": "{error} (while evaluating `{code}`)",
    # what the runner's seal refused the learner's code (tutor/child/checks/seal.py, issue 50): the {error} above
    "checks.refused": "Refused: {why}",
    "checks.refused.profile": "a trace or profile function (sys.settrace, sys.setprofile) is refused while your "
                              "code is checked: it would run inside the checker's own code",
    "checks.refused.audit": "an audit hook (sys.addaudithook) is refused while your code is checked: it would run "
                            "inside the checker's own code",
    "checks.refused.frames": "the checker's own frames are out of your code's reach while it is checked",
    "checks.refused.gc": "the garbage collector's lists of objects (gc.get_objects, get_referrers, "
                         "get_referents) are refused while your code is checked: they reach the checker's "
                         "own records",
    "checks.refused.memory": "reading or writing the process's memory by address (/proc/self/mem, ctypes "
                             "from_address, string_at) is refused while your code is checked",
    # values (tutor/child/checks/values.py)
    "checks.meta": "{what} is on the meta device: it has no values to compare",
    "checks.not_numeric": "expected a tensor or a number, got {got}",
    "checks.shape": "shape: expected {expected}, got {got}",
    "checks.shape_broadcast": "shape: expected {expected} or a shape that broadcasts with it, got {got}",
    "checks.is_wrong": "{what} is wrong",
    "checks.wrong_value": "wrong value",
    "checks.at_index": "{subject} at {index}",
    "checks.elements_differ": "{count} of {total} elements differ; {tolerance}",
    "checks.wrong": "{subject}: expected {expected}, got {got} ({tolerance})",
    # tensor
    "checks.tensor.not_sequence": "expected a list or tuple of values, got {got}",
    "checks.tensor.want_number": "expected a plain Python number (e.g. from .item()), got {got}",
    "checks.tensor.want_tensor": "expected a tensor, got a plain Python {type}",
    "checks.tensor.want_torch_tensor": "expected a torch.Tensor, got {got}",
    "checks.tensor.mismatch": "expected {name} {expected}, got {got}",
    "checks.tensor.mismatch.attached": "expected {name} {expected}, got {got} (the result is still attached to the "
                                       "autograd graph)",
    "checks.tensor.want_grad_fn": "expected grad_fn to be set (part of the autograd graph), got None",
    "checks.tensor.want_contiguous": "expected a contiguous tensor, got one that is not contiguous",
    "checks.tensor.want_non_contiguous": "expected a non-contiguous tensor, got one that is contiguous",
    "checks.tensor.want_inference": "expected an inference tensor (made under torch.inference_mode), got a normal "
                                    "tensor",
    "checks.tensor.want_normal": "expected a normal tensor, got an inference tensor",
    "checks.tensor.source_not_tensor": "`{source}` is {got}, not a tensor",
    "checks.tensor.want_view": "expected a view sharing memory with `{source}`, got a copy",
    "checks.tensor.want_copy": "expected a copy independent of `{source}`, got a tensor sharing its memory (changing "
                               "one changes the other)",
    # raises, output, warns
    "checks.raises.other": "expected {wanted}, got {got}",
    "checks.raises.message": "raised {name} as expected, but its message does not match /{pattern}/: {message}",
    "checks.raises.none": "expected {wanted} to be raised, but the code ran without an error",
    "checks.output.other": "expected output matching /{pattern}/, got {got}",
    "checks.output.none": "expected output matching /{pattern}/, but nothing was printed",
    "checks.warns.other": "expected a {wanted}, but the code warned only {got}",
    "checks.warns.none": "expected a {wanted}, but the code emitted no warning",
    "checks.warns.message": "warned {category} as expected, but its message does not match /{pattern}/: {message}",
    # module
    "checks.parameter": "parameter",
    "checks.buffer": "buffer",
    "checks.parameters": "parameters",
    "checks.buffers": "buffers",
    "checks.module.not_module": "`{source}` gave {got}, expected an nn.Module",
    "checks.module.to_returned": ".to({target}) returned {got}, expected the module",
    "checks.module.not_moved": "after .to({target}), {label} `{name}` is still on {device}",
    "checks.module.plain_not_moved": "after .to({target}), `{name}` is still on {device}: it is a plain tensor "
                                     "attribute, which .to() does not move (register it with register_buffer)",
    "checks.module.itself": "the module ({kind})",
    "checks.module.at_index": "the {kind} at index {index}",
    "checks.module.training": "expected every submodule in training mode, but {sub} is in eval mode",
    "checks.module.eval": "expected every submodule in eval mode, but {sub} is in training mode",
    "checks.module.count": "expected {count} {which}, got {got}",
    "checks.module.count_names": "expected {count} {which}, got {got}: {names}",
    "checks.module.missing": "missing {names}",
    "checks.module.unexpected": "unexpected {names}",
    "checks.module.both": "{missing}; {unexpected}",
    "checks.module.differ": "{which} differ: {parts}",
    "checks.module.none_named": "expected a {label} named `{name}`, found none",
    "checks.module.none_named_there": "expected a {label} named `{name}`, found none (there are: {names})",
    "checks.module.should_not": "`{name}` should not be a {label}",
    "checks.module.dtype": "{label} `{name}` is {got}, expected {expected}",
    "checks.module.device": "{label} `{name}` is on {got}, expected {expected}",
    "checks.module.requires_grad": "{label} `{name}` has requires_grad={got}, expected {expected}",
    "checks.module.the_module": "the module",
    "checks.module.setting": "{where}: {attr} changed from {old} to {new}",
    # unchanged
    "checks.unchanged.undefined": "the check names `{name}`, but the setup did not define it",
    "checks.unchanged.replaced": "your code replaced the caller's tensor {where} with {got}",
    "checks.unchanged.resized": "your function resized the caller's tensor {where} in place: {old} -> {new}",
    "checks.unchanged.changed": "your function changed the caller's tensor {where}: {old} -> {new}",
    "checks.unchanged.elements_changed": "{sentence} ({count} elements changed)",
    "checks.unchanged.requires_grad": "your function changed requires_grad of the caller's tensor {where}: {old} -> "
                                      "{new}",
    "checks.unchanged.array": "your function changed the caller's array {where}",
    "checks.unchanged.list": "your function changed the caller's list {where}: it had {old} item(s), now {new}",
    "checks.unchanged.dict": "your function changed the keys of the caller's dict {where}",
    "checks.unchanged.left_training": "your function left the caller's module {where} in training mode; it was in "
                                      "eval mode (restore the mode before returning)",
    "checks.unchanged.left_eval": "your function left the caller's module {where} in eval mode; it was in training "
                                  "mode (restore the mode before returning)",
    "checks.unchanged.left_training_sub": "your function left the caller's module {where} in training mode (submodule "
                                          "`{name}`); it was in eval mode (restore the mode before returning)",
    "checks.unchanged.left_eval_sub": "your function left the caller's module {where} in eval mode (submodule "
                                      "`{name}`); it was in training mode (restore the mode before returning)",
    "checks.unchanged.removed": "your function removed {label} `{name}` from the caller's module {where}",
    "checks.unchanged.of": "{label} `{name}` of {where}",
    "checks.unchanged.plain": "{where} changed: {old} -> {new}",
    # mode
    "checks.mode.grad_on": "grad enabled",
    "checks.mode.grad_off": "grad disabled",
    "checks.mode.inference_on": "inference mode on",
    "checks.mode.inference_off": "inference mode off",
    "checks.mode.autocast_on": "autocast on",
    "checks.mode.autocast_off": "autocast off",
    "checks.mode.autocast_with": "autocast on with {dtype}",
    "checks.mode.never_ran": "the module's forward never ran during `{call}`",
    "checks.mode.during": "during the forward pass: expected {expected}, got {got}",
    "checks.mode.after": "after `{call}` returned: expected {expected} as before the call, got {got} (use a "
                         "with-block so the mode is restored)",
    "checks.mode.no_output": "no output of `{key}` was seen during `{call}`",
    "checks.mode.output": "output of `{key}`: expected {expected}, got {got}",
    # memory
    "checks.memory.summary": "{first} at n={first_n}, {last} at n={last_n}",
    "checks.memory.grows": "the memory kept alive by the result grows with the number of steps: {summary} (about "
                           "{per_step} more per step); expected it to stay flat",
    "checks.memory.held": "each call leaves more memory allocated as the number of steps grows, though not in what "
                          "it returns: {summary} (about {per_step} more per step): something outside the result (a "
                          "list of the module's, a cache) keeps it alive; expected it to stay flat",
    "checks.memory.flat": "expected the memory kept alive to grow with the number of steps, but it stays flat: "
                          "{summary}",
    # expr
    "checks.expr.tensor": "the check's predicate gave a tensor of shape {shape}; it must give one truth value (use "
                          ".all() or .any())",
    "checks.expr.not_truth": "the check's predicate gave {got}, not a truth value",
    "checks.expr.false": "`{predicate}` is false",
    # timing and profile
    "checks.measure.not_callable": "`{source}` gave {got}, expected a function to measure",
    "checks.thread": "1 thread",
    "checks.threads": "{count} threads",
    "checks.at_least": "at least {bound}",
    "checks.at_most": "at most {bound}",
    "checks.and": "{first} and {second}",
    "checks.semicolon": "{first}; {rest}",
    "checks.timing.not_reported": "your code's process did not report the timings",
    "checks.timing.times": "median {fast} ms vs {slow} ms, {threads}",
    "checks.timing.too_slow": "`{fast}` is {ratio}x as fast as `{slow}` ({times}); expected at least {low}x",
    "checks.timing.too_fast": "`{slow}` / `{fast}` time ratio is {ratio}x ({times}); expected at most {high}x",
    "checks.timing.summary": "{ratio}x ({times}; needs {needs})",
    "checks.profile.top": "top: {op} ({share} of self time)",
    "checks.profile.per_call": "{ops}: {calls} call(s) per call",
    "checks.profile.summary": "{parts} ({threads})",
    "checks.profile.too_many": "{names} ran {got} times per call of the workload, expected at most {most} (a Python "
                               "loop over elements? one vectorised operation does the whole tensor)",
    "checks.profile.too_few": "{names} ran {got} time(s) per call of the workload, expected at least {least}",
    "checks.profile.self": "self",
    "checks.profile.total": "total",
    "checks.profile.nothing": "the profiler recorded no operators: does the workload run any torch code?",
    "checks.profile.top1": "the most expensive operator by {what} CPU time is {op} ({share} of self time), expected "
                           "one of {expected}",
    "checks.profile.top_k": "the top {k} operators by {what} CPU time should all be among {within}, but {outside} "
                            "are there too",
    "checks.profile.top_k_one": "the top {k} operators by {what} CPU time should all be among {within}, but "
                                "{outside} is there too",
    "checks.profile.absent": "{op} still runs ({calls} call(s), {share} of self time); expected no {pattern}",
    "checks.profile.direct": "your code calls {op} directly ({calls} call(s) per call of the workload)",
    "checks.profile.and_others": "{sentence} (and {others})",
    "checks.profile.only": "{sentence}; the rule \"only\" allows only {allowed}",
    "checks.profile.share": "{ops} take {got} of self CPU time, expected at least {least}",
    "checks.profile.no_operator": "no operator",
    "checks.profile.more": "{names} and {more} more",
    "checks.profile.ordinal_1": "1st",
    "checks.profile.ordinal_2": "2nd",
    "checks.profile.ordinal_3": "3rd",
    "checks.profile.ordinal": "{n}th",
    "checks.profile.not_ranking": "your ranking function returned {got}, expected a list of operator names such as "
                                  "['aten::mm', ...]",
    "checks.profile.too_short": "on workload {number} your ranking lists {got} operator(s), expected {k}",
    "checks.profile.twice": "on workload {number} your ranking lists an operator twice: {ranking}",
    "checks.profile.takes": "{op} takes {us} us",
    "checks.profile.does_not_run": "{op} does not run at all",
    "checks.profile.misplaced": "on workload {number} your ranking puts {mine} {place}, but {detail}; {reference} "
                                "({us} us) belongs there",
    # values as a message names them (tutor/child/checks/render.py)
    "checks.describe.tensor": "tensor of shape {shape}, dtype {dtype}",
    "checks.describe.parameter": "Parameter of shape {shape}, dtype {dtype}",
    "checks.describe.on": "{what}, on {device}",
    "checks.describe.sequence": "a {type} of {count} item(s)",
    "checks.describe.module": "a {type} module",
    "checks.describe.other": "a {type}",
    "checks.describe.input": "{name} of shape {shape}",
    "checks.comma": "{first}, {rest}",
    # expected/got phrases (a value itself, a shape or a dtype, is sent as it prints)
    "checks.phrase.a_forward": "at least one forward",
    "checks.phrase.none": "none",
    "checks.phrase.no_output": "no output",
    "checks.phrase.a_module": "an nn.Module",
    "checks.phrase.the_module": "the module",
    "checks.phrase.training_mode": "training mode",
    "checks.phrase.eval_mode": "eval mode",
    "checks.phrase.training_mode_of": "training mode ({sub})",
    "checks.phrase.eval_mode_of": "eval mode ({sub})",
    "checks.phrase.no_named": "no {label} {name}",
    "checks.phrase.named": "{label} {name}",
    "checks.phrase.a_sequence": "a list or tuple",
    "checks.phrase.a_number": "a Python number",
    "checks.phrase.a_tensor": "a tensor",
    "checks.phrase.a_torch_tensor": "a torch.Tensor",
    "checks.phrase.subclass": "a {type} (a Tensor subclass)",
    "checks.phrase.grad_fn_set": "to be set (part of the autograd graph)",
    "checks.phrase.shares": "shares memory with {source}",
    "checks.phrase.a_copy": "a separate copy",
    "checks.phrase.independent": "independent of {source}",
    "checks.phrase.flat": "flat",
    "checks.phrase.grows": "grows",
    "checks.phrase.grows_by": "grows by about {per_step} per step",
    "checks.phrase.grows_outside": "grows by about {per_step} per step outside the result",
    "checks.phrase.at_most_calls": "<= {n} calls",
    "checks.phrase.at_least_calls": ">= {n} calls",
    "checks.phrase.calls": "{n} calls",
    "checks.phrase.no_op": "no {pattern}",
    "checks.phrase.only": "only {ops}",
    "checks.phrase.op_names": "a list of operator names",
    "checks.phrase.matching": "a message matching /{pattern}/",
    "checks.phrase.no_exception": "no exception",
    "checks.phrase.tensor_or_number": "a tensor or a number",
}


def say(key: str, /, **fields: object) -> dict[str, Any]:
    """A sentence to render later, in the learner's language: ``key`` with ``fields``."""
    return {"key": key, "fields": fields}


def english(said: dict[str, Any] | str) -> str:
    """A said in English (the ``message`` sent beside it); a plain string as it is."""
    if type(said) is not dict:
        return str(said)
    fields = {name: english(value) if type(value) is dict else value
              for name, value in (said.get("fields") or {}).items()}
    return WORDS[said["key"]].format(**fields)


def joined(parts: list[Any], key: str = "checks.semicolon") -> dict[str, Any] | str:
    """Phrases one after another ("a; b; c"), as one said."""
    if not parts:
        return ""
    said: dict[str, Any] | str = parts[-1]
    for part in reversed(parts[:-1]):
        said = say(key, first=part, rest=said)
    return said


def lead(what: dict[str, Any] | str, sentence: dict[str, Any]) -> dict[str, Any]:
    """``sentence`` about ``what`` ("item 2: shape: ..."), or the sentence alone when ``what`` is empty."""
    return say("checks.lead", what=what, sentence=sentence) if what else sentence


def where(sentence: dict[str, Any] | str, inputs: dict[str, Any] | str) -> dict[str, Any] | str:
    """``sentence`` with the case's inputs after it, when the case has any."""
    return say("checks.where", sentence=sentence, where=inputs) if inputs else sentence
