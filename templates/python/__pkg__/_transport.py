"""The gateway transport: MCP JSON-RPC over Streamable HTTP to the Anvil gateway.

Each call is one short-lived session: initialize, notifications/initialized,
tools/call, then DELETE. The bearer token is read from its file on every call,
so a replaced file takes effect at once. The only environment variables read
are ANVIL_GATEWAY_URL, ANVIL_GATEWAY_TOKEN_FILE, ANVIL_GATEWAY_CONNECTOR and
the standard proxy variables (https_proxy, http_proxy, all_proxy, no_proxy in
either case); no upstream credential is ever looked for.

The transport is the same in every package; _gateway.py binds it to the
package's connector (GatewayTransport.default_connector).
"""

import base64
import http.client
import ipaddress
import json
import os
import socket
import ssl
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, List, Optional, Tuple

from ._dry_run import DRY_RUN_ARG
from .errors import ERROR_CODES, AnvilError

PROTOCOL_VERSION = "2025-06-18"
DEFAULT_USER_AGENT = "anvil-sdk (python)"
DEFAULT_TIMEOUT = 60.0

URL_ENV = "ANVIL_GATEWAY_URL"
TOKEN_FILE_ENV = "ANVIL_GATEWAY_TOKEN_FILE"
CONNECTOR_ENV = "ANVIL_GATEWAY_CONNECTOR"

_UNREACHABLE = "The Anvil gateway could not be reached."
_PROTECTED = ("authorization", "content-type", "accept", "mcp-session-id", "mcp-protocol-version")


def _env(name: str) -> Optional[str]:
    return os.environ.get(name)


def gateway_url_from_env() -> Optional[str]:
    """ANVIL_GATEWAY_URL, or None when it is unset or empty."""
    return _env(URL_ENV) or None


def _no_proxy(host: str, port: int) -> bool:
    value = _env("no_proxy")
    if value is None:
        value = _env("NO_PROXY")
    host = host.lower().strip("[]")
    for entry in (value or "").replace(" ", "").split(","):
        if not entry:
            continue
        if entry == "*":
            return True
        entry = entry.lower()
        entry_port = None
        if entry.count(":") == 1 or (entry.startswith("[") and "]:" in entry):
            head, _, tail = entry.rpartition(":")
            if tail.isdigit():
                entry, entry_port = head, int(tail)
        entry = entry.strip("[]")
        if entry.startswith("*."):
            entry = entry[1:]
        entry = entry.lstrip(".")
        if entry_port is not None and entry_port != port:
            continue
        if host == entry or host.endswith("." + entry):
            return True
    return False


def _proxy_for(parts: urllib.parse.SplitResult) -> Optional[str]:
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    if _no_proxy(host, port):
        return None
    names = ("https_proxy", "HTTPS_PROXY") if parts.scheme == "https" else ("http_proxy", "HTTP_PROXY")
    for name in names + ("all_proxy", "ALL_PROXY"):
        value = _env(name)
        if value:
            return value
    return None


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Never follow a redirect: the bearer token goes to the gateway only."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[override]
        return None


def _headers(message: Any) -> Dict[str, str]:
    out = {}  # type: Dict[str, str]
    if message is None:
        return out
    for key, value in message.items():
        out[key.lower()] = value
    return out


def _sse_messages(text: str) -> List[Any]:
    out = []  # type: List[Any]
    data = []  # type: List[str]

    def flush() -> None:
        if data:
            try:
                doc = json.loads("\n".join(data))
            except ValueError:
                doc = None
            if isinstance(doc, list):
                out.extend(doc)
            elif doc is not None:
                out.append(doc)
            del data[:]

    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if line == "":
            flush()
        elif line.startswith("data:"):
            value = line[5:]
            data.append(value[1:] if value.startswith(" ") else value)
    flush()
    return out


def _messages(headers: Dict[str, str], body: bytes) -> List[Any]:
    text = body.decode("utf-8", "replace")
    if "text/event-stream" in headers.get("content-type", ""):
        return _sse_messages(text)
    try:
        doc = json.loads(text)
    except ValueError:
        return _sse_messages(text)
    if isinstance(doc, list):
        return doc
    return [doc]


