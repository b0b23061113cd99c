"""Frozen records: ``@record`` makes the class ``@dataclasses.dataclass(frozen=True)`` makes,
without compiling five of its six methods.

The standard decorator writes ``__init__``, ``__repr__``, ``__eq__``, ``__hash__``,
``__setattr__`` and ``__delattr__`` of every class as Python source and compiles it when the
module is imported: on CPython 3.11 about 0.7 ms per class, and a warm ``loopmodel analyze``
imports some 70 of them (a third of its instructions went to parsing that source;
benchmarks/results/warm-analyze.txt). Here the standard decorator still does the class's
bookkeeping (``__dataclass_fields__``, the defaults, ``__match_args__``), asked for no method;
``__init__`` is compiled from a shorter text (its defaults and annotations set on the function,
not written into the source), and the other five are closures over the class and its field
names, which behave as the generated methods do: the same ``repr`` text (recursion shown as
``...``), ``==`` and ``hash`` over the same field tuples, the same ``FrozenInstanceError``
messages, a method the class defines itself kept. ``__dataclass_params__`` says what the
standard decorator's would (``init``, ``repr``, ``eq`` and ``frozen`` true), so
``dataclasses.fields``, ``replace``, ``asdict``, pickling and subclassing work unchanged.

A record that inherits from a dataclass is made by the standard decorator (frozen, as its
bases are); a field ``InitVar``, ``ClassVar``, keyword-only or left out of ``__init__`` is
refused (TypeError: such a class is declared with the standard decorator).
``tests/test_record.py`` checks every record of the package against the class the standard
decorator makes from the same fields.
"""
from __future__ import annotations

import dataclasses
import inspect
import operator
import reprlib
import sys


class _Factory:
    """The default of a parameter whose field has a ``default_factory`` (shown as the standard
    decorator shows it in ``inspect.signature``)."""

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _Factory()


def record(cls=None, /, *, repr: bool = True):
    """``@record`` or ``@record(repr=False)``: ``cls`` as ``@dataclass(frozen=True, repr=repr)``
    makes it (see the module docstring); returns the class.

    Raises:
        TypeError: what the standard decorator raises for the class (a field without default
            after one with a default, a mutable default, ...); a field ``InitVar``, ``ClassVar``,
            keyword-only or left out of ``__init__``, or named with two leading underscores (use
            ``@dataclass(frozen=True)``).
    """
    def wrap(cls):
        return _make(cls, repr)
    return wrap if cls is None else wrap(cls)


def _make(cls, with_repr: bool):
    if any(dataclasses.is_dataclass(base) for base in cls.__mro__[1:]):
        return dataclasses.dataclass(cls, frozen=True, repr=with_repr)  # frozen as its bases are
    given = dict(cls.__dict__)
    dataclasses.dataclass(cls, init=False, repr=False, eq=False)  # the bookkeeping, no method
    fields = dataclasses.fields(cls)
    if len(fields) != len(cls.__dataclass_fields__) or "__slots__" in given or any(
            not f.init or f.kw_only or f.name.startswith("__") or _descriptor(getattr(cls, f.name, None))
            for f in fields):
        raise TypeError(f"{cls.__qualname__}: a field InitVar, ClassVar, keyword-only, left out of __init__, named "
                        "__*, or a data descriptor, or __slots__: make the class with @dataclass(frozen=True)")
    _check_order(fields)
    if "__init__" not in cls.__dict__:
        cls.__init__ = _LazyInit(cls, fields, hasattr(cls, "__post_init__"))
    if with_repr:
        _add(cls, "__repr__", _repr(tuple(f.name for f in fields if f.repr)))
    _add(cls, "__eq__", _eq(_getter(tuple(f.name for f in fields if f.compare))))
    own_hash = given.get("__hash__", dataclasses.MISSING)
    if own_hash is dataclasses.MISSING or (own_hash is None and "__eq__" in given):  # no hash of its own
        cls.__hash__ = _qualified(cls, _hash(_getter(tuple(
            f.name for f in fields if (f.compare if f.hash is None else f.hash)))))
    for method in _frozen(cls, tuple(f.name for f in fields)):
        if method.__name__ in given:
            raise TypeError(f"Cannot overwrite attribute {method.__name__} in class {cls.__name__}")
        setattr(cls, method.__name__, _qualified(cls, method))
    params = cls.__dataclass_params__  # this class's own, made by the call above
    params.init = params.eq = params.frozen = True
    params.repr = with_repr
    if not given.get("__doc__"):  # the standard decorator's docstring: the name and the signature
        cls.__doc__ = cls.__name__ + str(inspect.signature(cls)).replace(" -> None", "")
    return cls


