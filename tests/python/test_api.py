"""Every public name has a docstring, and the type stub (__init__.pyi) agrees
with the extension's real signatures: parameter names, order, keyword-only
markers and defaults."""
import ast
import inspect
import pathlib

import pytest

import verity

STUB = pathlib.Path(verity.__file__).with_name("__init__.pyi")


def _stub_tree():
    return ast.parse(STUB.read_text())


def _params(fn: ast.FunctionDef):
    """(name, default or <none>, keyword-only) per parameter, self excluded."""
    a = fn.args
    positional = a.posonlyargs + a.args
    defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    out = [(p.arg, d, False) for p, d in zip(positional, defaults)]
    out += [(p.arg, d, True) for p, d in zip(a.kwonlyargs, a.kw_defaults)]
    return [(name, "<none>" if d is None else ast.literal_eval(d), kw) for name, d, kw in out
            if name != "self"]


def _runtime_signature(obj, name):
    """The pybind11 signature line of obj's docstring, parsed as a def."""
    first = obj.__doc__.splitlines()[0] if obj.__doc__.startswith(name + "(") else None
    if first is None:  # methods and overload-free __init__: the line names the method
        first = next(line for line in obj.__doc__.splitlines() if line.startswith(name + "("))
    tree = ast.parse(f"def {first.split(' -> ')[0]}: pass")
    return _params(tree.body[0])


def _stub_functions():
    for node in _stub_tree().body:
        if isinstance(node, ast.FunctionDef):
            yield node.name, getattr(verity, node.name), node
        elif isinstance(node, ast.ClassDef):
            cls = getattr(verity, node.name)
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and not any(
                        isinstance(d, ast.Name) and d.id == "property" for d in item.decorator_list):
                    yield f"{node.name}.{item.name}", getattr(cls, item.name), item


@pytest.mark.parametrize("qualname,obj,node", list(_stub_functions()), ids=lambda x: x if isinstance(x, str) else "")
def test_stub_matches_runtime(qualname, obj, node):
    stub = _params(node)
    if qualname == "verify" or qualname.endswith(".__len__"):  # pure Python / slot wrappers
        if qualname == "verify":
            sig = inspect.signature(obj)
            runtime = [(p.name, "<none>" if p.default is p.empty else p.default,
                        p.kind is p.KEYWORD_ONLY) for p in sig.parameters.values()]
            assert stub == runtime
        return
    assert stub == _runtime_signature(obj, node.name), qualname


def test_every_public_name_is_documented_and_stubbed():
    stubbed = {n.name for n in _stub_tree().body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    for name in verity.__all__:
        obj = getattr(verity, name)
        assert obj.__doc__ and obj.__doc__.strip(), name
        assert name in stubbed, name
    for cls in (verity.Pipeline, verity.Hit, verity.Encoder, verity.Encoded, verity.Verifier,
                verity.Verification):
        for attr, value in vars(cls).items():
            if not attr.startswith("_"):
                assert value.__doc__, f"{cls.__name__}.{attr}"


def test_help_is_useful():
    text = "".join(verity.Pipeline.__doc__ + verity.Pipeline.search.__doc__)
    assert "stage1" in text and "thread" in text.lower()
