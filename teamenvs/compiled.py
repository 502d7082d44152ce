"""The compiled engine: teamenvs' own modules compiled by Cython, loaded in place of their source while it is unchanged.

    pip install "teamenvs[compiled]"   # Cython; a C compiler (gcc, clang) and the Python headers must be there
    teamenvs compile                   # a few minutes on 2 cores, once per change of the code
    teamenvs compile --status          # which modules load compiled

Cython compiles the modules as they are, without type declarations (`DIRECTIVES`: annotations are not read as C
types), so they are the same Python code run without the interpreter's dispatch: every episode, log and metric is
the same byte for byte, and env steps run faster: 1.3-1.8x in random valid play in the latest run, 1.1-1.3x in the run
before, on a slower host (`python -m benchmarks.perf`'s `compiled engine` rows measure it, both engines in the
same run).

The compiled files live outside the package, in `compiled_dir()` (`TEAMENVS_COMPILED_DIR`, else
`~/.cache/teamenvs/compiled`), each named by its module and the SHA-256 of the source it was compiled from
(`address`). On import, `install` puts a finder first on `sys.meta_path` that loads a `teamenvs` module from its
compiled file only if one exists for the module's source as it is now: a module edited since it was compiled is
loaded from its source, so no edit ever runs stale code, and several checkouts share the folder. A compiled file
that cannot be loaded (damaged, another platform's) is skipped for the source, with a warning. `TEAMENVS_COMPILED=0`
turns the engine off; without the folder it costs nothing.

Not compiled (`EXCLUDED`): modules that find files beside themselves with `__file__` (a compiled module's
`__file__` is its compiled file), the command line and this module. A module Cython cannot compile is left out by
`compile_modules`, which says so.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

PACKAGE = "teamenvs"
ENV_SWITCH = "TEAMENVS_COMPILED"  # "0": the engine is off (source only)
ENV_DIR = "TEAMENVS_COMPILED_DIR"  # where compiled modules are kept
# Cython's settings: Python 3 semantics; annotations are documentation, not C types (with `annotation_typing` a
# parameter annotated `int` would refuse a numpy integer the source accepts); functions stay introspectable Python
# functions (`binding`), as the source's are for pickling and wrappers.
DIRECTIVES: dict[str, Any] = {"language_level": 3, "annotation_typing": False, "binding": True}
ENGINE = f"cython-engine-1 {sorted(DIRECTIVES.items())}".encode()  # part of every address: new settings, new files
SUFFIX = importlib.machinery.EXTENSION_SUFFIXES[0]  # this interpreter's and platform's (".cpython-311-x86_64-linux-gnu.so")
EXCLUDED = frozenset({
    "teamenvs.compiled",  # the engine itself, which must load before any compiled module
    "teamenvs.cli", "teamenvs.__main__",  # the command line: run once per process
    "teamenvs._version",
    "teamenvs.replay",  # finds drawing.js beside a paradigm's drawing module with `__file__`
    "teamenvs.map_task.library",  # reads its data folder with `__file__`
})
EXCLUDED_SUFFIXES = (".drawing",)  # every paradigm's drawing module: replay reads `drawing.__file__`


class CompileError(RuntimeError):
    """The compiled engine cannot be built here (no Cython, no C compiler), with what to do."""


def compiled_dir() -> Path:
    """Where compiled modules are kept: `TEAMENVS_COMPILED_DIR`, else `$XDG_CACHE_HOME/teamenvs/compiled`
    (`~/.cache/teamenvs/compiled`)."""
    chosen = os.environ.get(ENV_DIR)
    if chosen:
        return Path(chosen).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / PACKAGE / "compiled"


def address(name: str, source: bytes) -> str:
    """The file name of module `name` compiled from `source` by this engine for this interpreter."""
    digest = hashlib.sha256(ENGINE + b"\0" + source).hexdigest()[:32]
    return f"{name}-{digest}{SUFFIX}"


def compilable(name: str) -> bool:
    """Whether module `name` of the package is one the engine compiles."""
    return name not in EXCLUDED and not name.endswith(EXCLUDED_SUFFIXES)


def package_modules(package: str = PACKAGE) -> dict[str, Path]:
    """Module name -> source file of every module of `package` the engine compiles (packages' `__init__` files not:
    they hold little and import the rest)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise CompileError(f"cannot find the {package} package's source")
    found: dict[str, Path] = {}
    for base in spec.submodule_search_locations:
        base_path = Path(base)
        for path in sorted(base_path.rglob("*.py")):
            relative = path.relative_to(base_path).with_suffix("")
            if path.name == "__init__.py" or any(not part.isidentifier() for part in relative.parts):
                continue
            if not (path.parent / "__init__.py").is_file():  # a folder that is not a package (data, notebooks)
                continue
            name = ".".join((package, *relative.parts))
            if compilable(name):
                found[name] = path
    return found


