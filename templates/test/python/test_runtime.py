"""Unit tests of the Python SDK's verbatim modules (templates/python/__pkg__/*.py).

The modules are assembled with a fixture spec.py and _gateway.py into a
package in a temporary directory, as a generated package would hold them.
Run with ``python3 -m unittest discover`` from this directory
(templates/runtime_test.go does, from ``go test ./templates``).
"""

import hashlib
import http.server
import importlib
import json
import os
import shutil
import sys
import tempfile
import threading
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCES = os.path.join(HERE, "..", "..", "python", "__pkg__")
PACKAGE = "anvil_fixture"

SPEC = {
    "connector": "shop",
    "service": {"id": "shop", "title": "Shop", "version": "1"},
    "dry_run_arg": "anvil_dry_run",
    "operations": [
        {
            "method": "list_item", "id": "shop.items.list", "tool": "shop_list_item", "summary": "List items",
            "kind": "read", "effect_class": "read", "confirm": False, "confirm_key": None, "confirm_arg": "confirm",
            "idempotency_arg": "idempotency_key",
            "controls": {"confirm": "confirm", "idempotency_key": "idempotency_key", "dry_run": "dry_run",
                         "headers": "headers", "timeout": "timeout"},
            "idempotency": {"mode": "none", "mechanism": "", "key_derivation": "", "input": None,
                            "key_required": False, "key_derived": False},
            "inputs": [{"name": "page", "key": "page", "required": False}], "undo": None,
        },
        {
            "method": "delete_item", "id": "shop.items.delete", "tool": "shop_delete_item", "summary": "Delete",
            "kind": "mutation", "effect_class": "reversible", "confirm": True, "confirm_key": "confirm",
            "confirm_arg": "confirm", "idempotency_arg": "idempotency_key",
            "controls": {"confirm": "confirm", "idempotency_key": "idempotency_key", "dry_run": "dry_run",
                         "headers": "headers", "timeout": "timeout"},
            "idempotency": {"mode": "key_supported", "mechanism": "input", "key_derivation": "fingerprint",
                            "input": "idempotency_key", "key_required": False, "key_derived": True},
            "inputs": [{"name": "id", "key": "id", "required": True}], "undo": None,
        },
        {
            "method": "pay", "id": "shop.pay", "tool": "shop_pay", "summary": "Pay", "kind": "mutation",
            "effect_class": "irreversible", "confirm": False, "confirm_key": None, "confirm_arg": "confirm",
            "idempotency_arg": "idempotency_key",
            "controls": {"confirm": "confirm", "idempotency_key": "idempotency_key", "dry_run": "dry_run",
                         "headers": "headers", "timeout": "timeout"},
            "idempotency": {"mode": "required", "mechanism": "header", "key_derivation": "", "input": "key",
                            "key_required": True, "key_derived": False},
            "inputs": [], "undo": None,
        },
    ],
}

_tmp = None
pkg = None


def setUpModule():
    global _tmp, pkg
    _tmp = tempfile.mkdtemp(prefix="anvil-py-runtime-")
    dst = os.path.join(_tmp, PACKAGE)
    os.mkdir(dst)
    for name in sorted(os.listdir(SOURCES)):
        if name.endswith(".py"):
            shutil.copy(os.path.join(SOURCES, name), dst)
    with open(os.path.join(dst, "spec.py"), "w") as f:
        f.write("SPEC = %r\n" % (SPEC,))
    with open(os.path.join(dst, "_gateway.py"), "w") as f:
        f.write(
            "from ._transport import GatewayTransport as _T\n"
            "DEFAULT_CONNECTOR = 'shop'\n"
            "class GatewayTransport(_T):\n"
            "    default_connector = DEFAULT_CONNECTOR\n"
        )
    with open(os.path.join(dst, "__init__.py"), "w") as f:
        f.write("")
    sys.path.insert(0, _tmp)
    pkg = importlib.import_module(PACKAGE)
    for mod in ("errors", "_safety", "_transport", "_invoke", "_gateway", "operations", "_dry_run"):
        setattr(pkg, mod, importlib.import_module(PACKAGE + "." + mod))


