"""Objects a study file names as ``"module:attribute"``, imported beside the study file.

:func:`import_object` imports the module with the study file's folder on the path, turns
any failure of the user's module into one line naming its file, and makes the module's
code reachable from parallel workers (:mod:`calcheck.theory_checks.study.files`).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["import_object"]


def import_object(text, key: str, folder: Path):
    """``"package.module:attribute"`` -> the object (the study file's folder is searched too).

    A module that fails to import (a SyntaxError, an exception, ``sys.exit``) is one
    ValueError naming its file and the error. The folder stays on this process's path
    (first while the module is imported, then last: it shadows no installed module), so
    what the module imports when it runs (a helper beside it) is found here and in the
    parallel workers started from here, which inherit the path (loky, a local dask
    cluster); and the modules found in the folder are pickled by value, for workers that
    do not have it (an existing dask cluster).
    """
    import importlib
    import sys

    if not isinstance(text, str) or text.count(":") != 1 or not all(text.split(":")):
        raise ValueError(f"{key} must be 'package.module:name', got {text!r}")
    module_name, attribute = text.split(":")
    # first while the module is imported, even if an earlier study left it on the path: a
    # module of the same name in another study's folder (further up) must not shadow it
    if str(folder) in sys.path:
        sys.path.remove(str(folder))
    sys.path.insert(0, str(folder))
    before = set(sys.modules)
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name is None or not (module_name + ".").startswith(exc.name + "."):
            # a module that the user's module imports is missing
            raise ValueError(_import_failure(key, text, module_name, exc)) from None
        raise ValueError(
            f"{key} {text!r}: cannot import {module_name!r} ({exc}); put it beside the study "
            f"file (in {str(folder)!r}) or install it"
        ) from None
    except (Exception, SystemExit) as exc:  # the user's module failed while importing
        raise ValueError(_import_failure(key, text, module_name, exc)) from None
    finally:  # from first to last
        sys.path.remove(str(folder))
        sys.path.append(str(folder))
    _pickle_by_value([sys.modules[m] for m in set(sys.modules) - before], folder)
    obj = module
    for part in attribute.split("."):
        if not hasattr(obj, part):
            raise ValueError(f"{key} {text!r}: {module_name!r} has no attribute {attribute!r}")
        obj = getattr(obj, part)
    return obj


def _import_failure(key, text, module_name, exc) -> str:
    """One line: which module file failed to import, and how."""
    import importlib.util
    import traceback

    if isinstance(exc, SyntaxError):
        where = f"{exc.filename}, line {exc.lineno}"
        what = f"SyntaxError: {exc.msg}"
    else:
        frames = traceback.extract_tb(exc.__traceback__)
        try:
            spec = importlib.util.find_spec(module_name)
        except (Exception, SystemExit):
            spec = None
        origin = getattr(spec, "origin", None)
        # the innermost frame in the user's module file (else the innermost frame)
        own = [f for f in frames if origin and f.filename == origin] or frames[-1:]
        where = f"{own[-1].filename}, line {own[-1].lineno}" if own else (origin or "?")
        if isinstance(exc, SystemExit):
            what = f"it called sys.exit({exc.code!r}) while being imported"
        else:
            message = str(exc).splitlines()[0] if str(exc) else ""
            what = f"{type(exc).__name__}: {message}"
    return f"{key} {text!r}: importing {module_name!r} failed ({where}): {what}"


def _pickle_by_value(modules, folder: Path) -> None:
    """Have cloudpickle send by value the modules only the study's folder makes importable.

    Parallel workers do not have that folder on their path. A module importable without it
    (an installed package) is left to be imported by name.
    """
    import sys
    from importlib.machinery import PathFinder

    from ..running.verify import cloudpickle_module

    register = getattr(cloudpickle_module(), "register_pickle_by_value", None)
    root = folder.resolve()
    others = [p for p in sys.path if Path(p or ".").resolve() != root]
    for module in modules:
        file = getattr(module, "__file__", None)
        top = module.__name__.partition(".")[0]
        if (
            register is not None
            and file
            and Path(file).resolve().is_relative_to(root)
            and PathFinder.find_spec(top, others) is None  # not importable without the folder
        ):
            register(module)
