"""Reading in a background process, so that parsing a large file and writing what it holds into the store run
on two cores at once (`import exampp` at TREC scale: the reader's JSON decoding and checks take about as long
as the store's inserts).

The reader runs in a forked child and sends what it yields through a pipe, a few items at a time; the parent
gets them in order. An error in the child is raised in the parent at the same point of the sequence (an
`InputError` keeps its file, line and message), so the parent's transaction rolls back as it would have with
the reader in-process. Closing the iterator early (or an error in the parent) kills the child, and the child
dies with its parent: it closes its copy of the pipe's read end (so a send to a parent that is gone fails
instead of blocking for ever) and asks the kernel for SIGKILL when its parent dies (Linux `PR_SET_PDEATHSIG`),
so a `kill -9` of the importing process leaves no reader holding the input file and the store open.

Used only where `fork` is available (Linux); elsewhere, or when asked not to, the reader runs in-process."""

from __future__ import annotations

import gc
import os
import sys
import traceback
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

from proctor.errors import InputError

T = TypeVar("T")

CHUNK = 1
"""Items sent per message (an exam_pp line is one item: thousands of grades)."""

MIN_BYTES = 1 << 20
"""Files smaller than this on disk are read in-process (a fork costs more than it saves on them)."""

_ITEMS, _DONE, _INPUT_ERROR, _FAILED = range(4)


def background_available() -> bool:
    """True where a reader can run in a forked child (Linux), unless `PROCTOR_READ_IN_BACKGROUND=0` or this
    process is a daemonic worker (of a multiprocessing pool: it may not have children)."""
    import multiprocessing  # here, not at start-up: only imports of large files need it

    if os.environ.get("PROCTOR_READ_IN_BACKGROUND", "1") == "0" or multiprocessing.current_process().daemon:
        return False
    return sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods()


def in_background(produce: Callable[[], Iterable[T]], *, size: int, chunk: int = CHUNK,
                  started: Callable[[], None] | None = None) -> Iterator[T]:
    """The items of `produce()`, computed in a forked child process when the input's `size` in bytes is at least
    `MIN_BYTES` (in-process for smaller inputs and where a fork is unavailable). `started` is called once the
    reading runs (after the fork: work the caller starts then, e.g. in a thread, is not forked)."""
    if size < MIN_BYTES or not background_available():
        if started is not None:
            started()
        yield from produce()
        return
    import multiprocessing

    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    child = context.Process(target=_child, args=(produce, send, chunk, receive, os.getpid()), daemon=True)
    child.start()
    send.close()
    if started is not None:
        started()
    try:
        yield from _receive(receive, child)
    finally:
        receive.close()
        if child.is_alive():
            child.kill()
        child.join()


def _receive(receive, child) -> Iterator:
    while True:
        try:
            kind, payload = receive.recv()
        except EOFError:
            child.join()
            raise RuntimeError(f"the background reader ended without a result (exit status {child.exitcode})") \
                from None
        if kind == _ITEMS:
            yield from payload
        elif kind == _DONE:
            return
        elif kind == _INPUT_ERROR:
            path, line, message, params = payload
            raise InputError(path, line, message, params=params)
        else:
            raise RuntimeError(f"the background reader failed:\n{payload}")


def die_with_parent(parent: int) -> None:
    """In a forked child: be killed (SIGKILL) when the parent process dies, and exit now if it died already
    (between the fork and this call)."""
    import ctypes
    import signal

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # no prctl here: the closed read end still ends the child at its next send
        pass
    if os.getppid() != parent:
        os._exit(1)


_PR_SET_PDEATHSIG = 1
"""prctl option (linux/prctl.h): the signal the calling process gets when its parent dies."""


def _child(produce: Callable[[], Iterable], send, chunk: int, receive=None, parent: int | None = None) -> None:
    """Run in the child: send the items in chunks, then DONE, or the error.

    The cycle collector is off in the child: readers build trees of parsed JSON and tuples, no reference
    cycles (measured on the exam_pp reader: 145 objects collected while reading 4x DL19), yet the collector
    walked every live object again and again — about 30 % of the reader's time. The child exits when done."""
    if receive is not None:
        receive.close()  # only the parent reads: with its end gone, a send fails instead of blocking
    if parent is not None:
        die_with_parent(parent)
    gc.disable()
    try:
        items: list = []
        for item in produce():
            items.append(item)
            if len(items) >= chunk:
                send.send((_ITEMS, items))
                items = []
        if items:
            send.send((_ITEMS, items))
        send.send((_DONE, None))
    except InputError as exc:
        send.send((_INPUT_ERROR, (exc.path, exc.line, exc.template, exc.params)))
    except BrokenPipeError:  # the parent stopped reading
        pass
    except BaseException:  # noqa: BLE001 - reported to the parent, which raises it
        send.send((_FAILED, traceback.format_exc()))
    finally:
        send.close()
