"""``python -m symweak`` runs the command line."""

from .cli import main

raise SystemExit(main())