# ---------------------------------------------------------------------- loading
class _Finder:
    """Finds a module of `package` in `root` when a file compiled from its current source is there (a meta path finder:
    `find_spec` is all the import system asks of one)."""

    def __init__(self, root: Path, package: str = PACKAGE) -> None:
        self.root = root
        self.prefix = package + "."
        self.loaded: dict[str, str] = {}  # module name -> compiled file, as loaded in this process

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith(self.prefix) or not compilable(fullname):
            return None
        source_spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if (source_spec is None or source_spec.origin is None or not source_spec.origin.endswith(".py")
                or source_spec.submodule_search_locations is not None):
            return None
        try:
            compiled = self.root / address(fullname, Path(source_spec.origin).read_bytes())
            if not compiled.is_file():
                return None
        except OSError:
            return None
        loader = _CompiledLoader(fullname, str(compiled), source_spec, self)
        return importlib.util.spec_from_file_location(fullname, compiled, loader=loader)


class _CompiledLoader(importlib.machinery.ExtensionFileLoader):
    """Loads a compiled module; one that cannot be loaded is loaded from its source instead, with a warning."""

    def __init__(self, name: str, path: str, source_spec: importlib.machinery.ModuleSpec, finder: _Finder) -> None:
        super().__init__(name, path)
        self.source_spec = source_spec
        self.finder = finder

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> Any:
        try:
            module = super().create_module(spec)
        except ImportError as exc:
            import warnings

            warnings.warn(f"teamenvs: the compiled {spec.name} could not be loaded ({exc}); loading its source "
                          "(`teamenvs compile` builds it again)", RuntimeWarning, stacklevel=2)
            # The import machinery sets the module's attributes from the spec and then runs `spec.loader.exec_module`:
            # pointed at the source, it imports the source as if this finder had not been asked
            spec.loader, spec.origin, spec.cached = self.source_spec.loader, self.source_spec.origin, self.source_spec.cached
            return None
        self.finder.loaded[spec.name] = self.path
        return module


def install(root: Path | None = None) -> _Finder | None:
    """Put the compiled engine's finder first on `sys.meta_path` (once), unless `TEAMENVS_COMPILED=0` or there is no
    compiled folder; the finder, or None."""
    for finder in sys.meta_path:
        if isinstance(finder, _Finder):
            return finder
    if os.environ.get(ENV_SWITCH, "").strip() == "0":
        return None
    root = compiled_dir() if root is None else root
    if not root.is_dir():
        return None
    finder = _Finder(root)
    sys.meta_path.insert(0, finder)
    return finder


def loaded() -> dict[str, str]:
    """Module name -> compiled file of each teamenvs module this process loaded compiled (empty: the source only)."""
    for finder in sys.meta_path:
        if isinstance(finder, _Finder):
            return dict(finder.loaded)
    return {}


def engine() -> str:
    """Which engine this process runs, in words, for benchmark tables: "compiled (N modules)" or "source"."""
    count = len(loaded())
    return f"compiled ({count} modules)" if count else "source (Python)"


# ---------------------------------------------------------------------- building
@dataclass
class Status:
    """What `compiled_dir()` holds for the package's modules as they are now."""

    root: Path
    current: list[str] = field(default_factory=list)  # compiled from the source as it is
    missing: list[str] = field(default_factory=list)  # not compiled, or compiled from another version of the source

    def summary(self) -> str:
        switch = " (off here: TEAMENVS_COMPILED=0)" if os.environ.get(ENV_SWITCH, "").strip() == "0" else ""
        lines = [f"compiled engine{switch}: {len(self.current)} of {len(self.current) + len(self.missing)} modules "
                 f"compiled from their current source, in {self.root}"]
        if self.missing:
            shown = ", ".join(self.missing[:8]) + (f" and {len(self.missing) - 8} more" if len(self.missing) > 8 else "")
            lines.append(f"loaded from source: {shown}")
        return "\n".join(lines)


