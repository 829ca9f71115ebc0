import signal
import sys


def _terminated(signum: int, frame: object) -> None:  # SIGTERM while Python imports the CLI: one line, 143
    print("evalkit: terminated.", file=sys.stderr)
    raise SystemExit(128 + signal.SIGTERM)


signal.signal(signal.SIGTERM, _terminated)  # main() installs its own handler (and puts this one back)
try:
    from evalkit.cli import main
except KeyboardInterrupt:  # Ctrl-C while Python starts up: one line, as everywhere else
    print("\nevalkit: interrupted.", file=sys.stderr)
    raise SystemExit(130) from None

raise SystemExit(main())
