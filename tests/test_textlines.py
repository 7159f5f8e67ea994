"""iter_lines gives exactly str.splitlines, chunk by chunk; first_line finds the first line with something on it."""

from hypothesis import given, settings
from hypothesis import strategies as st

from exporter.core.textlines import first_line, iter_lines

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


def test_first_line():
    assert first_line("\n  \n  first one  \nsecond") == "first one"
    assert first_line("") == "" and first_line(" \n\t\n") == ""
    assert first_line("x" * 500) == "x" * 200 and first_line("abc", limit=2) == "ab"
