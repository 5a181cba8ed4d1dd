"""The composite: one client over every composed connector, and flows of their calls.

    from anvil_compose import Composite, item, ref

    c = Composite()                      # gateway mode, from ANVIL_GATEWAY_URL / ANVIL_GATEWAY_TOKEN_FILE
    flow = c.flow("triage")
    issues = flow.step("issues", "github.issues.list", owner="octo", repo="hello")
    flow.map("comment", "github.comments.create", over=issues,
             args={"owner": "octo", "repo": "hello", "issue_number": item("number"), "body": "triaged"})
    print(flow.plan())                   # nothing is sent
    print(flow.validate())               # an error here makes run() refuse the flow
    run = flow.run()                     # dependency order; stops at the first failure
    if not run.ok:
        print(run.compensation)          # each completed write's undo, newest first
        flow.compensate(run, confirm=True)   # only when the task wants it undone

Standard library only (Python 3.9 or later). ``python -m anvil_compose`` runs
flow documents (anvil.compose-flow/v1).
"""

from ._composite import CATALOG_SCHEMA, Composite, load_catalog
from ._errors import COMPOSE_ERROR_CODES, ComposeError
from ._flow import FLOW_SCHEMA, PLAN_SCHEMA, RUN_SCHEMA, Flow, Run
from ._refs import Cond, Item, Ref, StepHandle, item, ref

__all__ = [
    "Composite",
    "Flow",
    "Run",
    "ref",
    "item",
    "Ref",
    "Item",
    "Cond",
    "StepHandle",
    "ComposeError",
    "COMPOSE_ERROR_CODES",
    "CATALOG_SCHEMA",
    "FLOW_SCHEMA",
    "PLAN_SCHEMA",
    "RUN_SCHEMA",
    "load_catalog",
]
