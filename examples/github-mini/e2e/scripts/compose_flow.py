"""Seed step 10: a flow through the gateway that fails on purpose.

Lists the issues, comments on each one, then comments on a missing issue
number (sys.argv[1]) so the run fails; reads the compensation and runs it
with confirm=True. Prints one JSON object: findings, ok, run, compensation,
outcomes, or import_error / error with a traceback.
"""
import json
import sys
import traceback


def describe(e):
    d = {"type": type(e).__name__, "message": str(e)[:500]}
    for attr in ("code", "details"):
        if hasattr(e, attr):
            d[attr] = getattr(e, attr)
    return d


def plain(x):
    if hasattr(x, "to_json"):
        x = x.to_json()
    if isinstance(x, (str, bytes)):
        try:
            return json.loads(x)
        except ValueError:
            return x
    return x


def main(missing):
    out = {}
    try:
        from anvil_compose import Composite, item
    except Exception as e:  # the composite may not exist yet
        out["import_error"] = describe(e)
        return out
    try:
        c = Composite()
        flow = c.flow("triage")
        issues = flow.step("issues", "github.issues.list", owner="octo", repo="hello")
        flow.map("comment", "github.comments.create", over=issues,
                 args={"owner": "octo", "repo": "hello", "issue_number": item("number"), "body": "triaged"})
        flow.step("missing", "github.comments.create", owner="octo", repo="hello",
                  issue_number=missing, body="triaged", after=["comment"])
        out["findings"] = plain(flow.validate())
        run = flow.run()
        out["ok"] = bool(run.ok)
        out["run"] = plain(run)
        out["compensation"] = plain(run.compensation)
        if not run.ok:
            out["outcomes"] = plain(flow.compensate(run, confirm=True))
    except Exception as e:
        out["error"] = describe(e)
        out["traceback"] = traceback.format_exc()[-2000:]
    return out


if __name__ == "__main__":
    sys.stdout.write(json.dumps(main(int(sys.argv[1])), default=repr) + "\n")
