"""``@record`` (:mod:`loopmodel.record`) makes the class ``@dataclass(frozen=True)`` makes: for
classes of every shape it accepts (fields with and without defaults, default factories, fields
left out of ``repr`` or of the comparison, ``__post_init__``, no docstring, a field named
``self``) and for every record of the package, against the class the standard decorator makes
from the same fields: signature, docstring, ``__match_args__``, ``__dataclass_params__``,
``repr``, ``==``, ``hash``, the frozen errors, ``replace``, ``asdict``, pickling."""
from __future__ import annotations

import dataclasses
import importlib
import inspect
import pickle
import pkgutil
import sys
import types
import typing

import pytest
from hypothesis import given, settings, strategies as st

import loopmodel
from loopmodel.record import record

#: what either decorator adds to a class (compared through behaviour, not identity)
_MADE = {"__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__", "__dataclass_fields__",
         "__dataclass_params__", "__match_args__", "__doc__", "__dict__", "__weakref__"}


def _twin(cls):
    """The class ``@dataclass(frozen=True)`` makes from ``cls``'s fields, name and other attributes."""
    ns = {k: v for k, v in cls.__dict__.items() if k not in _MADE and k not in cls.__dataclass_fields__}
    ns["__annotations__"] = {f.name: f.type for f in dataclasses.fields(cls)}
    ns["__doc__"] = cls.__doc__ if cls.__dict__.get("__doc__") and not _undocumented(cls) else None
    for f in dataclasses.fields(cls):
        ns[f.name] = dataclasses.field(default=f.default, default_factory=f.default_factory, repr=f.repr, hash=f.hash,
                                       compare=f.compare, metadata=f.metadata)
    made = types.new_class(cls.__name__, cls.__bases__, exec_body=lambda body: body.update(ns))
    made.__qualname__ = cls.__qualname__
    return dataclasses.dataclass(frozen=True, repr=cls.__dataclass_params__.repr)(made)


def _undocumented(cls) -> bool:
    """Whether ``cls.__doc__`` is the one a dataclass decorator wrote (name and signature)."""
    return cls.__doc__ == cls.__name__ + str(inspect.signature(cls)).replace(" -> None", "")


def _bare(cls, values: dict):
    """An instance of ``cls`` holding ``values`` without running ``__init__`` (no validation)."""
    obj = cls.__new__(cls)
    for k, v in values.items():
        object.__setattr__(obj, k, v)
    return obj


def _outcome(fn):
    try:
        return "ok", fn()
    except Exception as exc:  # noqa: BLE001 - the same exception, type and text, from both classes
        return type(exc).__name__, str(exc)


def _same_class(ours, theirs, values: dict) -> None:
    """``ours`` (made by :func:`record`) behaves as ``theirs`` (the standard decorator's) for
    instances holding ``values`` (field name -> value, hashable and distinct per field)."""
    assert str(inspect.signature(ours)) == str(inspect.signature(theirs))
    assert ours.__match_args__ == theirs.__match_args__
    assert repr(ours.__dataclass_params__) == repr(theirs.__dataclass_params__)
    assert [(f.name, f.type, f.repr, f.compare, f.hash) for f in dataclasses.fields(ours)] == \
        [(f.name, f.type, f.repr, f.compare, f.hash) for f in dataclasses.fields(theirs)]
    a, b = _bare(ours, values), _bare(theirs, values)
    assert _outcome(lambda: repr(a)) == _outcome(lambda: repr(b)) or not ours.__dataclass_params__.repr
    assert _outcome(lambda: hash(a)) == _outcome(lambda: hash(b))
    assert a == _bare(ours, values) and (b == _bare(theirs, values))
    assert a != b and (a == 1) is False  # another class, another type: NotImplemented both ways
    for f in dataclasses.fields(ours):
        changed = {**values, f.name: ("changed", values[f.name])}
        assert (a == _bare(ours, changed)) == (b == _bare(theirs, changed))
    name = next(iter(values), "x")
    for act in (lambda o: setattr(o, name, 1), lambda o: delattr(o, name), lambda o: setattr(o, "other", 1)):
        assert _outcome(lambda: act(a)) == _outcome(lambda: act(b))
    args = tuple(values.values())  # through __init__ (and __post_init__, which may refuse them alike)
    assert _outcome(lambda: repr(ours(*args))) == _outcome(lambda: repr(theirs(*args)))


def _package_records():
    for info in pkgutil.walk_packages(loopmodel.__path__, "loopmodel."):
        if info.name.endswith(("__main__", "._build")):  # _build: the extension's build script
            continue
        module = importlib.import_module(info.name)
        for obj in vars(module).values():
            if inspect.isclass(obj) and obj.__module__ == module.__name__ and dataclasses.is_dataclass(obj) \
                    and obj.__dataclass_params__.frozen:
                yield obj


RECORDS = sorted(_package_records(), key=lambda c: (c.__module__, c.__qualname__))


def test_the_package_declares_its_frozen_dataclasses_as_records():
    made_here = [c for c in RECORDS if getattr(c.__setattr__, "__module__", "") == c.__module__
                 and "loopmodel/record.py" in c.__setattr__.__code__.co_filename]
    subclasses = [c for c in RECORDS if any(dataclasses.is_dataclass(b) for b in c.__mro__[1:])]
    assert len(RECORDS) > 150 and len(made_here) == len(RECORDS) - len(subclasses)


