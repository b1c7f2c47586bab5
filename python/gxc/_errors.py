"""gxc's errors as exceptions: one class per exit status of the command line.

``str(error)`` is the line ``gxc`` prints (``FILE:LINE:COL: error: ...`` or
``gxc: error: ...``); ``file``, ``line``, ``column`` and ``layer`` say where, ``None``
where that is unknown. gxc raises them from C++ (python/src/module.cpp).
"""


class Error(Exception):
    """Any error gxc reports to its user."""

    exit_status = None

    def __init__(self, message, file=None, line=None, column=None, layer=None):
        super().__init__(message)
        self.file = file
        self.line = line
        self.column = column
        self.layer = layer


class ModelError(Error):
    """A problem with the model or its inputs: the command line's exit status 1."""

    exit_status = 1


class UsageError(Error):
    """An option or argument gxc cannot take: exit status 2."""

    exit_status = 2


class DeviceError(Error):
    """A device or runtime failure (out of memory, a GPU error, a compiler failure): 3."""

    exit_status = 3
