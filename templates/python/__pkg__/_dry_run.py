"""Dry runs: the gateway answers with its plan and calls nothing upstream."""

from typing import Any, Optional

#: The reserved tool argument that asks the gateway for a dry run.
DRY_RUN_ARG = "anvil_dry_run"


def dry_run_plan(structured: Any) -> Optional[Any]:
    """The plan inside a tool result's structuredContent, or None."""
    if isinstance(structured, dict) and DRY_RUN_ARG in structured:
        return structured[DRY_RUN_ARG]
    return None
