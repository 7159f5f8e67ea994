"""A long error text costs what a short one does (issue 38, item 2).

The log-once grouping of error causes (core/scheduler.py: cause_key, _Cause) was quadratic in the length of an
unbroken word: a queue manager whose command failed with one 40,000-character token made every run spend seconds in
a regular expression, holding the interpreter, and scrapes took 15-20 s.  Here, without timing: every pattern the
grouping runs sees a text of bounded length however long the error (a recording stand-in for each), the bounded text
still tells causes apart, and a real exporter whose queue manager fails with such a token (runmqsc's answer, and
mqweb's REST error) answers every scrape and spends CPU time in proportion to a run with a short error.  The times
of the worst shapes at n and 8n are in bench/fuzz.py ("linear time")."""

from __future__ import annotations

import re
import time
import types

import pytest

from exporter.core import scheduler
from exporter.core.scheduler import CAUSE_HEAD_WORDS, CAUSE_TAIL_WORDS, CAUSE_TEXT, CAUSE_WORD_END, _Cause, cause_key
from exporter.core.secrets import scrub

from ..support import http_get, proc_cpu_ticks, shell_script

LONG = 40_000
# The shapes that made a pattern backtrack over a run (bench/fuzz.py times them): an unbroken word of letters, of
# capitals, of hex digits, words glued by separators, blanks before an unclosed aside, garbage after many words.
SHAPES = {
    "letters": "a" * LONG,
    "capitals": "A" * LONG,
    "hex": "f" * LONG,
    "dashed": "a-" * (LONG // 2),
    "underscored": "a_" * (LONG // 2) + "id",
    "padded token": "a1" * (LONG // 2) + "=" * 100,
    "blanks in an aside": "(N" + " " * LONG + "x",
    "words then garbage": "ab " * (LONG // 3) + "\x00",
    "word then garbage": "a" * LONG + " b\x00",
    "url-like": "http://x:" + "y" * LONG,
}


class _Recorder:
    """Stands in for a compiled pattern or the ``re`` module: records the length of every text it is given."""

    def __init__(self, target, seen: list[int]) -> None:
        self._target, self._seen = target, seen

    def __getattr__(self, name: str):
        attribute = getattr(self._target, name)
        if not callable(attribute) or isinstance(attribute, type):
            return attribute

        def call(*args, **kwargs):
            lengths = [len(arg) for arg in args if isinstance(arg, str)]
            self._seen.extend(lengths)
            # at once: the pattern itself could take minutes over the whole text (the blanks in an aside, cubic)
            assert max(lengths, default=0) <= CAUSE_TEXT, f"{self._target!r}.{name} given {max(lengths)} characters"
            return attribute(*args, **kwargs)
        return call


@pytest.fixture
def seen(monkeypatch) -> list[int]:
    """The lengths of the texts every pattern of core/scheduler.py was run on (module-level patterns and ``re``), but
    the two that read the whole text once: the one that picks the words to keep (``_BLANK_WORD``, a run of one
    character class) and the bytes repr, replaced first (``_BYTES_REPR``: possessive, timed in bench/fuzz.py)."""
    lengths: list[int] = []
    assert scheduler._BLANK_WORD.pattern == r"[^ \t\r\n]+"
    for name, value in vars(scheduler).items():
        if isinstance(value, re.Pattern) and name not in ("_BLANK_WORD", "_BYTES_REPR"):
            monkeypatch.setattr(scheduler, name, _Recorder(value, lengths))
    # re.sub(pattern, repl, text): the pattern is a str too; only the longest length matters, and patterns are short
    monkeypatch.setattr(scheduler, "re", types.SimpleNamespace(
        **{name: getattr(_Recorder(re, lengths), name) for name in ("sub", "search", "fullmatch", "match",
                                                                      "finditer", "findall", "compile")},
        Match=re.Match, Pattern=re.Pattern))
    return lengths


@pytest.mark.parametrize("shape", SHAPES)
def test_every_pattern_of_the_grouping_sees_a_bounded_text(seen, shape):
    def message(seconds: int) -> str:
        return f"runmqsc QM1: no answer after {seconds} s (AMQ8146E: {SHAPES[shape]}) (exit status 20)"

    cause = _Cause("BackendError", cause_key(message(9)))
    assert cause.observe("BackendError", cause_key(message(10))) == "same"
    assert seen, "the recorder saw nothing: the patterns are no longer where this test looks"
    assert max(seen) <= CAUSE_TEXT


def test_a_long_text_keeps_its_first_and_its_last_words():
    word = "x" * LONG
    assert cause_key(f"GET /admin/qmgr/QM1: HTTP 500: {word} (GET /admin/qmgr)") == \
        f"GET <id>: HTTP 500: {'x' * CAUSE_WORD_END}...{'x' * CAUSE_WORD_END} (GET /admin/qmgr)"
    words = [f"w{'x' * (i % 5)}" for i in range(1000)]
    assert cause_key("GET /queue: " + " ".join(words) + " (GET /queue)") == " ".join(
        ["GET /queue:", *words[:CAUSE_HEAD_WORDS - 2], "<cut>", *words[-CAUSE_TAIL_WORDS + 2:], "(GET /queue)"])


def test_a_long_text_still_tells_causes_apart_and_groups_varying_parts():
    body = " ".join(f"word{i % 7}" for i in range(8000))  # 48,000 characters of words
    first = cause_key(f"connection 17 to 10.0.0.1:1414 refused: {body} (GET /queue)")
    # what varies (numbers, addresses) at the start, and the text's length with them: one cause
    assert cause_key(f"connection 1234 to 10.0.0.22:1414 refused: {body} (GET /queue)") == first
    # a different start or a different end: another cause
    assert cause_key(f"connection 17 to 10.0.0.1:1414 timed out: {body} (GET /queue)") != first
    assert cause_key(f"connection 17 to 10.0.0.1:1414 refused: {body} (POST /mqsc)") != first
    # a word the cut would split is left out whole, wherever the cut falls: the same part is kept
    for shift in range(12):
        assert cause_key(f"connection {'1' * (shift + 1)} to 10.0.0.1:1414 refused: {body} (GET /queue)") == first


def test_garbage_after_many_words_is_cut_as_before():
    words = "queue manager QM1 said " + "hello " * 5
    assert cause_key(words + "\x00\x01 junk") == "queue manager QM<id> said hello hello hello hello hello <bytes>" \
        or cause_key(words + "\x00\x01 junk") == "queue manager QM1 said hello hello hello hello hello <bytes>"
    assert cause_key("dspmq: exit status 3: a9$ \x00") == "dspmq: exit status 3: <bytes>"


def test_url_passwords_are_masked_in_any_run_of_scheme_characters():
    """core/secrets.py's URL pattern started at every letter of a run of scheme characters (quadratic in a long
    one); it starts once per run now and masks what it masked before."""
    assert scrub("see https://admin:other-pw@mq:9443/x") == "see https://admin:********@mq:9443/x"
    assert scrub("x.http://u:p@h and 1.http://u:q@h") == "x.http://u:********@h and 1.http://u:********@h"
    assert scrub("a+b-c.d://u:p@h") == "a+b-c.d://u:********@h"
    assert scrub("http://u@h, https://a:b") == "http://u@h, https://a:b"
    long_run = "a." * LONG + "@"
    assert scrub(long_run) == long_run


# ---- a real exporter whose queue manager fails with one 40,000-character token ----------------------------------

WINDOW = 6.0  # seconds of scrapes measured per exporter


def _mq_config(tmp_path, qmgr: str) -> str:
    return ("collectors:\n  host: {enabled: false}\n  process: {enabled: false}\n  filesystem: {enabled: false}\n"
            "  mountstats: {enabled: false}\n"
            f"  ibmmq:\n    enabled: true\n    interval: 1s\n    timeout: 1s\n    queue_managers:\n{qmgr}")


def _token(length: int) -> str:
    """An unbroken word of ``length`` letters, then a run of scheme characters as long (``a.a.a...@``: the URL
    password mask of core/secrets.py, which every error text goes through, was quadratic in it)."""
    return "x" * length + " " + "a." * (length // 2) + "@"


def _runmqsc_config(tmp_path, token: str) -> str:
    folder = tmp_path / f"mq-{len(token)}"
    folder.mkdir()
    (folder / "answer.txt").write_text(f"AMQ8146E: IBM MQ queue manager not available: {token}\n")
    dspmq = shell_script(folder / "dspmq", "echo 'QMNAME(QM1)                STATUS(Running)'\n")
    runmqsc = shell_script(folder / "runmqsc", f"cat > /dev/null\ncat '{folder / 'answer.txt'}'\nexit 20\n")
    return _mq_config(tmp_path, f"      - name: QM1\n        backend: runmqsc\n        timeout: 0.8s\n"
                                f"        dspmq: {dspmq}\n        runmqsc: {runmqsc}\n")


def _scrape_for(exporter, seconds: float) -> tuple[int, int]:
    """Scrape every 0.5 s for ``seconds``; (the exporter's CPU ticks meanwhile, scrapes answered).  A scrape is
    given 10 s (under load a scrape of a healthy exporter takes milliseconds; a stalled one 15-20 s)."""
    before = sum(proc_cpu_ticks(exporter.proc.pid))
    answered = 0
    give_up = time.monotonic() + seconds
    while time.monotonic() < give_up:
        status, _, body = http_get(exporter.base + "/metrics", timeout=10)
        assert status == 200
        assert b'middleware_target_up{collector="ibmmq",target="QM1"} 0.0' in body
        answered += 1
        time.sleep(0.5)
    return sum(proc_cpu_ticks(exporter.proc.pid)) - before, answered


def _measure(start_exporter, config: str) -> tuple[int, int, str]:
    exporter = start_exporter(config=config)
    deadline = time.monotonic() + 30
    while b"target down" not in exporter.log_path.read_bytes():  # the first run's failure was logged
        assert time.monotonic() < deadline, exporter.log()
        time.sleep(0.1)
    ticks, answered = _scrape_for(exporter, WINDOW)
    return ticks, answered, exporter.log()


def _mqweb_config(tmp_path, fake) -> str:
    return _mq_config(tmp_path, f"      - name: QM1\n        url: {fake.base_url}\n        timeout: 0.8s\n")


@pytest.mark.integration
@pytest.mark.parametrize("via", ["runmqsc", "mqweb"])
def test_an_exporter_failing_with_a_40000_character_token_stays_responsive(start_exporter, tmp_path, via):
    """Before the fix the exporter was not even ready within 30 s: its first failed run spent some 20 s of CPU on
    the cause of the error, holding the interpreter.  Now its CPU time over the same scrapes is within a few times
    that of an exporter failing with a 40-character token (plus one second for a loaded machine)."""
    results = {}
    if via == "runmqsc":
        for length in (40, LONG):
            results[length] = _measure(start_exporter, _runmqsc_config(tmp_path, _token(length)))
    else:
        from ..fakes.mqweb import FakeMqweb, FakeQmgr

        for length in (40, LONG):
            fake = FakeMqweb(FakeQmgr("QM1", "running")).start()
            try:
                fake.fail_status, fake.fail_message = 500, _token(length)
                results[length] = _measure(start_exporter, _mqweb_config(tmp_path, fake))
            finally:
                fake.stop()
    (short_ticks, short_answered, _), (long_ticks, long_answered, log) = results[40], results[LONG]
    assert _token(LONG) in log, "the long error was not the one the exporter met"
    assert long_answered >= short_answered // 2, (short_answered, long_answered)
    assert long_ticks <= 3 * short_ticks + 100, f"CPU ticks: {long_ticks} with the long error, {short_ticks} short"