def _envelope_of(doc: Any) -> Optional[Dict[str, Any]]:
    """The inside of an {"error": {...}} envelope, or None."""
    if isinstance(doc, dict) and isinstance(doc.get("error"), dict):
        return doc["error"]
    return None


def _json(body: Any) -> Any:
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    try:
        return json.loads(body)
    except (TypeError, ValueError):
        return None


#: The code a refusal without a known envelope code gets from its HTTP status
#: alone (the seed's REST table); anything else is upstream_unavailable.
_STATUS_CODES = {
    401: "auth_required",
    403: "permission_denied",
    409: "conflict",
    428: "confirmation_required",
    429: "rate_limited",
}


def _flag_to_argument(flag: str) -> str:
    return flag.lstrip("-").replace("-", "_")


def _envelope_error(envelope: Dict[str, Any], operation: Optional[str], fallback: str) -> AnvilError:
    """The AnvilError an error envelope describes.

    The envelope's own code wins when it is one of ERROR_CODES; otherwise the
    error is ``fallback`` and the envelope's code is kept as details["code"]
    (unless details already name one).
    """
    details = envelope.get("details")
    details = dict(details) if isinstance(details, dict) else {}
    code = envelope.get("code")
    if not (isinstance(code, str) and code in ERROR_CODES):
        if isinstance(code, str) and code and "code" not in details:
            details["code"] = code
        code = fallback
    flags = envelope.get("required_flags")
    required = [_flag_to_argument(f) for f in flags if isinstance(f, str)] if isinstance(flags, list) else []
    retry_after = envelope.get("retry_after_ms", details.get("retry_after_ms"))
    upstream = envelope.get("upstream")
    message = envelope.get("message")
    return AnvilError(
        code,
        message if isinstance(message, str) and message else "The tool call failed.",
        operation=envelope.get("operation") or operation,
        trace_id=envelope.get("trace_id") or None,
        retryable=bool(envelope.get("retryable")),
        safe_to_retry=bool(envelope.get("safe_to_retry")),
        upstream=upstream if isinstance(upstream, dict) else None,
        required_arguments=required,
        details=details,
        retry_after_ms=retry_after if isinstance(retry_after, int) and not isinstance(retry_after, bool) else None,
    )


def _http_error(status: int, body: bytes, operation: Optional[str]) -> AnvilError:
    """The AnvilError of a refused HTTP request: the code of the body's
    envelope when it is a known one (a 428 confirmation_required, a 409
    conflict, ...), else the code the status alone names."""
    fallback = _STATUS_CODES.get(status, "upstream_unavailable")
    envelope = _envelope_of(_json(body))
    if envelope is None:
        return AnvilError(
            fallback,
            "The Anvil gateway refused the request (HTTP %d)." % status,
            operation=operation,
            retryable=status >= 500 or status == 429,
            details={"http_status": status},
        )
    err = _envelope_error(envelope, operation, fallback)
    if not envelope.get("message"):
        err.message = "The Anvil gateway refused the request (HTTP %d)." % status
        err.args = (err.message,)
    if status >= 500 or status == 429:
        err.retryable = True
    err.details["http_status"] = status
    return err


def _jsonrpc_error(error: Any, operation: Optional[str]) -> AnvilError:
    """The AnvilError of a JSON-RPC error answer: unsupported_operation,
    unless its data carries an error envelope (or a code) of its own."""
    err = error if isinstance(error, dict) else {}
    text = err.get("message") if isinstance(err.get("message"), str) else None
    data = err.get("data")
    envelope = _envelope_of(data) or (data if isinstance(data, dict) and isinstance(data.get("code"), str) else None)
    if envelope is not None:
        out = _envelope_error(envelope, operation, "unsupported_operation")
        if not envelope.get("message") and text:
            out.message = text
            out.args = (text,)
        out.details["jsonrpc_code"] = err.get("code")
        return out
    return AnvilError(
        "unsupported_operation",
        text or "The Anvil gateway answered with a JSON-RPC error.",
        operation=operation,
        details={"jsonrpc_code": err.get("code")},
    )


