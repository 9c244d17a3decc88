"""Loads and calls Stepforge user functions written in Python.

Shared by the embedded stack's worker (stepforge_worker.py) and the AWS Lambda bootstrap
(stepforge_lambda.py), so that a function behaves the same in both places. Standard library only:
the Lambda asset carries no wheels.

A module `NAME.py` in the functions folder is called in one of two ways:
  - `handler(input, context)` when the module defines `handler`: `input` is the step's input as
    it is, `context` a dict with `secrets`, `runId`, `stepId` and `workflow` (also readable as
    attributes: `context.secrets`, `context.run_id`, `context.step_id`);
  - otherwise the function named like the module (`fetch_news` in `fetch_news.py`), called with
    the step's input fields and its secret bindings as keyword arguments, as GraphN calls it.
Either may be `async def` (awaited on the caller's asyncio loop) or a plain function (run in a
thread, so that a slow one does not hold up the others).
"""
import asyncio
import contextvars
import functools
import importlib.util
import inspect
import io
import json
import os
import re
import sys
import threading
import traceback

# The most captured print() output kept per stream and call; the rest is cut with a note.
CAPTURE_LIMIT = 64 * 1024


class UserFunctionError(Exception):
    """A call that did not produce a JSON value. `kind` says why:

    raised      the function raised (`exc_type`, `exc_message`, `trace` describe it)
    import      importing the module raised
    signature   the module defines nothing to call
    input       the input cannot be passed as keyword arguments
    not_json    the return value is not JSON-serialisable
    not_found   the module file is not there (any more)
    """

    def __init__(self, kind, message, exc_type=None, exc_message=None, trace=None):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.exc_type = exc_type
        self.exc_message = exc_message
        self.trace = trace or []

    def to_json(self):
        out = {"kind": self.kind, "message": self.message, "trace": self.trace}
        if self.exc_type is not None:
            out["type"] = self.exc_type
            out["exceptionMessage"] = self.exc_message
        return out


class StepContext(dict):
    """The `context` of `handler(input, context)`: the keys JavaScript functions get, plus attributes."""

    @property
    def secrets(self):
        return self["secrets"]

    @property
    def run_id(self):
        return self["runId"]

    @property
    def step_id(self):
        return self["stepId"]

    @property
    def workflow(self):
        return self.get("workflow")


# ---- print() capture ------------------------------------------------------------------------------

_capture = contextvars.ContextVar("stepforge_capture", default=None)


class _CapturingStream(io.TextIOBase):
    """sys.stdout / sys.stderr: text written inside a call is kept for that call; anything else goes to `fallback`."""

    def __init__(self, stream, fallback):
        super().__init__()
        self._stream = stream
        self._fallback = fallback

    @property
    def encoding(self):
        return "utf-8"

    def writable(self):
        return True

    def isatty(self):
        return False

    def fileno(self):
        return self._fallback.fileno()

    def write(self, text):
        if not isinstance(text, str):
            raise TypeError("write() argument must be str, not %s" % type(text).__name__)
        captured = _capture.get()
        if captured is None:
            self._fallback.write(text)
        else:
            captured.add(self._stream, text)
        return len(text)

    def flush(self):
        self._fallback.flush()


class _Captured:
    def __init__(self):
        self._parts = {"stdout": [], "stderr": []}
        self._sizes = {"stdout": 0, "stderr": 0}
        self._cut = {"stdout": False, "stderr": False}
        self._lock = threading.Lock()

    def add(self, stream, text):
        with self._lock:
            room = CAPTURE_LIMIT - self._sizes[stream]
            if room <= 0:
                self._cut[stream] = True
                return
            part = text[:room]
            self._parts[stream].append(part)
            self._sizes[stream] += len(part)
            if len(part) < len(text):
                self._cut[stream] = True

    def text(self, stream):
        out = "".join(self._parts[stream])
        if self._cut[stream]:
            out += "\n[stepforge: %s cut at %d characters]\n" % (stream, CAPTURE_LIMIT)
        return out


def install_capture(fallback):
    """Routes print() output (sys.stdout and sys.stderr) into the call that wrote it; other output to `fallback`."""
    sys.stdout = _CapturingStream("stdout", fallback)
    sys.stderr = _CapturingStream("stderr", fallback)


# ---- errors ----------------------------------------------------------------------------------------


def describe_exception(e):
    """`ValueError: bad input`, as Python prints an exception's last line (the class name alone when it has no message)."""
    name = type(e).__name__
    try:
        text = str(e)
    except Exception:  # an exception whose __str__ raises
        text = ""
    return name + (": " + text if text else "")


def user_frames(tb, root):
    """The traceback frames inside the functions folder, as Python formats them, with paths relative to it."""
    out = []
    prefix = root.rstrip(os.sep) + os.sep
    for frame in traceback.extract_tb(tb):
        path = os.path.realpath(frame.filename) if frame.filename else ""
        if not path.startswith(prefix):
            continue
        line = '  File "%s", line %s, in %s\n' % (os.path.relpath(path, root).replace(os.sep, "/"), frame.lineno, frame.name)
        if frame.line:
            line += "    %s\n" % frame.line.strip()
        out.append(line)
    return out


# ---- the runner ------------------------------------------------------------------------------------

_MODULE_NAME = re.compile(r"\W")


