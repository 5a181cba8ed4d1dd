"""python -m anvil_compose: the composite's catalog and flow documents from the command line.

    python -m anvil_compose connectors
    python -m anvil_compose operations [CONNECTOR]
    python -m anvil_compose validate FLOW.json        # exit 1 on an error finding
    python -m anvil_compose plan FLOW.json [--mermaid]
    python -m anvil_compose run FLOW.json [--dry-run] # exit 1 when the run did not succeed

Output is JSON on stdout (the Mermaid chart is text). A malformed flow or
another ComposeError prints {"error": {...}} on stderr and exits 2.
"""

import argparse
import json
import sys
from typing import Any, List, Optional

from ._composite import Composite
from ._errors import ComposeError


def _print(value: Any) -> None:
    sys.stdout.write(json.dumps(value, indent=2) + "\n")


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m anvil_compose", description="Run flows across connectors.")
    sub = parser.add_subparsers(dest="command", metavar="command")
    sub.add_parser("connectors", help="list the composed connectors")
    p = sub.add_parser("operations", help="list the callable operations")
    p.add_argument("connector", nargs="?")
    p = sub.add_parser("validate", help="check a flow document")
    p.add_argument("flow")
    p = sub.add_parser("plan", help="print a flow's plan (anvil.compose-plan/v1)")
    p.add_argument("flow")
    p.add_argument("--mermaid", action="store_true", help="print a Mermaid flowchart instead")
    p = sub.add_parser("run", help="run a flow (anvil.compose-run/v1)")
    p.add_argument("flow")
    p.add_argument("--dry-run", action="store_true", help="every step with dry_run: nothing changes")
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help(sys.stderr)
        return 2
    try:
        c = Composite()
        if args.command == "connectors":
            _print(c.connectors())
            return 0
        if args.command == "operations":
            _print(c.operations(args.connector))
            return 0
        flow = c.load(args.flow)
        if args.command == "validate":
            findings = flow.validate()
            _print(findings)
            return 1 if any(f["level"] == "error" for f in findings) else 0
        if args.command == "plan":
            if args.mermaid:
                sys.stdout.write(flow.mermaid())
            else:
                _print(flow.plan())
            return 0
        run = flow.dry_run() if args.dry_run else flow.run()
        _print(run.to_json())
        return 0 if run.ok else 1
    except ComposeError as exc:
        sys.stderr.write(json.dumps({"error": exc.to_json()}, indent=2) + "\n")
        return 2


if __name__ == "__main__":
    sys.exit(main())