def _tool_error(text: Optional[str], operation: Optional[str]) -> AnvilError:
    envelope = _envelope_of(_json(text)) if text else None
    if envelope is None:
        return AnvilError("unknown_upstream_error", text or "The tool call failed.", operation=operation)
    return _envelope_error(envelope, operation, "unknown_upstream_error")


def decode_tool_result(result: Any, operation: Optional[str] = None) -> Any:
    """The data of a tools/call result, or raise its error as AnvilError."""
    if not isinstance(result, dict):
        raise AnvilError(
            "upstream_unavailable",
            "The Anvil gateway answered with something that is not a tool result.",
            operation=operation,
        )
    text = None
    content = result.get("content")
    if isinstance(content, list):
        for item in content:
            if isinstance(item, dict) and item.get("type") == "text" and isinstance(item.get("text"), str):
                text = item["text"]
                break
    if result.get("isError"):
        raise _tool_error(text, operation)
    structured = result.get("structuredContent")
    if isinstance(structured, dict):
        if DRY_RUN_ARG in structured:
            return structured[DRY_RUN_ARG]
        if "anvil_unvalidated" in structured:
            return structured["anvil_unvalidated"]
    if text is not None:
        try:
            return json.loads(text)
        except ValueError:
            pass
    if isinstance(structured, dict) and len(structured) == 1 and "result" in structured:
        return structured["result"]
    if structured is not None:
        return structured
    return text


def _loopback(url: str) -> bool:
    """Whether the URL's host is localhost or a loopback address."""
    host = urllib.parse.urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def tools_url(gateway_url: str, params: List[Tuple[str, str]]) -> str:
    """The gateway's GET /tools route beside its MCP endpoint: the gateway URL
    with its last path segment (``mcp``) replaced by ``tools``, and params as
    its query."""
    parts = urllib.parse.urlsplit(gateway_url)
    path = parts.path.rstrip("/")
    path = path[: path.rfind("/") + 1] + "tools" if "/" in path else "/tools"
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, urllib.parse.urlencode(params), ""))


