"""The ``rne_identify`` console script: ``fit`` (offline, rne_control.identification.cli), ``thresholds``
(offline, collision thresholds from a free-motion record: rne_control.control.thresholds) and ``run``
(records over ROS, rne_control.ros.identify.run). rclpy is imported only for ``run``."""
import sys

from ...identification import cli


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["thresholds"]:
        from ...control import thresholds
        return thresholds.main(argv[1:])
    if argv[:1] != ["run"]:
        return cli.main(argv)
    from . import run as identify_run
    ros_args = argv[argv.index("--ros-args") + 1:] if "--ros-args" in argv else []
    own = argv[1:argv.index("--ros-args")] if "--ros-args" in argv else argv[1:]
    import argparse
    p = argparse.ArgumentParser(prog="rne_identify")
    args = identify_run.parser(p.add_subparsers(dest="command", required=True)).parse_args(own)
    try:
        return identify_run.record(args, ros_args)
    except (ValueError, RuntimeError, OSError) as exc:
        print(f"rne_identify run: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
