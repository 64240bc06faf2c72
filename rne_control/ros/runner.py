"""The main loops shared by the executables: spin one node until SIGINT or SIGTERM, exit code 0 (:func:`run`);
or spin it in a background thread (:func:`spin_in_background`).

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

STOP = threading.Event()


def _on_signal(signum, frame):
    STOP.set()


def run(make_node, name, args=None, quiet=()):
    """Create the node with ``make_node()`` and spin it until a signal; returns the exit code
    (0, or 1 after an error that is not an interruption, with its message on stderr; errors of the
    ``quiet`` types raised by ``make_node``, such as a bad configuration, without a traceback)."""
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _on_signal)
    node, code, making = None, 0, True
    try:
        node = make_node()
        making = False
        executor = SingleThreadedExecutor()
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
            node.destroy_node()
        except Exception:
            pass
    rclpy.try_shutdown()
    return code


def spin_in_background(node):
    """Spin ``node`` on its own SingleThreadedExecutor in a daemon thread, for a tool whose main thread
    does the work (``rne_demo``, ``rne_identify run``); returns a function that stops the thread (and
    waits up to 2 s for it)."""
    executor = SingleThreadedExecutor()
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