def tearDownModule():
    sys.path.remove(_tmp)
    shutil.rmtree(_tmp, ignore_errors=True)


class OperationsTest(unittest.TestCase):
    def test_method_for_takes_methods_ids_and_tool_names(self):
        m = pkg.operations.method_for
        self.assertEqual(m("delete_item", "shop"), "delete_item")
        self.assertEqual(m("shop.items.delete", "shop"), "delete_item")
        self.assertEqual(m("shop_delete_item", "shop"), "delete_item")
        self.assertEqual(m("shop__shop_delete_item", "shop"), "delete_item")
        self.assertEqual(m("team_shop__shop_delete_item", "team_shop"), "delete_item")
        self.assertIsNone(m("other__shop_delete_item", "shop"))
        self.assertIsNone(m("nope", "shop"))


class LazyTableTest(unittest.TestCase):
    def test_the_table_loads_on_first_use_and_unknown_names_fail(self):
        self.assertEqual(pkg.operations.operation("delete_item")["id"], "shop.items.delete")
        self.assertIn("delete_item", pkg.operations.operation_names())
        with self.assertRaises(AttributeError):
            pkg.operations.NO_SUCH_TABLE


class ToolsURLTest(unittest.TestCase):
    def test_tools_route_is_beside_the_mcp_endpoint(self):
        u = pkg._transport.tools_url
        self.assertEqual(u("http://127.0.0.1:8931/mcp", [("search", "list items"), ("connector", "shop")]),
                         "http://127.0.0.1:8931/tools?search=list+items&connector=shop")
        self.assertEqual(u("https://gw.example/anvil/mcp/?x=1#f", [("search", "a&b"), ("limit", "5")]),
                         "https://gw.example/anvil/tools?search=a%26b&limit=5")
        self.assertEqual(u("http://h:1", [("search", "x")]), "http://h:1/tools?search=x")


class ErrorsTest(unittest.TestCase):
    def test_unknown_codes_become_unknown_upstream_error(self):
        e = pkg.errors.AnvilError("nope", "m")
        self.assertEqual(e.code, "unknown_upstream_error")
        self.assertEqual(pkg.errors.AnvilError("not_found", "m").code, "not_found")

    def test_to_dict_adds_optional_fields_only_when_set(self):
        e = pkg.errors.AnvilError("conflict", "m", operation="o", required_arguments=["x"], retry_after_ms=5)
        self.assertEqual(
            e.to_dict(),
            {"code": "conflict", "message": "m", "retryable": False, "safe_to_retry": False, "operation": "o",
             "trace_id": None, "required_arguments": ["x"], "retry_after_ms": 5},
        )


class SafetyTest(unittest.TestCase):
    def test_derived_key_is_sha256_of_id_and_canonical_json(self):
        args = {"b": 1, "a": "é"}
        want = hashlib.sha256(('op\0{"a":"é","b":1}').encode("utf-8")).hexdigest()[:32]
        self.assertEqual(pkg._safety.derive_idempotency_key("op", args), "anvil-" + want)

    def test_gates(self):
        ops = pkg.operations.OPERATIONS
        with self.assertRaises(pkg.errors.AnvilError) as cm:
            pkg._safety.check_confirmation(ops["delete_item"], False)
        self.assertEqual((cm.exception.code, cm.exception.required_arguments), ("confirmation_required", ["confirm"]))
        pkg._safety.check_confirmation(ops["delete_item"], True)
        with self.assertRaises(pkg.errors.AnvilError) as cm:
            pkg._safety.resolve_idempotency_key(ops["pay"], None, {})
        self.assertEqual(cm.exception.code, "idempotency_required")
        with self.assertRaises(pkg.errors.AnvilError) as cm:
            pkg._safety.resolve_idempotency_key(ops["pay"], "", {})
        self.assertEqual(cm.exception.code, "validation_error")
        self.assertTrue(pkg._safety.resolve_idempotency_key(ops["delete_item"], None, {"id": 1}).startswith("anvil-"))
        self.assertIsNone(pkg._safety.resolve_idempotency_key(ops["list_item"], None, {}))


