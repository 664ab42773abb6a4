"""How a setting's text becomes its value (initd/config/values.py): each parser takes what
a flag, a variable or initd.yaml gives it, and refuses the rest with a ValueError that
says what was expected (settings.py adds where the value came from: test_settings.py)."""

from __future__ import annotations

import math
import os
import signal

import pytest

from initd.config import values
from initd.config.values import Restart
from initd.process.limits import Limits


def refused(parse: object, value: object) -> str:
    with pytest.raises(ValueError) as raised:
        parse(value)  # type: ignore[operator]
    return str(raised.value)


@pytest.mark.parametrize("text, read", [("8", 8.0), ("0.5", 0.5), (0, 0.0), ("0", 0.0),
                                        (" 3 ", 3.0), (1e3, 1000.0)])
def test_seconds(text: object, read: float) -> None:
    assert values.seconds(text) == read


@pytest.mark.parametrize("text, said", [
    ("8s", "expected a number of seconds, e.g. 8 or 0.5"),
    ("", "expected a number of seconds, e.g. 8 or 0.5"),
    ("-1", "expected a number of seconds >= 0"),
    ("nan", "expected a number of seconds >= 0"),
    (math.nan, "expected a number of seconds >= 0"),
])
def test_bad_seconds(text: object, said: str) -> None:
    assert refused(values.seconds, text) == said


@pytest.mark.parametrize("text, number", [
    ("TERM", signal.SIGTERM), ("SIGTERM", signal.SIGTERM), ("term", signal.SIGTERM),
    (" int ", signal.SIGINT), ("15", 15), (int(signal.SIGUSR1), signal.SIGUSR1),
    ("HUP", signal.SIGHUP)])
def test_stop_signal(text: object, number: int) -> None:
    assert values.stop_signal(text) == number


@pytest.mark.parametrize("text", ["KILL", "9", "STOP", "SIGCHLD", "SEGV", "0", "99", "NOPE",
                                  "", "-15", "SIG"])
def test_a_stop_signal_initd_does_not_forward_is_refused(text: str) -> None:
    assert refused(values.stop_signal, text).startswith(
        "expected a signal initd forwards, by name or number")


def test_count_and_port() -> None:
    assert values.count("0") == 0 and values.count(12) == 12
    for bad in ("-1", "1.5", "", "x", " 2"):
        assert refused(values.count, bad) == "expected a whole number >= 0"
    assert values.port("8080") == 8080 and values.port(65535) == 65535
    for bad in ("0", "65536", "-1", "http", ""):
        assert refused(values.port, bad) == "expected a TCP port number from 1 to 65535"


def test_remaps_in_every_form() -> None:
    assert values.remap("143:0") == (143, 0)
    assert values.remaps("143:0,1:0") == values.remaps("143:0 1:0") == ((143, 0), (1, 0))
    assert values.remaps(["143:0"]) == ((143, 0),)
    assert values.remaps({143: 0, 2: 1}) == ((143, 0), (2, 1))  # YAML's mapping
    assert values.remaps("") == ()
    for bad in ("143", "256:0", "1:2:3", "a:b", "-1:0", "1:"):
        assert refused(values.remaps, bad) == \
            "expected FROM:TO with exit codes 0-255, e.g. 143:0"


def test_restart_and_log_format() -> None:
    assert values.restart("on-failure") is Restart.ON_FAILURE
    assert values.restart("always") == "always"
    assert refused(values.restart, "sometimes") == "expected one of never, on-failure, always"
    assert refused(values.restart, "Always") == "expected one of never, on-failure, always"
    assert [values.log_format(f) for f in ("json", "console", "auto")] == [
        "json", "console", "auto"]
    assert refused(values.log_format, "text") == "expected json, console or auto"


def test_paths_and_names() -> None:
    assert values.paths(f"/a{os.pathsep}/b{os.pathsep}") == ("/a", "/b")
    assert values.paths(["/a", "", 3]) == ("/a", "3")
    assert values.names("A, B C") == ("A", "B", "C") and values.names(["A"]) == ("A",)
    assert values.names("") == ()


@pytest.mark.parametrize("text", ["http://127.0.0.1:8080/health", "https://example.com",
                                  "http://[::1]:80/"])
def test_a_url_with_a_host(text: str) -> None:
    assert values.url(text) == text


@pytest.mark.parametrize("text, said", [
    ("ftp://h/x", "expected an http:// or https:// URL"),
    ("http:///path", "expected an http:// or https:// URL"),
    ("127.0.0.1:8080", "expected an http:// or https:// URL"),
    ("http://h:99999/", "expected a port number from 1 to 65535 in the URL"),
    ("http://h:x/", "expected a port number from 1 to 65535 in the URL"),
])
def test_a_bad_url(text: str, said: str) -> None:
    assert refused(values.url, text).startswith(said)


def test_a_path_is_made_absolute_once_here() -> None:
    """The hook service runs from / (invariant 8): a relative path is the caller's."""
    assert values.path("/etc/initd.yaml") == "/etc/initd.yaml"
    assert values.path("ws") == os.path.join(os.getcwd(), "ws")
    assert values.path("/a/../b") == "/b"
    assert refused(values.path, "") == "expected a path"


@pytest.mark.parametrize("text", ["s1", "a" * 128, "A.b_c-9", "0"])
def test_a_session_id_is_one_plain_name(text: str) -> None:
    assert values.session_ident(text) == text


@pytest.mark.parametrize("text", ["", "a" * 129, "..", ".hidden", "-x", "a/b", "../../etc",
                                  "a b", "é", "a\nb", "a\0b", "_x"])
def test_a_session_id_is_never_a_way_out_of_discobot(text: str) -> None:
    assert "it names a directory in ~/.discobot" in refused(values.session_ident, text)


def test_boolean() -> None:
    for yes in (True, "1", "true", " YES ", "on"):
        assert values.boolean(yes) is True
    for no in (False, "0", "False", "no", "off"):
        assert values.boolean(no) is False
    for bad in ("", "y", "2", "enabled"):
        assert refused(values.boolean, bad) == "expected true or false (1/0, yes/no, on/off)"


def test_optional_text() -> None:
    assert values.optional_text("") is None and values.optional_text("x") == "x"


def test_hook_limits_from_yaml_and_from_the_environment() -> None:
    assert values.hook_limits({"cpu": 60}) == values.hook_limits("cpu=60")
    assert isinstance(values.hook_limits("cpu=60,memory=2G"), Limits)
    assert refused(values.hook_limits, {"ram": 1}) == \
        "unknown ram (known: cpu, memory, processes, file_size)"  # (no "limits: " twice)
    assert refused(values.hook_limits, "cpu").startswith(
        "expected NAME=VALUE[,NAME=VALUE...], got 'cpu'")