def status(modules: Mapping[str, Path] | None = None, root: Path | None = None) -> Status:
    """Which modules have a compiled file for their current source in `root` (default `compiled_dir()`)."""
    modules = package_modules() if modules is None else modules
    out = Status(compiled_dir() if root is None else root)
    for name, path in sorted(modules.items()):
        (out.current if (out.root / address(name, path.read_bytes())).is_file() else out.missing).append(name)
    return out


@dataclass
class Built:
    """What `compile_modules` did."""

    root: Path
    compiled: list[str] = field(default_factory=list)
    up_to_date: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)  # module -> why (Cython cannot compile it)

    def summary(self) -> str:
        lines = [f"compiled {len(self.compiled)} module(s), {len(self.up_to_date)} already up to date, into {self.root}"]
        if self.failed:
            lines.append(f"left to the source ({len(self.failed)}): " + "; ".join(f"{n}: {why}" for n, why in sorted(self.failed.items())))
        return "\n".join(lines)


def _tool_check() -> None:
    import shutil

    try:
        import Cython  # noqa: F401
        import setuptools  # noqa: F401
    except ImportError as exc:
        raise CompileError(f"the compiled engine needs Cython and setuptools ({exc}): pip install \"teamenvs[compiled]\"") from None
    compiler = os.environ.get("CC", "").split()[:1] or ["cc"]
    if not any(shutil.which(c) for c in (compiler[0], "gcc", "clang")):
        raise CompileError("the compiled engine needs a C compiler (gcc or clang) and the Python headers; none was found")


def compile_modules(modules: Mapping[str, Path] | None = None, root: Path | None = None, jobs: int | None = None,
                    echo: Callable[[str], None] | None = None) -> Built:
    """Compile `modules` (name -> source file; default: `package_modules()`) into `root` (default `compiled_dir()`),
    those whose current source is not compiled yet, `jobs` C compilers at a time (default: the CPU count). Each
    module is translated by Cython on its own, so one it cannot compile is left out (`Built.failed`), not the rest."""
    import shutil
    import tempfile

    _tool_check()
    modules = package_modules() if modules is None else dict(modules)
    root = compiled_dir() if root is None else root
    jobs = max(1, jobs or os.cpu_count() or 1)
    say = echo or (lambda text: None)
    built = Built(root)
    todo: dict[str, tuple[Path, bytes]] = {}
    for name, path in sorted(modules.items()):
        source = path.read_bytes()
        if (root / address(name, source)).is_file():
            built.up_to_date.append(name)
        else:
            todo[name] = (path, source)
    if not todo:
        return built
    root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="teamenvs-compile-") as scratch:
        tree = Path(scratch) / "src"
        # each module is compiled from a copy of the source read above, in a tree of packages like the real one, so
        # Cython names it by its full name and what is compiled is exactly what the address was made from
        for name, (_, source) in todo.items():
            parts = name.split(".")
            for depth in range(1, len(parts)):
                init = tree.joinpath(*parts[:depth], "__init__.py")
                if not init.exists():
                    init.parent.mkdir(parents=True, exist_ok=True)
                    init.write_bytes(b"")
            tree.joinpath(*parts[:-1], parts[-1] + ".py").write_bytes(source)
        say(f"translating {len(todo)} module(s) to C with Cython, {jobs} at a time ...")
        translated = _translate(tree, list(todo), built, Path(scratch), jobs, say)
        if translated:
            say(f"compiling {len(translated)} module(s) with the C compiler, {jobs} at a time (a few seconds each) ...")
            _build(translated, Path(scratch), jobs, built, say)
        for name, so in translated.items():
            if name in built.failed:
                continue
            target = root / address(name, todo[name][1])
            # staged under a name of its own (another `compile` may be writing the same module) and moved in whole:
            # the finder never sees half a file
            handle, staged = tempfile.mkstemp(dir=root, prefix=target.name, suffix=".partial")
            os.close(handle)
            try:
                shutil.copyfile(so, staged)
                os.replace(staged, target)
            finally:
                if os.path.exists(staged):
                    os.unlink(staged)
            built.compiled.append(name)
    return built