class DecodeTest(unittest.TestCase):
    def test_result_order(self):
        decode = pkg._transport.decode_tool_result
        self.assertEqual(decode({"structuredContent": {"anvil_dry_run": {"p": 1}}, "content": []}), {"p": 1})
        self.assertEqual(decode({"structuredContent": {"anvil_unvalidated": "raw"}}), "raw")
        self.assertEqual(decode({"content": [{"type": "text", "text": "[1]"}], "structuredContent": {"result": 2}}), [1])
        self.assertEqual(decode({"content": [{"type": "text", "text": "x"}], "structuredContent": {"result": 2}}), 2)
        self.assertEqual(decode({"content": [{"type": "text", "text": "x"}]}), "x")

    def test_tool_errors_carry_the_envelope(self):
        env = {"error": {"code": "policy_denied", "message": "no", "trace_id": "t", "required_flags": ["--issue-number"],
                         "details": {"code": "policy/grant_denied", "retry_after_ms": 9}}}
        with self.assertRaises(pkg.errors.AnvilError) as cm:
            pkg._transport.decode_tool_result({"isError": True, "content": [{"type": "text", "text": json.dumps(env)}]}, "op")
        e = cm.exception
        self.assertEqual((e.code, e.message, e.trace_id, e.operation), ("policy_denied", "no", "t", "op"))
        self.assertEqual((e.required_arguments, e.retry_after_ms), (["issue_number"], 9))

    def test_http_refusals_take_the_envelope_code(self):
        http_error = pkg._transport._http_error

        def refusal(status, code, details=None, **extra):
            body = dict(extra, code=code, message=code + " here")
            if details is not None:
                body["details"] = details
            return http_error(status, json.dumps({"error": body}).encode(), "op")

        e = refusal(428, "confirmation_required", required_flags=["--confirm"])
        self.assertIsInstance(e, pkg.errors.AnvilError)
        self.assertEqual((e.code, e.message, e.required_arguments), ("confirmation_required", "confirmation_required here", ["confirm"]))
        self.assertEqual(e.details["http_status"], 428)
        self.assertEqual(refusal(409, "conflict").code, "conflict")
        self.assertEqual(refusal(404, "not_found").code, "not_found")
        self.assertEqual(refusal(400, "validation_error", {"code": "effect/idempotency_key_conflict"}).details["code"],
                         "effect/idempotency_key_conflict")
        limited = refusal(429, "too_many_pending")
        self.assertEqual((limited.code, limited.details["code"], limited.retryable), ("rate_limited", "too_many_pending", True))
        self.assertEqual(refusal(503, "whatever").code, "upstream_unavailable")
        # Without an envelope the status alone decides.
        self.assertEqual(http_error(401, b"", None).code, "auth_required")
        self.assertEqual(http_error(428, b"nope", None).code, "confirmation_required")
        self.assertEqual(http_error(502, b"", None).code, "upstream_unavailable")

    def test_jsonrpc_errors_take_a_code_their_data_carries(self):
        err = pkg._transport._jsonrpc_error
        self.assertEqual(err({"code": -32602, "message": "bad"}, "op").code, "unsupported_operation")
        e = err({"code": -32602, "message": "bad", "data": {"error": {"code": "confirmation_required"}}}, "op")
        self.assertEqual((e.code, e.message, e.details["jsonrpc_code"]), ("confirmation_required", "bad", -32602))

    def test_sse_and_json_bodies(self):
        msgs = pkg._transport._messages
        self.assertEqual(msgs({"content-type": "application/json"}, b'[{"id":1},{"id":2}]'), [{"id": 1}, {"id": 2}])
        body = b'event: message\r\ndata: {"id":\r\ndata: 3}\r\n\r\ndata: junk\n\n'
        self.assertEqual(msgs({"content-type": "text/event-stream"}, body), [{"id": 3}])