class FunctionRunner:
    """Imports user modules from `root` (re-imported when the file changes) and calls them."""

    def __init__(self, root):
        self.root = os.path.realpath(root)
        self._modules = {}
        self._lock = threading.Lock()
        self._loading = {}

    def _path(self, relpath):
        path = os.path.realpath(os.path.join(self.root, relpath))
        if not path.startswith(self.root + os.sep) or not path.endswith(".py"):
            raise UserFunctionError("not_found", "%s is not a Python module inside the functions folder" % relpath)
        return path

    def load(self, relpath):
        """The module at `relpath`, imported once per version of the file (its mtime and size)."""
        path = self._path(relpath)
        try:
            st = os.stat(path)
        except OSError:
            raise UserFunctionError("not_found", "%s is not in the functions folder (any more)" % relpath) from None
        stamp = (st.st_mtime_ns, st.st_size)
        with self._lock:
            held = self._modules.get(path)
            if held is not None and held[0] == stamp:
                return held[1]
            lock = self._loading.setdefault(path, threading.Lock())
        with lock:
            held = self._modules.get(path)
            if held is not None and held[0] == stamp:
                return held[1]
            module = self._import(relpath, path)
            with self._lock:
                self._modules[path] = (stamp, module)
            return module

    def _import(self, relpath, path):
        # A private module name: a user file called json.py must not replace the standard library's.
        name = "_stepforge_user_" + _MODULE_NAME.sub("_", relpath[:-3])
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        previous = sys.modules.get(name)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException as e:  # SystemExit and the like included: the worker must live on
            if previous is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = previous
            raise UserFunctionError(
                "import",
                "importing %s failed: %s" % (relpath, describe_exception(e)),
                type(e).__name__, str(e), user_frames(e.__traceback__, self.root),
            ) from None
        return module

    def target(self, module, relpath, callable_name=None):
        """(fn, style): `handler` as (input, context), or the function named like the module, with keyword arguments."""
        base = os.path.basename(relpath)[:-3]
        if callable_name:
            fn = getattr(module, callable_name, None)
            if not callable(fn):
                raise UserFunctionError("signature", "%s defines no function %s" % (relpath, callable_name))
            return fn, ("handler" if callable_name == "handler" else "kwargs")
        fn = getattr(module, "handler", None)
        if callable(fn):
            return fn, "handler"
        fn = getattr(module, base, None)
        if callable(fn):
            return fn, "kwargs"
        raise UserFunctionError(
            "signature",
            "%s defines neither handler(input, context) nor a function named %s: define one of them "
            "(for example `async def %s(**kwargs) -> dict`)" % (relpath, base, base),
        )

    async def call(self, request, loop=None):
        """Runs one call; returns (output as JSON text, captured stdout, captured stderr).

        `request`: module (path relative to the functions folder), callable (optional), input,
        context ({secrets, runId, stepId, workflow}), kwargs (secret binding name -> value).
        Raises UserFunctionError, with the captured output on `.stdout` / `.stderr`.
        """
        loop = loop or asyncio.get_running_loop()
        captured = _Captured()
        token = _capture.set(captured)
        try:
            try:
                value = await self._call(request, loop)
                return self.to_json(value), captured.text("stdout"), captured.text("stderr")
            except UserFunctionError as e:
                e.stdout = captured.text("stdout")
                e.stderr = captured.text("stderr")
                raise
        finally:
            _capture.reset(token)

    async def _call(self, request, loop):
        relpath = request["module"]
        # Importing runs the module's top-level code: in a thread, as a plain function runs.
        module = await loop.run_in_executor(None, contextvars.copy_context().run, self.load, relpath)
        fn, style = self.target(module, relpath, request.get("callable"))
        value = request.get("input")
        if style == "handler":
            context = StepContext(request.get("context") or {})
            context.setdefault("secrets", {})
            args, kwargs = (value, context), {}
        else:
            args, kwargs = (), self.keyword_arguments(relpath, value, request.get("kwargs") or {})
        try:
            if inspect.iscoroutinefunction(fn):
                result = await fn(*args, **kwargs)
            else:
                call = functools.partial(fn, *args, **kwargs)
                result = await loop.run_in_executor(None, contextvars.copy_context().run, call)
            if inspect.isawaitable(result):
                result = await result
        except (Exception, SystemExit) as e:
            raise UserFunctionError(
                "raised", describe_exception(e), type(e).__name__, str(e), user_frames(e.__traceback__, self.root),
            ) from None
        return result

    @staticmethod
    def keyword_arguments(relpath, value, secrets):
        if value is None:
            value = {}
        if not isinstance(value, dict):
            raise UserFunctionError(
                "input",
                "%s takes keyword arguments, but the step's input is %s, not a mapping: give the step an "
                "`input:` mapping, or define handler(input, context) to take any input" % (relpath, _a(value)),
            )
        kwargs = dict(value)
        for name, secret in secrets.items():
            if name in kwargs:
                raise UserFunctionError(
                    "input",
                    "%s: the input field %s and the secret binding %s would both be the keyword argument %s: "
                    "rename one of them" % (relpath, name, name, name),
                )
            kwargs[name] = secret
        return kwargs

    @staticmethod
    def to_json(value):
        try:
            return json.dumps(value, allow_nan=False, ensure_ascii=True, separators=(",", ":"))
        except (TypeError, ValueError, RecursionError) as e:
            raise UserFunctionError(
                "not_json",
                "returned %s, which is not JSON-serialisable (%s): return dicts, lists, strings, numbers, "
                "booleans or None" % (_a(value), e),
            ) from None


def _a(value):
    """`a list`, `an int`, `a MyClass instance`: what a value is, for messages."""
    if value is None:
        return "None"
    name = type(value).__name__
    builtin = type(value).__module__ == "builtins"
    text = name if builtin else "%s instance" % name
    return ("an " if text[0].lower() in "aeiou" else "a ") + text