@pytest.mark.parametrize("cls", RECORDS, ids=lambda c: f"{c.__module__}.{c.__qualname__}")
def test_a_record_of_the_package_is_the_standard_frozen_dataclass(cls):
    theirs = _twin(cls)
    values = {f.name: (f.name, i) for i, f in enumerate(dataclasses.fields(cls))}
    _same_class(cls, theirs, values)
    assert cls.__doc__ == theirs.__doc__ or not _undocumented(cls)


FIELD = st.tuples(st.sampled_from(["none", "value", "factory"]), st.booleans(), st.sampled_from([True, False, None]),
                  st.booleans())


def _made(decorator, specs, post_init, documented, self_field):
    """A class with ``specs`` (kind of default, repr, hash, compare per field) through ``decorator``."""
    names = ["self" if self_field and i == 0 else f"f{i}" for i in range(len(specs))]
    ns = {"__annotations__": {n: "int" for n in names}, "__module__": __name__}
    if documented:
        ns["__doc__"] = "A class."
    if post_init:
        ns["__post_init__"] = lambda self: object.__setattr__(self, "seen", True)
    for n, (kind, in_repr, in_hash, compare) in zip(names, specs):
        default = {"none": {}, "value": {"default": (n, "default")}, "factory": {"default_factory": lambda: [n]}}[kind]
        ns[n] = dataclasses.field(repr=in_repr, hash=in_hash, compare=compare, **default)
    return decorator(types.new_class("Shape", (), exec_body=lambda body: body.update(ns)))


@settings(max_examples=150, deadline=None)
@given(st.lists(FIELD, max_size=6), st.booleans(), st.booleans(), st.booleans())
def test_a_record_of_any_shape_is_the_standard_frozen_dataclass(specs, post_init, documented, self_field):
    args = (specs, post_init, documented, self_field)
    theirs = _outcome(lambda: _made(dataclasses.dataclass(frozen=True), *args))
    ours = _outcome(lambda: _made(record, *args))
    assert ours[0] == theirs[0] and (ours[0] == "ok" or ours[1] == theirs[1])  # a default before a non-default
    if ours[0] != "ok":
        return
    ours, theirs = ours[1], theirs[1]
    assert ours.__doc__ == theirs.__doc__
    values = {f.name: (f.name, i) for i, f in enumerate(dataclasses.fields(ours))}
    _same_class(ours, theirs, values)
    required = [f.name for f in dataclasses.fields(ours) if f.default is dataclasses.MISSING
                and f.default_factory is dataclasses.MISSING]
    a, b = ours(*(values[n] for n in required)), theirs(*(values[n] for n in required))
    assert dataclasses.asdict(a) == dataclasses.asdict(b) and repr(a) == repr(b)
    assert getattr(a, "seen", False) is getattr(b, "seen", False) is post_init
    if required:
        assert repr(dataclasses.replace(a, **{required[-1]: 7})) == repr(dataclasses.replace(b, **{required[-1]: 7}))


@record
class _Pickled:
    """A record at module level (pickle finds its class by name)."""

    x: int
    y: tuple = (1, 2)


def test_a_record_pickles_and_copies_as_a_dataclass():
    obj = _Pickled(3)
    back = pickle.loads(pickle.dumps(obj))
    assert back == obj and back is not obj and hash(back) == hash(obj) and repr(back) == "_Pickled(x=3, y=(1, 2))"
    assert sys.modules[__name__]._Pickled.__init__.__qualname__ == "_Pickled.__init__"
    assert typing.get_type_hints(_Pickled.__init__) == {"x": int, "y": tuple, "return": type(None)}  # module globals


@record
class _Lazy:
    """A record whose __init__ nothing has looked at yet."""

    x: int
    y: tuple = ()


def test_a_record_compiles_its_init_when_first_called():
    assert not isinstance(vars(_Lazy)["__init__"], types.FunctionType)
    assert _Lazy(1, (2,)) == _Lazy(x=1, y=(2,)) and isinstance(vars(_Lazy)["__init__"], types.FunctionType)
    assert str(inspect.signature(_Lazy)) == "(x: 'int', y: 'tuple' = ()) -> None"
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'x'"):
        _Lazy()


def test_a_record_refuses_what_it_does_not_make():
    for annotation, value in (("dataclasses.InitVar[int]", None), ("typing.ClassVar[int]", 1),
                              ("int", dataclasses.field(default=1, init=False)),
                              ("int", dataclasses.field(default=1, kw_only=True))):
        ns = {"__annotations__": {"x": annotation}, "__module__": __name__}
        if value is not None:
            ns["x"] = value
        with pytest.raises(TypeError, match="make the class with @dataclass"):
            record(types.new_class("Odd", (), exec_body=lambda body: body.update(ns)))
    for ns in ({"__annotations__": {"x": "int"}, "x": property(lambda self: 1)},  # a data descriptor as default
               {"__annotations__": {"x": "int"}, "__slots__": ("x",)}):
        with pytest.raises(TypeError, match="make the class with @dataclass"):
            record(types.new_class("Odd", (), exec_body=lambda body: body.update({**ns, "__module__": __name__})))