class ProxyTest(unittest.TestCase):
    def setUp(self):
        self._saved = {k: os.environ.pop(k) for k in list(os.environ) if k.lower().endswith("_proxy")}

    def tearDown(self):
        for k in list(os.environ):
            if k.lower().endswith("_proxy"):
                del os.environ[k]
        os.environ.update(self._saved)

    def test_no_proxy_rules(self):
        os.environ["no_proxy"] = "internal.example, .corp:8080,[::1]"
        no = pkg._transport._no_proxy
        self.assertTrue(no("internal.example", 443))
        self.assertTrue(no("a.internal.example", 443))
        self.assertTrue(no("x.corp", 8080))
        self.assertFalse(no("x.corp", 80))
        self.assertTrue(no("[::1]", 80))
        self.assertFalse(no("example.org", 80))

    def test_proxy_choice_by_scheme(self):
        import urllib.parse
        os.environ["https_proxy"] = "http://p:1"
        os.environ["ALL_PROXY"] = "http://all:2"
        self.assertEqual(pkg._transport._proxy_for(urllib.parse.urlsplit("https://gw/mcp")), "http://p:1")
        self.assertEqual(pkg._transport._proxy_for(urllib.parse.urlsplit("http://gw/mcp")), "http://all:2")


class _MCP(http.server.BaseHTTPRequestHandler):
    """A minimal Streamable HTTP MCP endpoint: one session, one tools/call."""

    seen = []  # type: list

    def log_message(self, *args):
        pass

    def do_DELETE(self):
        self.seen.append(("DELETE", None, self.headers.get("Mcp-Session-Id")))
        self.send_response(204)
        self.end_headers()

    def do_POST(self):
        msg = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.seen.append(("POST", msg, self.headers.get("Authorization")))
        if msg["method"] == "notifications/initialized":
            self.send_response(202)
            self.end_headers()
            return
        if msg["method"] == "initialize":
            body = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-06-18"}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Mcp-Session-Id", "s-1")
        else:
            result = {"content": [{"type": "text", "text": json.dumps(msg["params"])}],
                      "_meta": {"effect": {"class": "read", "undo": None}}}
            body = ("data: " + json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}) + "\n\n").encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class _Client:
    def __init__(self, transport):
        self._gateway = transport
        self.last_effect = None


class TransportTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _MCP)
        threading.Thread(target=cls.server.serve_forever, daemon=True).start()
        cls.url = "http://127.0.0.1:%d/mcp" % cls.server.server_address[1]
        cls.dir = tempfile.mkdtemp()
        cls.token = os.path.join(cls.dir, "token")
        with open(cls.token, "w") as f:
            f.write("  tok\n")

    @classmethod
    def tearDownClass(cls):
        cls.server.shutdown()
        cls.server.server_close()
        shutil.rmtree(cls.dir, ignore_errors=True)

    def setUp(self):
        _MCP.seen = []
        os.environ.pop("ANVIL_GATEWAY_CONNECTOR", None)

    def test_connector_default_environment_and_argument(self):
        T = pkg._gateway.GatewayTransport
        self.assertEqual(T(self.url).connector, "shop")
        os.environ["ANVIL_GATEWAY_CONNECTOR"] = "env_shop"
        try:
            self.assertEqual(T(self.url).connector, "env_shop")
            self.assertEqual(T(self.url, connector="arg").connector, "arg")
        finally:
            del os.environ["ANVIL_GATEWAY_CONNECTOR"]
        with self.assertRaises(pkg.errors.AnvilError) as cm:
            pkg._transport.GatewayTransport(self.url)
        self.assertEqual(cm.exception.details["code"], "sdk/connector_unset")

    def test_refuses_urls_with_credentials_or_other_schemes(self):
        for url in ("ftp://gw/mcp", "http://u:p@gw/mcp", "nohost"):
            with self.assertRaises(pkg.errors.AnvilError):
                pkg._gateway.GatewayTransport(url)

    def test_token_file_states(self):
        t = pkg._gateway.GatewayTransport(self.url, token_file=os.path.join(self.dir, "missing"))
        with self.assertRaises(pkg.errors.AnvilError) as cm:
            t.read_token()
        self.assertEqual(cm.exception.details["code"], "sdk/token_file_unreadable")
        empty = os.path.join(self.dir, "empty")
        open(empty, "w").close()
        with self.assertRaises(pkg.errors.AnvilError) as cm:
            pkg._gateway.GatewayTransport(self.url, token_file=empty).read_token()
        self.assertEqual(cm.exception.details["code"], "sdk/token_file_empty")

    def test_no_token_file_loopback_only(self):
        # Without a token file a loopback gateway (auth mode none) gets no
        # Authorization; any other gateway is refused before anything is sent.
        saved = os.environ.pop("ANVIL_GATEWAY_TOKEN_FILE", None)
        try:
            for url in ("http://127.0.0.1:9/mcp", "http://localhost:9/mcp", "http://[::1]:9/mcp"):
                self.assertEqual(pkg._gateway.GatewayTransport(url).read_token(), "")
            with self.assertRaises(pkg.errors.AnvilError) as cm:
                pkg._gateway.GatewayTransport("http://gateway.example/mcp").read_token()
            self.assertEqual(cm.exception.code, "auth_required")
            self.assertEqual(cm.exception.details["code"], "sdk/token_file_unset")
        finally:
            if saved is not None:
                os.environ["ANVIL_GATEWAY_TOKEN_FILE"] = saved

    def test_invoke_sends_one_session_with_controls(self):
        client = _Client(pkg._gateway.GatewayTransport(self.url, token_file=self.token))
        got = pkg._invoke.invoke(client, "delete_item", {"id": 4, "gone": None}, confirm=True, dry_run=True)
        self.assertEqual(got["name"], "shop__shop_delete_item")
        args = got["arguments"]
        self.assertEqual(args["id"], 4)
        self.assertNotIn("gone", args)
        self.assertIs(args["confirm"], True)
        self.assertIs(args["anvil_dry_run"], True)
        self.assertTrue(args["idempotency_key"].startswith("anvil-"))
        self.assertEqual(client.last_effect, {"class": "read", "undo": None})
        self.assertEqual([s[1]["method"] if s[1] else s[0] for s in _MCP.seen],
                         ["initialize", "notifications/initialized", "tools/call", "DELETE"])
        self.assertEqual(_MCP.seen[0][2], "Bearer tok")
        self.assertEqual(_MCP.seen[-1][2], "s-1")

    def test_paginate_stops_on_an_empty_page(self):
        pages = [[1, 2], [3], []]
        calls = []

        class Fake:
            connector = "shop"

            def call_tool(self, name, arguments, **kw):
                calls.append(dict(arguments))
                return {"content": [{"type": "text", "text": json.dumps(pages[len(calls) - 1])}]}

        client = _Client(Fake())
        got = list(pkg._invoke.paginate(client, "list_item", {}, "page", "page", "", ""))
        self.assertEqual(got, [[1, 2], [3], []])
        self.assertEqual([c.get("page") for c in calls], [None, 2, 3])

    def test_paginate_keywords_maps_names_and_controls(self):
        seen = []

        class Fake:
            connector = "shop"

            def call_tool(self, name, arguments, **kw):
                seen.append((dict(arguments), kw.get("timeout")))
                return {"content": [{"type": "text", "text": "[]"}]}

        client = _Client(Fake())
        list(pkg._invoke.paginate_keywords(client, "list_item_paginated", "page", "page", "", "", {"page": 4, "timeout": 2.5}))
        self.assertEqual(seen, [({"page": 4}, 2.5)])
        with self.assertRaises(pkg.errors.AnvilError) as cm:
            pkg._invoke.paginate_keywords(client, "list_item_paginated", "page", "page", "", "", {"nope": 1})
        self.assertEqual(cm.exception.code, "validation_error")


