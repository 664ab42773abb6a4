"""initd/pid1/lean.py stands in for ``typing.NamedTuple``, ``enum``, ``signal`` and
``threading.Event`` on the plain start: each must behave as what it replaces, for every
use initd makes of it. Each check runs the same operations on the real one and on ours
and compares what comes out (errors included)."""

from __future__ import annotations

import copy
import enum
import pickle
import signal as real_signal
import threading
import typing
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from initd.pid1 import lean


def records(base: object) -> tuple[type, type]:
    """The same two class statements on ``base``: fields with and without defaults and a
    method, and a subclass of it with one more method."""

    class Point(base):  # type: ignore[misc,valid-type]
        x: int
        y: str = "y"
        z: tuple[int, ...] = ()

        def twice(self) -> int:
            return self.x * 2

    class Named(Point):
        def shown(self) -> str:
            return f"{self.x}/{self.y}"

    return Point, Named


REAL, REAL_SUB = records(typing.NamedTuple)
LEAN, LEAN_SUB = records(lean.NamedTuple)

VALUES = st.one_of(st.integers(), st.text(max_size=5), st.none(),
                   st.tuples(st.integers()))


def outcome(act: Callable[[], object]) -> object:
    """What an act gives, or the kind of error it raises (their texts differ)."""
    try:
        return act()
    except (TypeError, ValueError, AttributeError) as err:
        return type(err)


def same(act: Callable[[type, type], object]) -> None:
    assert outcome(lambda: act(REAL, REAL_SUB)) == outcome(lambda: act(LEAN, LEAN_SUB))


@given(st.lists(VALUES, max_size=4), st.dictionaries(st.sampled_from(["x", "y", "z", "w"]),
                                                      VALUES, max_size=3))
def test_a_record_is_made_as_typing_makes_it(args: list[object], kwargs: dict[str, object]
                                             ) -> None:
    same(lambda cls, _: tuple(cls(*args, **kwargs)))
    same(lambda _, sub: tuple(sub(*args, **kwargs)))


@given(VALUES, VALUES, st.dictionaries(st.sampled_from(["x", "y", "z", "w"]), VALUES,
                                       max_size=3))
def test_a_record_reads_replaces_and_shows_as_typings_does(x: object, y: object,
                                                           changes: dict[str, object]) -> None:
    same(lambda cls, _: (cls(x, y).x, cls(x, y).y, cls(x, y).z, cls(x)._asdict()))
    same(lambda cls, _: tuple(cls(x, y)._replace(**changes)))
    same(lambda cls, _: repr(cls(x, y)).replace("Point", ""))
    same(lambda cls, _: (cls(x, y) == (x, y, ()), hash(cls(x, y)) == hash((x, y, ()))))
    same(lambda cls, _: tuple(cls._make([x, y, ()])))
    same(lambda cls, _: cls._make([x]))


def test_a_record_is_a_tuple_of_its_fields_with_its_methods() -> None:
    same(lambda cls, sub: (cls._fields, cls._field_defaults, cls.__match_args__,
                           sub._fields, issubclass(cls, tuple)))
    same(lambda cls, sub: (cls(3).twice(), sub(3).twice(), sub(3, "b").shown()))
    same(lambda cls, _: setattr(cls(1), "x", 2))  # read-only
    same(lambda cls, _: cls(1).__dict__)  # no __dict__: a tuple's size
    for cls in (REAL, LEAN):
        match cls(1, "b"):
            case cls(x, y):  # type: ignore[misc]
                assert (x, y) == (1, "b")


def test_a_record_copies_and_pickles() -> None:
    for point in (LEAN(1, "b", (2,)), LEAN_SUB(4)):
        assert copy.copy(point) == point and type(copy.deepcopy(point)) is type(point)
    assert pickle.loads(pickle.dumps(Pickled(1))) == Pickled(1)


class Pickled(lean.NamedTuple):  # (at the top: pickle finds a class by its module's name)
    a: int
    b: int = 2


def test_a_field_without_a_default_after_one_with_is_refused_as_typing_refuses_it() -> None:
    for base in (typing.NamedTuple, lean.NamedTuple):
        with pytest.raises(TypeError):
            exec("class Bad(base):\n    a: int = 1\n    b: int\n", {"base": base})


def members(base: type) -> tuple[type, type]:
    class State(base):  # type: ignore[misc,valid-type]
        STOPPED = "stopped"
        RUNNING = "running"

        @property
        def alive(self) -> bool:
            return self is type(self).RUNNING

    str_base = enum.StrEnum if base is enum.Enum else lean.StrEnum

    class Restart(str_base):  # type: ignore[misc,valid-type]
        NEVER = "never"
        ON_FAILURE = "on-failure"

    return State, Restart


def test_an_enum_behaves_as_enums_do_for_what_initd_asks_of_it() -> None:
    (real, real_str), (mine, mine_str) = members(enum.Enum), members(lean.Enum)

    def acts(state: type, restart: type) -> list[object]:
        return [
            [m.value for m in state], [m.name for m in state], len(state),
            state("running") is state.RUNNING, state.RUNNING.alive, state.STOPPED.alive,
            outcome(lambda: state("nope")), outcome(lambda: state(["unhashable"])),
            repr(state.RUNNING), str(state.RUNNING), state.RUNNING == "running",
            restart("on-failure") is restart.ON_FAILURE, str(restart.ON_FAILURE),
            f"{restart.NEVER}", restart.NEVER == "never", restart.NEVER.upper(),
            hash(restart.NEVER) == hash("never"), outcome(lambda: restart("x")),
            copy.deepcopy(state.RUNNING) is state.RUNNING,
            outcome(lambda: setattr(state, "RUNNING", 1)),
        ]

    assert acts(real, real_str) == acts(mine, mine_str)


def test_every_signal_is_named_as_the_signals_enum_names_it() -> None:
    for sig in real_signal.valid_signals():
        try:
            name = real_signal.Signals(sig).name
        except ValueError:  # (a real-time signal with no name of its own)
            name = f"signal {sig}"
        assert lean.signal_name(sig) == name
    assert lean.signal_name(999) == "signal 999"


def test_the_c_signal_module_has_everything_initd_uses_of_signal() -> None:
    import ast
    from pathlib import Path

    used: set[str] = set()
    for path in Path(lean.__file__).parents[1].rglob("*.py"):
        tree = ast.parse(path.read_text())
        if not any(isinstance(node, ast.ImportFrom) and node.module == "initd.pid1.lean"
                   and "signal" in [alias.name for alias in node.names]
                   for node in tree.body):
            continue  # (a module with the real signal)
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                    and node.value.id == "signal":
                used.add(node.attr)
    assert {"SIGTERM", "pthread_sigmask", "set_wakeup_fd", "valid_signals"} <= used
    assert {name for name in used if not hasattr(lean.signal, name)} == set()
    for name in used:  # the same value, where it is one
        value = getattr(real_signal, name)
        if isinstance(value, int):
            assert getattr(lean.signal, name) == value, name


def test_a_flag_is_set_cleared_and_seen_from_another_thread() -> None:
    flag, seen = lean.Flag(), []
    assert not flag.is_set()
    worker = threading.Thread(target=lambda: flag.set())
    worker.start()
    worker.join()
    seen.append(flag.is_set())
    flag.clear()
    seen.append(flag.is_set())
    assert seen == [True, False]
