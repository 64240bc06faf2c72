"""The main loops shared by the executables: spin one node until SIGINT or SIGTERM, exit code 0 (:func:`run`);
or spin it in a background thread (:func:`spin_in_background`).

The executor of :func:`run` is the node's ``executor`` parameter (:data:`EXECUTORS`): ``events``, rclpy's
``rclpy.experimental.EventsExecutor`` (rclpy >= 7.1.4: Jazzy, Kilted), the default where it imports, or
``single_threaded``, rclpy's ``SingleThreadedExecutor``. The EventsExecutor dispatches in C++ from the
middleware's events instead of rebuilding a wait set per callback: on this project's 1 kHz loop it uses
half the CPU (``make bench-loop``). "Experimental" is rclpy's word: its API may change between
releases, and it is younger than the SingleThreadedExecutor.

rclpy's own signal handler (or a KeyboardInterrupt) can be lost while numba compiles kernels at
start-up, and can interrupt a callback with an exception; so the executables install their own
handler, which sets a flag that the spin loop polls.
"""
import signal
import sys
import threading
import traceback

import rclpy
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.signals import SignalHandlerOptions

try:
    from rclpy.experimental import EventsExecutor
except ImportError:   # rclpy before 7.1.4
    EventsExecutor = None

STOP = threading.Event()
EXECUTORS = ("events", "single_threaded")
DEFAULT_EXECUTOR = "events" if EventsExecutor is not None else "single_threaded"


def check_executor(kind: str) -> str:
    """``kind`` if this rclpy has that executor (one of :data:`EXECUTORS`), else ValueError naming the
    ``executor`` parameter."""
    if kind not in EXECUTORS:
        raise ValueError("parameter 'executor' must be %s (got %r)" % (" or ".join(EXECUTORS), kind))
    if kind == "events" and EventsExecutor is None:
        raise ValueError("parameter 'executor': this rclpy has no rclpy.experimental.EventsExecutor "
                         "(rclpy >= 7.1.4): use single_threaded")
    return kind


def make_executor(kind: str = DEFAULT_EXECUTOR):
    """A new executor of ``kind`` (one of :data:`EXECUTORS`) on the default context."""
    return EventsExecutor() if check_executor(kind) == "events" else SingleThreadedExecutor()


def _on_signal(signum, frame):
    STOP.set()


def run(make_node, name, args=None, quiet=()):
    """Create the node with ``make_node()`` and spin it until a signal; returns the exit code
    (0, or 1 after an error that is not an interruption, with its message on stderr; errors of the
    ``quiet`` types raised by ``make_node``, such as a bad configuration, without a traceback). The executor
    is the node's ``executor_kind`` (default :data:`DEFAULT_EXECUTOR`); the EventsExecutor leaves the
    signal handlers installed here in place (``test/test_startup.py``)."""
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _on_signal)
    node, executor, code, making = None, None, 0, True
    try:
        node = make_node()
        making = False
        executor = make_executor(getattr(node, "executor_kind", DEFAULT_EXECUTOR))
        executor.add_node(node)
        while not STOP.is_set() and rclpy.ok():
            executor.spin_once(timeout_sec=0.05)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except Exception as e:
        if not (STOP.is_set() or not rclpy.ok()):  # an interruption is a normal shutdown
            if not (making and isinstance(e, quiet)):
                traceback.print_exc()
            print(f"[{name}] fatal: {e}", file=sys.stderr)
            code = 1
    if node is not None:
        try:
            getattr(node, "close", lambda: None)()
            if executor is not None:
                executor.remove_node(node)
            node.destroy_node()
        except Exception:
            pass
    if executor is not None:
        executor.shutdown()
    rclpy.try_shutdown()
    return code


def spin_in_background(node, kind=None):
    """Spin ``node`` on its own executor in a daemon thread, for a tool whose main thread does the work
    (``rne_demo``, ``rne_identify run``): a SingleThreadedExecutor, or one of :data:`EXECUTORS` named by
    ``kind``; returns a function that stops the thread (and waits up to 2 s for it)."""
    executor = SingleThreadedExecutor() if kind is None else make_executor(kind)
    executor.add_node(node)
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            try:
                executor.spin_once(timeout_sec=0.05)
            except Exception:   # the context is shutting down
                break

    thread = threading.Thread(target=spin, daemon=True)
    thread.start()

    def halt():
        stop.set()
        thread.join(timeout=2)

    return halt