if __name__ == "__main__":
    unittest.main()


class ErrorClassesTest(unittest.TestCase):
    def test_every_code_has_its_subclass(self):
        errors = pkg.errors
        self.assertEqual(sorted(errors.ERROR_CLASSES), sorted(errors.ERROR_CODES))
        for code, cls in errors.ERROR_CLASSES.items():
            e = errors.AnvilError(code, "m", operation="o")
            self.assertIs(type(e), cls)
            self.assertIsInstance(e, errors.AnvilError)
            self.assertEqual((e.code, e.message, e.operation), (code, "m", "o"))
        self.assertIs(type(errors.AnvilError("nope", "m")), errors.UnknownUpstreamError)
        self.assertIsInstance(errors.PolicyDenied("policy_denied", "m"), errors.PolicyDenied)


class _FlakyTransport:
    """Answers each call with the next of answers: an AnvilError to raise or a result."""

    connector = "shop"

    def __init__(self, answers):
        self.answers = list(answers)
        self.calls = []

    def call_tool(self, name, arguments, **kwargs):
        self.calls.append((name, dict(arguments)))
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


class _Client:
    def __init__(self, transport, max_retries=2):
        self._gateway = transport
        self.max_retries = max_retries
        self.last_effect = None


class RetryTest(unittest.TestCase):
    def limited(self, after_ms=1):
        return pkg.errors.AnvilError("rate_limited", "slow down", retryable=True, retry_after_ms=after_ms)

    def ok(self):
        return {"content": [{"type": "text", "text": "[1]"}]}

    def test_reads_are_retried_after_retry_after(self):
        t = _FlakyTransport([self.limited(), self.limited(), self.ok()])
        self.assertEqual(pkg._invoke.invoke(_Client(t), "list_item", {}), [1])
        self.assertEqual(len(t.calls), 3)

    def test_retries_stop_at_max_retries(self):
        t = _FlakyTransport([self.limited(), self.limited(), self.ok()])
        with self.assertRaises(pkg.errors.RateLimited):
            pkg._invoke.invoke(_Client(t, max_retries=1), "list_item", {})
        self.assertEqual(len(t.calls), 2)

    def test_keyed_writes_are_retried_with_the_same_key(self):
        t = _FlakyTransport([self.limited(), self.ok()])
        pkg._invoke.invoke(_Client(t), "delete_item", {"id": 1}, confirm=True)
        self.assertEqual(len(t.calls), 2)
        self.assertEqual(t.calls[0][1]["idempotency_key"], t.calls[1][1]["idempotency_key"])

    def test_writes_without_a_key_and_other_codes_are_not_retried(self):
        op = dict(pkg.operations.operation("delete_item"), idempotency=dict(
            pkg.operations.operation("delete_item")["idempotency"], input=None))
        self.assertFalse(pkg._invoke.retry_allowed(op, "k"))
        self.assertFalse(pkg._invoke.retry_allowed(op, None))
        t = _FlakyTransport([pkg.errors.AnvilError("not_found", "no", retryable=True), self.ok()])
        with self.assertRaises(pkg.errors.NotFound):
            pkg._invoke.invoke(_Client(t), "list_item", {})
        self.assertEqual(len(t.calls), 1)

    def test_backoff_doubles_up_to_its_cap_and_honours_retry_after(self):
        d = pkg._invoke.retry_delay
        self.assertEqual([d(i, None) for i in range(6)], [0.5, 1.0, 2.0, 4.0, 8.0, 8.0])
        self.assertEqual(d(0, 1500), 1.5)
        self.assertEqual(d(0, 10 ** 9), 60.0)
