"""Exceptions carrying the library's message (gs_last_error) and status."""
from . import _lib

# gs_status_t values (gpusolve/status.h)
_INPUT = {-1, -2, -3, -4, -5, -6}   # invalid arg, dimension, parse, io, unsupported, fill
_DEVICE = {-8, -9, -10, -11}        # device memory, CUDA, cuBLAS, cuSPARSE
HOST_MEMORY = -7


class Error(Exception):
    """A gpusolve failure. `status` is the C status name ("GS_ERR_PARSE"), `code` its value
    (0 for checks made in Python), `message` the library's one-line cause, `location` where in
    the library it was raised ("" for Python checks)."""

    def __init__(self, message, status="", code=0, location=""):
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        self.location = location


class InputError(Error, ValueError):
    """Bad input: arguments, sizes, a malformed or unreadable file, a request this build or
    format does not do (GS_ERR_INVALID_ARG, DIMENSION, PARSE, IO, UNSUPPORTED, FORMAT_FILL)."""


class DeviceError(Error, RuntimeError):
    """The GPU failed or is missing: no CUDA device, out of device memory, a CUDA, cuBLAS or
    cuSPARSE error."""


def from_status(st, what=None):
    """The exception for a failed C call with status st (message from gs_last_error)."""
    msg = _lib.s(_lib.lib.gs_last_error()) or _lib.s(_lib.lib.gs_status_string(st))
    if what:
        msg = f"{what}: {msg}"
    name = _lib.s(_lib.lib.gs_status_string(st))
    loc = _lib.s(_lib.lib.gs_last_error_location())
    if st in _INPUT:
        cls = InputError
    elif st in _DEVICE:
        cls = DeviceError
    elif st == HOST_MEMORY:
        return _HostMemoryError(msg, name, st, loc)
    else:
        cls = Error
    return cls(msg, name, st, loc)


class _HostMemoryError(Error, MemoryError):
    """Out of host memory (GS_ERR_HOST_MEMORY)."""


def check(st, what=None):
    if st != 0:
        raise from_status(st, what)


def bad(msg):
    """An InputError found in Python, before any C call."""
    return InputError(msg, "GS_ERR_INVALID_ARG", -1, "")


for _c in (Error, InputError, DeviceError, _HostMemoryError):
    _c.__module__ = "gpusolve"  # tracebacks name gpusolve.InputError, the public name
