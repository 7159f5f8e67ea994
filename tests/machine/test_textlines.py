"""iter_lines gives exactly str.splitlines (bytes.splitlines for bytes), chunk by chunk; first_line finds the first
line with something on it."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exporter.machine.textlines import first_line, iter_lines

# every line boundary str.splitlines knows, and \r\n that a chunk cut must never split
PIECES = st.lists(st.sampled_from(["a", "bc", " ", "\n", "\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x85", "\u2028",
                                   "\u2029", "(x)"]), max_size=60).map("".join)


@settings(max_examples=400, deadline=None)
@given(text=PIECES, chunk=st.integers(min_value=1, max_value=8), keepends=st.booleans())
def test_iter_lines_is_splitlines(text, chunk, keepends):
    assert list(iter_lines(text, keepends=keepends, chunk=chunk)) == text.splitlines(keepends)


def test_iter_lines_on_a_large_text_with_the_default_chunk():
    text = "".join(f"line {n}\r\n" if n % 3 else f"other {n}\n" for n in range(50_000)) + "tail without break"
    assert list(iter_lines(text)) == text.splitlines()
    assert list(iter_lines(text, keepends=True)) == text.splitlines(True)


BYTE_PIECES = st.lists(st.sampled_from([b"a", b"bc", b" ", b"\n", b"\r", b"\r\n", b"\x0b", b"\x85", b"\xa0", b"\xff",
                                        b"\xc3\xa9", b"(x)"]), max_size=60).map(b"".join)


@settings(max_examples=400, deadline=None)
@given(data=BYTE_PIECES, chunk=st.integers(min_value=1, max_value=8), keepends=st.booleans())
def test_iter_lines_is_bytes_splitlines(data, chunk, keepends):
    assert list(iter_lines(data, keepends=keepends, chunk=chunk)) == data.splitlines(keepends)


def test_iter_lines_on_large_bytes_with_the_default_chunk():
    """Raw output over one chunk (64 KiB) took the chunked path, which searched bytes for a str newline (TypeError)."""
    data = b"".join(b"Line.%d = 1\xa0234\r\n" % n for n in range(10_000)) + b"tail without break"
    assert len(data) > 64 * 1024
    assert list(iter_lines(data)) == data.splitlines()
    assert list(iter_lines(bytearray(data), keepends=True)) == bytearray(data).splitlines(True)


def test_iter_lines_refuses_other_types():
    with pytest.raises(TypeError, match="str or bytes"):
        list(iter_lines(memoryview(b"a\nb")))


def test_first_line():
    assert first_line("\n  \n  first one  \nsecond") == "first one"
    assert first_line("") == "" and first_line(" \n\t\n") == ""
    assert first_line("x" * 500) == "x" * 200 and first_line("abc", limit=2) == "ab"


def test_first_line_of_binary_output_is_a_fixed_text():
    """Random bytes have a random "first line", which put a new text in every error and log line."""
    import random

    rng = random.Random(25)
    for _ in range(200):
        data = rng.randbytes(300)
        assert first_line(data.decode("utf-8", "replace")) == "(binary output)"
        assert first_line(data.decode("cp1252", "replace")) == "(binary output)"
    # text with an odd byte or colours is text
    assert first_line("AMQ8118E: queue manager Z\ufffdrich does not exist\n") == \
        "AMQ8118E: queue manager Z\ufffdrich does not exist"
    assert first_line("\x1b[1m\x1b[31mERROR\x1b[0m: no listener\n") == "\x1b[1m\x1b[31mERROR\x1b[0m: no listener"