def _progress(total: int, say: Callable[[str], None], verb: str) -> Callable[[str], None]:
    """A counter to call as each of `total` modules is done: it says so about every tenth of the way, and at the end
    (a build takes minutes, and says nothing otherwise)."""
    done = 0
    every = max(1, total // 10)

    def step(name: str) -> None:
        nonlocal done
        done += 1
        if done % every == 0 or done == total:
            say(f"  {done}/{total} {verb} ({name})")
    return step


def _translate(tree: Path, names: Iterable[str], built: Built, scratch: Path, jobs: int,
               say: Callable[[str], None] = lambda text: None) -> dict[str, Path]:
    """Cython each module of `names` (in `tree`) to C, each in its own process, `jobs` at a time; name -> the
    extension module it will build to (a module Cython refuses goes to `built.failed`)."""
    import subprocess
    import threading
    from concurrent.futures import ThreadPoolExecutor

    lib = scratch / "lib"
    flags = [f"-X{k}={v}" for k, v in DIRECTIVES.items() if k != "language_level"]

    names = list(names)
    done, lock = _progress(len(names), say, "translated"), threading.Lock()

    def translate(name: str) -> Any:
        parts = name.split(".")
        source = tree.joinpath(*parts[:-1], parts[-1] + ".py")
        result = subprocess.run([sys.executable, "-m", "cython", "-3", "--module-name", name, *flags,
                                 "-o", str(source.with_suffix(".c")), str(source)], capture_output=True, text=True, cwd=tree)
        with lock:
            done(name)
        return result

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        results = list(pool.map(translate, names))
    out: dict[str, Path] = {}
    for name, result in zip(names, results):
        if result.returncode != 0:
            lines = [line for line in (result.stderr + result.stdout).splitlines() if line.strip()]
            why = next((line for line in lines if ":" in line and ("syntax" in line.lower() or "error" in line.lower())), lines[-1] if lines else "Cython failed")
            built.failed[name] = why.strip()[:300]
            continue
        parts = name.split(".")
        out[name] = lib.joinpath(*parts[:-1], parts[-1] + SUFFIX)
    return out


_BUILT = "teamenvs-compile: built "  # what the build's process prints as each module is compiled
_BUILD = """
import json, sys
from setuptools import Distribution, Extension
from setuptools.command.build_ext import build_ext
names, tree, lib, temp, jobs, progress = json.loads(sys.argv[1])
class Build(build_ext):
    def build_extension(self, ext):
        super().build_extension(ext)
        print(progress + ext.name, flush=True)
exts = [Extension(n, [tree + "/" + n.replace(".", "/") + ".c"]) for n in names]
dist = Distribution({"ext_modules": exts, "script_name": "teamenvs-compile"})
cmd = Build(dist)
cmd.build_lib, cmd.build_temp, cmd.parallel = lib, temp, jobs
cmd.ensure_finalized()
cmd.run()
"""


def _build(translated: dict[str, Path], scratch: Path, jobs: int, built: Built,
           say: Callable[[str], None] = lambda text: None) -> None:
    """Compile the C of `translated` into extension modules with setuptools, all at once, and one by one if that
    fails, so a module the C compiler refuses is left out alone."""
    import json
    import subprocess

    def run(names: list[str], done: Callable[[str], None]) -> tuple[int, str]:
        """(exit status, output) of building `names`, `done` called as each is built."""
        args = json.dumps([names, str(scratch / "src"), str(scratch / "lib"), str(scratch / "tmp"), jobs, _BUILT])
        output = []
        with subprocess.Popen([sys.executable, "-c", _BUILD, args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, errors="replace", cwd=scratch) as process:
            for line in process.stdout:
                if line.startswith(_BUILT):
                    done(line[len(_BUILT):].strip())
                else:
                    output.append(line)
        return process.returncode, "".join(output)

    names = list(translated)
    status, _ = run(names, _progress(len(names), say, "compiled"))
    if status == 0:
        return
    for name in names:
        if translated[name].is_file():
            continue
        status, output = run([name], lambda name: None)
        if status != 0:
            lines = [line for line in output.splitlines() if "error" in line.lower()]
            built.failed[name] = (lines[0] if lines else f"the C compiler failed (exit {status})").strip()[:300]
