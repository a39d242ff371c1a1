from hypothesis import given, strategies as st

from tutor.sandbox.textclean import clean_output, strip_profiler_noise


def test_escape_sequences_become_visible_and_inert():
    text = clean_output(b"\x1b[2Jhi\x1b]52;c;SGk=\x07 \xc2\x9b31m")
    assert text == "\u241b[2Jhi\u241b]52;c;SGk=\u2407 \\x9b31m"


def test_carriage_return_keeps_what_a_terminal_would_show():
    assert clean_output(b"10%\r50%\r100%\nnext\r\n") == "100%\nnext\n"


def test_profiler_usdt_lines_are_removed():
    noisy = (b"before\nUSDT:2026-11-30 03:48:18 6416:6416 SyncActivityProfilerHandler.cpp:52] profiler_start\n"
             b"USDT:2026-11-30 03:48:18 6416:6416 SyncActivityProfilerHandler.cpp:59] profiler_stop\nafter\n")
    assert strip_profiler_noise(noisy) == b"before\nafter\n"


@given(st.binary(max_size=200))
def test_any_bytes_give_text_without_control_characters(data):
    text = clean_output(data)
    assert all(ch in "\n\t" or (ord(ch) >= 0x20 and not 0x7F <= ord(ch) <= 0x9F) for ch in text)


def test_the_parent_side_never_imports_torch():
    import subprocess
    import sys

    code = ("import sys, tutor.sandbox, tutor.sandbox.pool, tutor.sandbox.process, tutor.cli.sandbox\n"
            "from tutor.sandbox import Sandbox, run, Limits, RunResult, ProbeSpec\n"
            "print('torch' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
