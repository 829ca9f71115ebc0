try:
    from evalkit.cli import main
except KeyboardInterrupt:  # Ctrl-C while Python starts up: one line, as everywhere else
    import sys

    print("\nevalkit: interrupted.", file=sys.stderr)
    raise SystemExit(130) from None

raise SystemExit(main())