def _descriptor(value) -> bool:
    """Whether ``value`` (a field's class attribute: its default) is a data descriptor."""
    return hasattr(type(value), "__set__") or hasattr(type(value), "__delete__")


def _qualified(cls, fn):
    fn.__qualname__ = f"{cls.__qualname__}.{fn.__name__}"
    fn.__module__ = cls.__module__
    return fn


def _add(cls, name: str, fn) -> None:
    """Set the method ``name`` unless the class defines it (the standard decorator's rule)."""
    if name not in cls.__dict__:
        setattr(cls, name, _qualified(cls, fn))


class _LazyInit:
    """A record's ``__init__`` until the class is first called or its ``__init__`` looked up
    (``cls.__init__``, ``inspect.signature(cls)``): then :func:`_init` compiles it and puts it in
    its place. A class only read back from the per-user cache (unpickled: no ``__init__`` runs)
    compiles none: half the records of a warm analysis."""

    __slots__ = ("cls", "fields", "post_init")

    def __init__(self, cls, fields, post_init: bool):
        self.cls, self.fields, self.post_init = cls, fields, post_init

    def __get__(self, obj, owner=None):
        fn = _qualified(self.cls, _init(self.cls, self.fields, self.post_init))
        self.cls.__init__ = fn
        return fn.__get__(obj, owner)


def _check_order(fields) -> None:
    """Raises TypeError (the standard message) where a field without default follows one with a
    default: at the class statement, as the standard decorator does, not at the first call."""
    seen_default = False
    for f in fields:
        if f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING:
            seen_default = True
        elif seen_default:
            raise TypeError(f"non-default argument {f.name!r} follows default argument")


def _init(cls, fields, post_init: bool):
    """``__init__(self, <fields>)``: the fields stored in the instance's ``__dict__`` in their
    order (what ``object.__setattr__`` does for them: :func:`_make` refuses a field whose class
    attribute is a data descriptor), a default factory called where its parameter was not given,
    then ``self.__post_init__()`` where the class has one (``post_init``, as it was at the class
    statement). Compiled from a one-line body (a third of the standard text's parsing), its
    defaults and annotations set on the function."""
    me = "__dataclass_self__" if "self" in (f.name for f in fields) else "self"
    factories = {f"__factory_{f.name}": f.default_factory for f in fields
                 if f.default_factory is not dataclasses.MISSING}
    values = [f"__factory_{f.name}() if {f.name} is __FACTORY else {f.name}" if f"__factory_{f.name}" in factories
              else f.name for f in fields]
    body = [f"{me}.__dict__.update(zip(__names, ({', '.join(values)},)))"] if fields else []
    if post_init:
        body.append(f"{me}.__post_init__()")
    text = (f"def __make({', '.join(['__names', '__FACTORY', *factories])}):\n"
            f" def __init__({', '.join([me, *(f.name for f in fields)])}):\n"
            + "".join(f"  {line}\n" for line in body or ["pass"]) + " return __init__\n")
    namespace = {}
    module = sys.modules.get(cls.__module__)  # its globals: typing.get_type_hints resolves the annotations there
    exec(text, vars(module) if module is not None else {}, namespace)  # noqa: S102 - our text, as dataclasses does
    fn = namespace["__make"](tuple(f.name for f in fields), _FACTORY, *factories.values())
    defaults = [f.default if f.default_factory is dataclasses.MISSING else _FACTORY for f in fields
                if f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING]
    fn.__defaults__ = tuple(defaults) or None
    fn.__annotations__ = {**{f.name: f.type for f in fields}, "return": None}
    return fn


def _getter(names: tuple):
    """``obj -> tuple of obj's attributes names`` (a tuple also for one name or none)."""
    if len(names) > 1:
        return operator.attrgetter(*names)
    if names:
        one = operator.attrgetter(names[0])
        return lambda obj: (one(obj),)
    return lambda obj: ()


def _repr(names: tuple):
    @reprlib.recursive_repr()
    def __repr__(self):
        return self.__class__.__qualname__ + "(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in names) + ")"
    return __repr__


def _eq(values):
    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return values(self) == values(other)
        return NotImplemented
    return __eq__


def _hash(values):
    def __hash__(self):
        return hash(values(self))
    return __hash__


def _frozen(cls, names: tuple) -> tuple:
    """``(__setattr__, __delattr__)`` refusing the fields (and any attribute of an instance of
    ``cls`` itself) with ``FrozenInstanceError``."""
    def __setattr__(self, name, value):
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    def __delattr__(self, name):
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)
    return __setattr__, __delattr__