class GatewayTransport:
    """Calls tools on the Anvil gateway as one connector.

    The connector is the ``connector`` argument, else ANVIL_GATEWAY_CONNECTOR,
    else the class's ``default_connector`` (set by the package's _gateway.py).

    Attributes:
        url: the gateway's /mcp URL.
        connector: the connector id tools are called under (<connector>__<tool>).
        user_agent: sent as User-Agent and as the MCP clientInfo name.
        timeout: seconds each HTTP request may take.
    """

    #: The connector used when neither the argument nor the environment names one.
    default_connector = ""

    def __init__(
        self,
        url: str,
        *,
        token_file: Optional[str] = None,
        connector: Optional[str] = None,
        user_agent: Optional[str] = None,
        timeout: Optional[float] = None,
    ) -> None:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname or parts.username is not None:
            raise AnvilError(
                "validation_error",
                "The gateway URL must be an http(s) URL without credentials.",
                details={"code": "sdk/invalid_gateway_url"},
            )
        self.url = url
        self.connector = connector or _env(CONNECTOR_ENV) or self.default_connector
        if not self.connector:
            raise AnvilError(
                "validation_error",
                "No connector: pass connector= or set ANVIL_GATEWAY_CONNECTOR.",
                details={"code": "sdk/connector_unset"},
            )
        self.user_agent = user_agent or DEFAULT_USER_AGENT
        self.timeout = timeout if timeout is not None else DEFAULT_TIMEOUT
        self._token_file = token_file
        handlers = [urllib.request.ProxyHandler({}), _NoRedirect()]  # type: List[Any]
        if parts.scheme == "https":
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            context.load_default_certs()
            handlers.append(urllib.request.HTTPSHandler(context=context))
        self._opener = urllib.request.build_opener(*handlers)

    def __repr__(self) -> str:
        return "GatewayTransport(connector=%r)" % (self.connector,)

    def read_token(self, operation: Optional[str] = None) -> str:
        """The bearer token, read (and trimmed) from its file now.

        Without a token file (neither token_file nor ANVIL_GATEWAY_TOKEN_FILE)
        the answer is "" for a gateway on a loopback address, which in auth
        mode none takes calls without one (the call then carries no
        Authorization; a gateway verifying tokens answers it 401,
        auth_required); for any other gateway it is auth_required, and
        nothing is sent.
        """
        path = self._token_file or _env(TOKEN_FILE_ENV)
        if not path and _loopback(self.url):
            return ""
        if not path:
            raise AnvilError(
                "auth_required",
                "No gateway token: ANVIL_GATEWAY_TOKEN_FILE is not set.",
                operation=operation,
                details={"code": "sdk/token_file_unset"},
            )
        try:
            with open(path, "r", encoding="utf-8") as handle:
                token = handle.read().strip()
        except (OSError, UnicodeDecodeError):
            raise AnvilError(
                "auth_required",
                "The gateway token file could not be read.",
                operation=operation,
                details={"code": "sdk/token_file_unreadable"},
            ) from None
        if not token:
            raise AnvilError(
                "auth_required",
                "The gateway token file is empty.",
                operation=operation,
                details={"code": "sdk/token_file_empty"},
            )
        return token

    def _open(self, request: urllib.request.Request, timeout: float) -> Any:
        parts = urllib.parse.urlsplit(request.full_url)
        proxy = _proxy_for(parts)
        if proxy:
            p = urllib.parse.urlsplit(proxy if "://" in proxy else "http://" + proxy)
            host = p.hostname or ""
            if ":" in host:
                host = "[" + host + "]"
            if p.port:
                host += ":%d" % p.port
            if p.username is not None:
                pair = "%s:%s" % (urllib.parse.unquote(p.username), urllib.parse.unquote(p.password or ""))
                request.add_header("Proxy-Authorization", "Basic " + base64.b64encode(pair.encode("utf-8")).decode("ascii"))
            request.set_proxy(host, parts.scheme)
        return self._opener.open(request, timeout=timeout)

    def _send(
        self, request: urllib.request.Request, timeout: float, operation: Optional[str]
    ) -> Tuple[int, Dict[str, str], bytes]:
        try:
            response = self._open(request, timeout)
            with response:
                return response.status, _headers(response.headers), response.read()
        except urllib.error.HTTPError as err:
            try:
                body = err.read()
            except Exception:
                body = b""
            return err.code, _headers(err.headers), body
        except socket.timeout:
            raise AnvilError(
                "upstream_timeout", "The Anvil gateway did not answer in time.", operation=operation, retryable=True
            ) from None
        except urllib.error.URLError as err:
            if isinstance(err.reason, socket.timeout):
                raise AnvilError(
                    "upstream_timeout", "The Anvil gateway did not answer in time.", operation=operation, retryable=True
                ) from None
            raise AnvilError("upstream_unavailable", _UNREACHABLE, operation=operation, retryable=True) from None
        except (OSError, http.client.HTTPException, ValueError):
            raise AnvilError("upstream_unavailable", _UNREACHABLE, operation=operation, retryable=True) from None

    def _post(
        self, message: Dict[str, Any], headers: Dict[str, str], timeout: float, operation: Optional[str]
    ) -> Tuple[int, Dict[str, str], bytes]:
        data = json.dumps(message).encode("utf-8")
        request = urllib.request.Request(self.url, data=data, headers=headers, method="POST")
        return self._send(request, timeout, operation)

    def _result(
        self, status: int, headers: Dict[str, str], body: bytes, want: int, operation: Optional[str]
    ) -> Any:
        if status >= 400:
            err = _http_error(status, body, operation)
            after = headers.get("retry-after", "").strip()
            if err.retry_after_ms is None and after.isdigit():
                err.retry_after_ms = int(after) * 1000
            raise err
        for message in _messages(headers, body):
            if not isinstance(message, dict) or message.get("id") != want:
                continue
            if "error" in message:
                raise _jsonrpc_error(message["error"], operation)
            if "result" in message:
                return message["result"]
        raise AnvilError(
            "upstream_unavailable",
            "The Anvil gateway's answer did not include this call's response.",
            operation=operation,
            retryable=True,
        )

    def call_tool(
        self,
        name: str,
        arguments: Dict[str, Any],
        *,
        meta: Optional[Dict[str, Any]] = None,
        operation: Optional[str] = None,
        headers: Optional[Dict[str, str]] = None,
        timeout: Optional[float] = None,
    ) -> Dict[str, Any]:
        """Call one tool in a fresh MCP session and return the raw tools/call result.

        meta, when given, is sent as the call's ``_meta`` (``{"stage": true}``).
        """
        token = self.read_token(operation)
        wait = timeout if timeout is not None else self.timeout
        base = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "User-Agent": self.user_agent,
        }
        if token:
            base["Authorization"] = "Bearer " + token
        for key, value in (headers or {}).items():
            if key.lower() not in _PROTECTED:
                base[key] = value
        session = None  # type: Optional[str]
        session_headers = dict(base)
        try:
            initialize = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": PROTOCOL_VERSION,
                    "capabilities": {},
                    "clientInfo": {"name": self.user_agent, "version": "1"},
                },
            }
            status, answer_headers, body = self._post(initialize, base, wait, operation)
            session = answer_headers.get("mcp-session-id") or None
            init = self._result(status, answer_headers, body, 1, operation)
            version = init.get("protocolVersion") if isinstance(init, dict) else None
            if session:
                session_headers["Mcp-Session-Id"] = session
            session_headers["Mcp-Protocol-Version"] = version if isinstance(version, str) and version else PROTOCOL_VERSION
            status, _, body = self._post(
                {"jsonrpc": "2.0", "method": "notifications/initialized"}, session_headers, wait, operation
            )
            if status >= 400:
                raise _http_error(status, body, operation)
            params = {"name": name, "arguments": arguments}  # type: Dict[str, Any]
            if meta:
                params["_meta"] = meta
            call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params}
            status, answer_headers, body = self._post(call, session_headers, wait, operation)
            result = self._result(status, answer_headers, body, 2, operation)
            if not isinstance(result, dict):
                raise AnvilError(
                    "upstream_unavailable",
                    "The Anvil gateway answered with something that is not a tool result.",
                    operation=operation,
                )
            return result
        finally:
            if session:
                self._close(session_headers, min(wait, 5.0))

    def search_tools(self, query: str, *, limit: Optional[int] = None, timeout: Optional[float] = None) -> List[Dict[str, Any]]:
        """Rank this connector's tools for a plain-language query (GET /tools?search=...).

        The gateway answers with the tools the caller's grant allows, best
        first, each ``{"name", "operation_id", "title", "summary", "effect",
        "confirm_required"}``: the same ranking as its MCP ``anvil_search``.
        """
        token = self.read_token()
        params = [("search", query), ("connector", self.connector)]
        if limit is not None:
            params.append(("limit", str(limit)))
        headers = {"Accept": "application/json", "User-Agent": self.user_agent}
        if token:
            headers["Authorization"] = "Bearer " + token
        request = urllib.request.Request(tools_url(self.url, params), headers=headers, method="GET")
        status, _, body = self._send(request, timeout if timeout is not None else self.timeout, None)
        if status >= 400:
            raise _http_error(status, body, None)
        doc = _json(body)
        tools = doc.get("tools") if isinstance(doc, dict) else None
        if not isinstance(tools, list):
            raise AnvilError("upstream_unavailable", "The Anvil gateway's answer to the search is not a tool list.", retryable=True)
        return [t for t in tools if isinstance(t, dict)]

    def _close(self, headers: Dict[str, str], timeout: float) -> None:
        request = urllib.request.Request(self.url, headers=headers, method="DELETE")
        try:
            response = self._open(request, timeout)
            response.close()
        except Exception:
            pass
