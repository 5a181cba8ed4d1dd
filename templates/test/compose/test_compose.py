"""Unit tests of the composite's Python package (templates/compose/python/anvil_compose).

The package is copied with the fixture catalog of this directory (one connector)
into a temporary directory. Nothing here calls a connector: plans, validation,
references and paths are pure. Live runs are tested from Go
(compiler/emit/compose). Run with ``python3 -m unittest discover``.
"""

import importlib
import json
import os
import shutil
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "..", "..", "compose", "python", "anvil_compose")

with open(os.path.join(HERE, "catalog.json"), encoding="utf-8") as _f:
    CATALOG = json.load(_f)
with open(os.path.join(HERE, "input_types.json"), encoding="utf-8") as _f:
    TYPES = json.load(_f)

_tmp = None
ac = None


def setUpModule():
    global _tmp, ac
    _tmp = tempfile.mkdtemp(prefix="anvil-compose-runtime-")
    dst = os.path.join(_tmp, "anvil_compose")
    shutil.copytree(SOURCE, dst, ignore=shutil.ignore_patterns("__pycache__"))
    with open(os.path.join(dst, "catalog.json"), "w") as f:
        json.dump(CATALOG, f)
    with open(os.path.join(dst, "input_types.json"), "w") as f:
        json.dump(TYPES, f)
    sys.path.insert(0, _tmp)
    ac = importlib.import_module("anvil_compose")
    ac._paths = importlib.import_module("anvil_compose._paths")


def tearDownModule():
    sys.path.remove(_tmp)
    shutil.rmtree(_tmp, ignore_errors=True)


class PathsTest(unittest.TestCase):
    def test_parse_and_lookup(self):
        p = ac._paths
        self.assertEqual(p.parse_path("items[0].id"), ["items", 0, "id"])
        self.assertEqual(p.parse_path("[2]"), [2])
        self.assertEqual(p.parse_path(""), [])
        for bad in ("a..b", "a.[0]x", "0a", "a b"):
            self.assertFalse(p.valid_path(bad), bad)
        self.assertEqual(p.lookup({"a": [{"b": 1}]}, "a[0].b"), (True, 1))
        self.assertEqual(p.lookup({"a": []}, "a[0]"), (False, None))
        self.assertEqual(p.join("x", "[1]"), "x[1]")
        self.assertEqual(p.join("x", "y"), "x.y")


class RefsTest(unittest.TestCase):
    def test_refs_and_conditions_encode_as_documents(self):
        r = ac.ref("list", "items")
        self.assertEqual(r[0]["id"].to_json(), {"$ref": "list", "path": "items[0].id"})
        self.assertEqual(r.equals(3).to_json(), {"$ref": "list", "path": "items", "equals": 3})
        self.assertEqual(ac.item("number").to_json(), {"$item": "number"})
        with self.assertRaises(ac.ComposeError):
            ac.ref("list", "a..b")


class FlowTest(unittest.TestCase):
    def setUp(self):
        self.c = ac.Composite()

    def test_plan_orders_steps_by_their_references(self):
        f = self.c.flow("close-first")
        items = f.step("items", "shop.items.list", {"owner": "o"})
        f.step("close", "shop.items.close", {"owner": "o", "number": items.ref("[0].number")}, confirm=True)
        plan = f.plan()
        self.assertEqual(plan["schema"], ac.PLAN_SCHEMA)
        nodes = {n["id"]: n for n in plan["nodes"]}
        self.assertEqual(nodes["close"]["depends_on"], ["items"])
        self.assertEqual(nodes["items"]["depends_on"], [])
        self.assertEqual(f.order(), ["items", "close"])
        self.assertIn("s0 --> s1", f.mermaid())

    def test_duplicate_steps_are_refused_when_added(self):
        f = self.c.flow("bad")
        f.step("a", "shop.items.list", {"owner": "o"})
        with self.assertRaises(ac.ComposeError) as cm:
            f.step("a", "shop.items.list", {"owner": "o"})
        self.assertEqual(cm.exception.code, "duplicate_step")

    def test_validate_finds_unknown_operations_missing_inputs_and_unconfirmed_writes(self):
        f = self.c.flow("v")
        f.step("a", "shop.nope", {})
        f.step("close", "shop.items.close", {"owner": "o"})
        found = [(x["level"], x["code"], x["step"]) for x in f.validate()]
        self.assertEqual(found, [("error", "unknown_operation", "a"), ("error", "missing_input", "close"),
                                 ("error", "confirmation_required", "close")])
        f = self.c.flow("ok")
        f.step("close", "shop.items.close", {"owner": "o", "number": 1}, confirm=True)
        self.assertEqual([x for x in f.validate() if x["level"] == "error"], [])

    def test_flow_documents_round_trip(self):
        f = self.c.flow("rt")
        items = f.step("items", "shop.items.list", {"owner": "o"})
        f.step("close", "shop.items.close", {"owner": "o", "number": items.ref("[0].number")}, confirm=True)
        doc = f.to_json()
        self.assertEqual(doc["schema"], ac.FLOW_SCHEMA)
        again = ac.Flow.from_json(self.c, json.loads(json.dumps(doc)))
        self.assertEqual(again.to_json(), doc)


if __name__ == "__main__":
    unittest.main()
