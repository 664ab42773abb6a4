"""What the supervisor's start needs from ``signal``, ``typing``, ``enum`` and
``threading``, without their imports.

``initd -- CMD`` is a Python start, a fork and an exec: what it imports beyond that is
most of its CPU (bench/cpu.py, rows 29 and 31). ``signal`` brings ``enum`` (and through
it ``functools`` and ``collections``), ``typing`` brings ``re`` and ``contextlib``:
~9 ms of CPU of every container's start for an enum of signal names and a class
statement. So the modules a plain start runs take both from here:

- ``signal``: the C module under it, ``_signal``, which has every function and constant
  ``signal`` has (``signal`` wraps them to turn ints into enum members). A signal is an
  ``int`` then, never a ``Signals`` member: ``signal_name`` names it.
- ``NamedTuple``: a ``typing.NamedTuple`` class statement, made into a tuple class
  without ``typing``: the fields are the annotations, in order, the defaults their
  values; ``_fields``, ``_field_defaults``, ``_replace``, ``_asdict``, ``_make``, and
  equality, hashing and unpacking as a tuple.
- ``Flag``: a ``threading.Event`` that is polled, never waited on (``threading``
  brings ``functools`` and ``collections``: ~2 ms).
- ``Enum`` and ``StrEnum``: the members, ``name`` and ``value``, ``Cls(value)``,
  iteration; a StrEnum member is its value as a ``str``. No aliases, ``auto`` or flags.

A type checker sees the real ones (TYPE_CHECKING).
PID-1 tier: builtins only.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import signal as signal
    from enum import Enum as Enum
    from enum import StrEnum as StrEnum
    from threading import Event
    from typing import NamedTuple as NamedTuple

    Flag = Event
else:
    import _signal as signal

    class _RecordType(type):
        """Makes a class statement whose base is NamedTuple a tuple class of its fields."""

        def __new__(mcls, name, bases, namespace):
            if _Record not in bases:  # _Record itself, or a subclass of a record class
                return super().__new__(mcls, name, bases, namespace)
            fields = tuple(namespace.get("__annotations__", {}))
            defaults = {field: namespace.pop(field) for field in fields if field in namespace}
            first = min((fields.index(field) for field in defaults), default=len(fields))
            if any(field not in defaults for field in fields[first:]):
                raise TypeError(f"{name}: a field without a default after one with")
            namespace.update({field: _Field(index, field) for index, field in enumerate(fields)})
            namespace.update(__slots__=(), _fields=fields, _field_defaults=defaults,
                             __match_args__=fields)
            return super().__new__(mcls, name, bases, namespace)

    _Record = None  # (while _Record's own class statement runs)

    class _Record(tuple, metaclass=_RecordType):
        """The base of every lean NamedTuple class."""

        __slots__ = ()
        _fields: tuple[str, ...] = ()
        _field_defaults: dict[str, object] = {}  # noqa: RUF012 (each class sets its own)

        def __new__(cls, *args, **kwargs):
            fields = cls._fields
            if len(args) > len(fields):
                raise TypeError(f"{cls.__name__}() takes {len(fields)} arguments, "
                                f"{len(args)} given")
            values = list(args)
            for name in fields[len(args):]:
                if name in kwargs:
                    values.append(kwargs.pop(name))
                elif name in cls._field_defaults:
                    values.append(cls._field_defaults[name])
                else:
                    raise TypeError(f"{cls.__name__}() missing argument {name!r}")
            if kwargs:
                raise TypeError(f"{cls.__name__}() got unexpected or repeated arguments "
                                f"{sorted(kwargs)}")
            return tuple.__new__(cls, values)

        @classmethod
        def _make(cls, iterable):
            values = tuple(iterable)
            if len(values) != len(cls._fields):
                raise TypeError(f"expected {len(cls._fields)} values, got {len(values)}")
            return tuple.__new__(cls, values)

        def _replace(self, **changes):
            values = [changes.pop(name, value)
                      for name, value in zip(self._fields, self, strict=True)]
            if changes:
                raise ValueError(f"got unexpected field names: {sorted(changes)}")
            return tuple.__new__(type(self), values)

        def _asdict(self):
            return dict(zip(self._fields, self, strict=True))

        def __repr__(self):
            shown = ", ".join(f"{name}={value!r}"
                              for name, value in zip(self._fields, self, strict=True))
            return f"{type(self).__name__}({shown})"

        def __getnewargs__(self):  # (copy and pickle make it again from its values)
            return tuple(self)

    class _Field:
        # (a field's value, read from the tuple by its position)
        __slots__ = ("__doc__", "index")

        def __init__(self, index, name):
            self.index = index
            self.__doc__ = f"Alias for field number {index} ({name})"

        def __get__(self, instance, owner=None):
            return self if instance is None else tuple.__getitem__(instance, self.index)

        def __set__(self, instance, value):
            raise AttributeError("can't set attribute")

    class _EnumType(type):
        """Makes a class statement whose base is Enum or StrEnum a set of members: each
        public name that is not a function or a property becomes an instance of the
        class, with ``name`` and ``value``; ``Cls(value)`` finds one, ``Cls`` iterates
        them in order."""

        def __new__(mcls, name, bases, namespace):
            cls = super().__new__(mcls, name, bases, {**namespace, "_members": {}})
            if not any(isinstance(base, _EnumType) for base in bases):
                return cls  # Enum and StrEnum themselves
            for key, value in namespace.items():
                if key.startswith("_") or callable(value) or hasattr(value, "__get__"):
                    continue
                member = str.__new__(cls, value) if issubclass(cls, str) \
                    else object.__new__(cls)
                member._name, member._value = key, value
                cls._members[value] = member
                type.__setattr__(cls, key, member)
            return cls

        def __call__(cls, value):
            try:
                return cls._members[value]
            except (KeyError, TypeError):
                raise ValueError(f"{value!r} is not a valid {cls.__name__}") from None

        def __iter__(cls):
            return iter(cls._members.values())

        def __len__(cls):
            return len(cls._members)

        def __setattr__(cls, key, value):
            raise AttributeError(f"cannot reassign {cls.__name__}.{key}")

    class Enum(metaclass=_EnumType):
        @property
        def name(self):
            return self._name

        @property
        def value(self):
            return self._value

        def __repr__(self):
            return f"<{type(self).__name__}.{self._name}: {self._value!r}>"

        def __str__(self):
            return f"{type(self).__name__}.{self._name}"

        def __reduce__(self):
            return type(self), (self._value,)

    class StrEnum(str, Enum):
        def __str__(self):
            return self._value

        __format__ = str.__format__

    class Flag:
        """``threading.Event`` without ``wait``: set in one thread (or a signal handler),
        seen in another with ``is_set``. Nothing here waits on it: it is polled."""

        __slots__ = ("_set",)

        def __init__(self):
            self._set = False

        def set(self):
            self._set = True

        def clear(self):
            self._set = False

        def is_set(self):
            return self._set

    def NamedTuple(*args, **kwargs):
        raise TypeError("lean NamedTuple: use it as a base class")

    NamedTuple.__mro_entries__ = lambda bases: (_Record,)


def signal_name(sig: int) -> str:
    """``SIGTERM`` for 15 (``signal.Signals(15).name``); ``signal 35`` for a number
    with no name."""
    names = sorted(name for name, value in vars(signal).items()  # (of two, the enum's
                   if value == sig and name.startswith("SIG") and name[3:4] != "_")  # pick)
    return names[0] if names else f"signal {sig}"
