package manifest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// errorCases are bad manifests with the exact diagnostics they render,
// one or more cases per code.
var errorCases = []struct {
	name string
	src  string
	want []string
}{
	{
		name: "unknown key without suggestion (undo)",
		src:  "operations:\n  x:\n    effect:\n      class: reversible\n      undo: {operation: y}\n",
		want: []string{
			"anvil.yaml:5:7: error manifest/unknown_key: unknown key \"undo\" in operations.x.effect; valid keys: class, inverse, compensate, lookup, draft",
		},
	},
	{
		name: "unknown key with suggestion",
		src:  "operations:\n  x:\n    effect:\n      inverce: {operation: y}\n",
		want: []string{
			"anvil.yaml:4:7: error manifest/unknown_key: unknown key \"inverce\" in operations.x.effect; did you mean \"inverse\"?",
		},
	},
	{
		name: "unknown top-level key",
		src:  "operation: {}\n",
		want: []string{
			"anvil.yaml:1:1: error manifest/unknown_key: unknown key \"operation\" at the top level; did you mean \"operations\"?",
		},
	},
	{
		name: "unknown keys in every block",
		src:  "service: {nmae: x}\nauth: {typ: none, carrier: {inn: header}, tls: {ca: x}, provider: {pkse: true}}\noperations:\n  x:\n    nme: {resourse: a}\n    name: {resourse: a}\n    idempotency: {strategie: none}\n    confirmation: {requird: true}\n    retries: {max_attempt: 2}\n    pagination: {stlye: page}\n    stream: {max_event: 1}\n    effect:\n      inverse: {operation: y, deadlin: {with_ms: 1}}\n      lookup: {operation: y, by: id, argument: {}}\n      draft: {operation: y, handle: response.id, promote: {operation: z, args: {}}, discard: {operation: w, opertion: v}}\nworkflows: {w: {step: []}}\ncapabilities: {c: {ops: []}}\n",
		want: []string{
			"anvil.yaml:1:11: error manifest/unknown_key: unknown key \"nmae\" in service; did you mean \"name\"?",
			"anvil.yaml:2:8: error manifest/unknown_key: unknown key \"typ\" in auth; did you mean \"type\"?",
			"anvil.yaml:2:29: error manifest/unknown_key: unknown key \"inn\" in auth.carrier; did you mean \"in\"?",
			"anvil.yaml:2:49: error manifest/unknown_key: unknown key \"ca\" in auth.tls; valid keys: client_cert_ref, client_key_ref, ca_ref",
			"anvil.yaml:2:68: error manifest/unknown_key: unknown key \"pkse\" in auth.provider; did you mean \"pkce\"?",
			"anvil.yaml:5:5: error manifest/unknown_key: unknown key \"nme\" in operations.x; did you mean \"name\"?",
			"anvil.yaml:6:12: error manifest/unknown_key: unknown key \"resourse\" in operations.x.name; did you mean \"resource\"?",
			"anvil.yaml:7:19: error manifest/unknown_key: unknown key \"strategie\" in operations.x.idempotency; did you mean \"strategy\"?",
			"anvil.yaml:8:20: error manifest/unknown_key: unknown key \"requird\" in operations.x.confirmation; did you mean \"required\"?",
			"anvil.yaml:9:15: error manifest/unknown_key: unknown key \"max_attempt\" in operations.x.retries; did you mean \"max_attempts\"?",
			"anvil.yaml:10:18: error manifest/unknown_key: unknown key \"stlye\" in operations.x.pagination; did you mean \"style\"?",
			"anvil.yaml:11:14: error manifest/unknown_key: unknown key \"max_event\" in operations.x.stream; did you mean \"max_events\"?",
			"anvil.yaml:13:31: error manifest/unknown_key: unknown key \"deadlin\" in operations.x.effect.inverse; did you mean \"deadline\"?",
			"anvil.yaml:14:38: error manifest/unknown_key: unknown key \"argument\" in operations.x.effect.lookup; did you mean \"arguments\"?",
			"anvil.yaml:15:74: error manifest/unknown_key: unknown key \"args\" in operations.x.effect.draft.promote; valid keys: operation, arguments",
			"anvil.yaml:15:109: error manifest/unknown_key: unknown key \"opertion\" in operations.x.effect.draft.discard; did you mean \"operation\"?",
			"anvil.yaml:16:17: error manifest/unknown_key: unknown key \"step\" in workflows.w; did you mean \"steps\"?",
			"anvil.yaml:17:20: error manifest/unknown_key: unknown key \"ops\" in capabilities.c; valid keys: description, operations",
		},
	},
	{
		name: "string where a boolean is expected",
		src:  "operations:\n  x:\n    reversible: \"yes\"\n",
		want: []string{
			"anvil.yaml:3:17: error manifest/type: operations.x.reversible: expected a boolean, got string \"yes\"",
		},
	},
	{
		name: "operations as a list",
		src:  "operations:\n  - x\n",
		want: []string{
			"anvil.yaml:2:3: error manifest/type: operations: expected a mapping of operation keys, got a list",
		},
	},
	{
		name: "arguments not a mapping",
		src:  "operations:\n  x:\n    effect:\n      inverse:\n        operation: y\n        arguments: [a, b]\n",
		want: []string{
			"anvil.yaml:6:20: error manifest/type: operations.x.effect.inverse.arguments: expected a mapping of argument names to sources, got a list",
		},
	},
	{
		name: "retries values",
		src:  "operations:\n  x:\n    retries: {max_attempts: many}\n  y:\n    retries: {max_attempts: 9, only_on: [timeout, \"429\", 503, 999, conection_reset, [x]]}\n",
		want: []string{
			"anvil.yaml:3:29: error manifest/type: operations.x.retries.max_attempts: expected an integer, got string \"many\"",
			"anvil.yaml:5:29: error manifest/invalid_value: operations.y.retries.max_attempts: 9 is out of range 1..5",
			"anvil.yaml:5:63: error manifest/invalid_value: operations.y.retries.only_on[3]: \"999\" is not one of timeout, connection_reset, dns_failure or an HTTP status code (100..599)",
			"anvil.yaml:5:68: error manifest/invalid_value: operations.y.retries.only_on[4]: \"conection_reset\" is not one of timeout, connection_reset, dns_failure or an HTTP status code (100..599); did you mean \"connection_reset\"?",
			"anvil.yaml:5:85: error manifest/type: operations.y.retries.only_on[5]: expected a string or an HTTP status code, got a list",
		},
	},
	{
		name: "enums of an operation",
		src:  "operations:\n  x: {risk: hgh, state: aproved, side_effect: write, action: fetch}\n",
		want: []string{
			"anvil.yaml:2:13: error manifest/invalid_value: operations.x.risk: \"hgh\" is not one of none, low, medium, high, financial, destructive; did you mean \"high\"?",
			"anvil.yaml:2:25: error manifest/invalid_value: operations.x.state: \"aproved\" is not one of generated, review_required, approved, deprecated, blocked; did you mean \"approved\"?",
			"anvil.yaml:2:47: error manifest/invalid_value: operations.x.side_effect: \"write\" is not one of read, mutation",
			"anvil.yaml:2:62: error manifest/invalid_value: operations.x.action: \"fetch\" is not one of list, get, search, export, simulate, validate, poll, create, update, replace, delete, send, execute, approve, cancel, reserve, other",
		},
	},
	{
		name: "effect class and lookup by",
		src:  "operations:\n  x:\n    effect: {class: reversable, lookup: {operation: y, by: key}}\n",
		want: []string{
			"anvil.yaml:3:21: error manifest/invalid_value: operations.x.effect.class: \"reversable\" is not one of read, reversible, compensable, irreversible; did you mean \"reversible\"?",
			"anvil.yaml:3:60: error manifest/invalid_value: operations.x.effect.lookup.by: \"key\" is not one of idempotency_key, id",
		},
	},
	{
		name: "auth type and path grammar",
		src:  "auth: {type: oauth3}\npath_grammar: rest\n",
		want: []string{
			"anvil.yaml:1:14: error manifest/invalid_value: auth.type: \"oauth3\" is not one of none, api_key, basic, oauth2_client_credentials, oauth2_authorization_code, oauth2_on_behalf_of, jwt_bearer, mtls, custom_header, workload_identity, oauth2; did you mean \"oauth2\"?",
			"anvil.yaml:2:15: error manifest/invalid_value: path_grammar: \"rest\" is not one of resource_grammar, rpc_plain, rpc_dotted, adapter_lowered",
		},
	},
	{
		name: "auth values are not repeated",
		src:  "auth: {type: oauth2, provider: {api_key: 12345, pkce: yes}, carrier: {in: body}}\n",
		want: []string{
			"anvil.yaml:1:42: error manifest/type: auth.provider.api_key: expected a string, got an integer",
			"anvil.yaml:1:55: error manifest/type: auth.provider.pkce: expected a boolean, got a string",
			"anvil.yaml:1:75: error manifest/invalid_value: auth.carrier.in: \"body\" is not one of header, query, cookie",
		},
	},
	{
		name: "idempotency and confirmation enums",
		src:  "operations:\n  x:\n    idempotency: {strategy: optional, key_location: cookie}\n    confirmation: {risk: extreme, human_approval: 1}\n",
		want: []string{
			"anvil.yaml:3:29: error manifest/invalid_value: operations.x.idempotency.strategy: \"optional\" is not one of natural, required_request_key, key_supported, client_id, none",
			"anvil.yaml:3:53: error manifest/invalid_value: operations.x.idempotency.key_location: \"cookie\" is not one of header, query, body, path",
			"anvil.yaml:4:26: error manifest/invalid_value: operations.x.confirmation.risk: \"extreme\" is not one of none, low, medium, high, financial, destructive",
			"anvil.yaml:4:51: error manifest/type: operations.x.confirmation.human_approval: expected a boolean, got integer 1",
		},
	},
	{
		name: "pagination and stream bounds",
		src:  "operations:\n  x:\n    pagination: {style: pages, max_page_size: 0}\n    stream: {max_events: 20000, max_seconds: 301}\n",
		want: []string{
			"anvil.yaml:3:25: error manifest/invalid_value: operations.x.pagination.style: \"pages\" is not one of cursor, page, offset, link; did you mean \"page\"?",
			"anvil.yaml:3:47: error manifest/invalid_value: operations.x.pagination.max_page_size: 0 is out of range 1..2147483647",
			"anvil.yaml:4:26: error manifest/invalid_value: operations.x.stream.max_events: 20000 is out of range 1..10000",
			"anvil.yaml:4:46: error manifest/invalid_value: operations.x.stream.max_seconds: 301 is out of range 1..300",
		},
	},
	{
		name: "yaml syntax error",
		src:  "operations:\n  x: {risk: low\n",
		want: []string{
			"anvil.yaml:2: error manifest/parse_error: did not find expected ',' or '}'",
		},
	},
	{
		name: "duplicate key",
		src:  "operations:\n  x:\n    risk: low\n    risk: high\n",
		want: []string{
			"anvil.yaml:4:5: error manifest/duplicate_key: duplicate key \"risk\" in operations.x; first defined at line 3",
		},
	},
	{
		name: "duplicate operation",
		src:  "operations:\n  x: {}\n  y: {}\n  x: {}\n",
		want: []string{
			"anvil.yaml:4:3: error manifest/duplicate_key: duplicate key \"x\" in operations; first defined at line 2",
		},
	},
	{
		name: "top level not a mapping",
		src:  "- a\n- b\n",
		want: []string{
			"anvil.yaml:1:1: error manifest/type: manifest: expected a mapping, got a list",
		},
	},
	{
		name: "bad argument sources",
		src:  "operations:\n  x:\n    effect:\n      compensate:\n        operation: y\n        arguments:\n          a: {const: 1, extra: 2}\n          b: true\n          c:\n          d: {}\n          e: 5\n          f: {cosnt: x}\n          g: [request.x]\n",
		want: []string{
			"anvil.yaml:7:14: error manifest/type: operations.x.effect.compensate.arguments.a: expected a path string or {const: value}, got a mapping with keys \"const\", \"extra\"",
			"anvil.yaml:8:14: error manifest/type: operations.x.effect.compensate.arguments.b: expected a path string or {const: value}, got boolean true (write {const: true} for a literal)",
			"anvil.yaml:9:13: error manifest/type: operations.x.effect.compensate.arguments.c: expected a path string or {const: value}, got null",
			"anvil.yaml:10:14: error manifest/type: operations.x.effect.compensate.arguments.d: expected a path string or {const: value}, got an empty mapping",
			"anvil.yaml:11:14: error manifest/type: operations.x.effect.compensate.arguments.e: expected a path string or {const: value}, got integer 5 (write {const: 5} for a literal)",
			"anvil.yaml:12:14: error manifest/type: operations.x.effect.compensate.arguments.f: expected a path string or {const: value}, got a mapping with key \"cosnt\"",
			"anvil.yaml:13:14: error manifest/type: operations.x.effect.compensate.arguments.g: expected a path string or {const: value}, got a list",
		},
	},
	{
		name: "missing required effect keys",
		src:  "operations:\n  x:\n    effect:\n      lookup: {operation: y}\n      inverse: {arguments: {}}\n      draft: {operation: z}\n",
		want: []string{
			"anvil.yaml:4:7: error manifest/missing_key: operations.x.effect.lookup: missing required key \"by\"",
			"anvil.yaml:5:7: error manifest/missing_key: operations.x.effect.inverse: missing required key \"operation\"",
			"anvil.yaml:6:7: error manifest/missing_key: operations.x.effect.draft: missing required key \"handle\"",
			"anvil.yaml:6:7: error manifest/missing_key: operations.x.effect.draft: missing required key \"promote\"",
		},
	},
	{
		name: "empty follow-up blocks",
		src:  "operations:\n  x:\n    effect: {inverse: ~, draft: ~, lookup: ~, compensate: {operation: ~}}\n",
		want: []string{
			"anvil.yaml:3:14: error manifest/missing_key: operations.x.effect.inverse: missing required key \"operation\"",
			"anvil.yaml:3:26: error manifest/missing_key: operations.x.effect.draft: missing required key \"handle\"",
			"anvil.yaml:3:26: error manifest/missing_key: operations.x.effect.draft: missing required key \"operation\"",
			"anvil.yaml:3:26: error manifest/missing_key: operations.x.effect.draft: missing required key \"promote\"",
			"anvil.yaml:3:36: error manifest/missing_key: operations.x.effect.lookup: missing required key \"by\"",
			"anvil.yaml:3:36: error manifest/missing_key: operations.x.effect.lookup: missing required key \"operation\"",
			"anvil.yaml:3:71: error manifest/type: operations.x.effect.compensate.operation: expected an operation reference, got null",
		},
	},
	{
		name: "two documents",
		src:  "a: 1\n---\nb: 2\n",
		want: []string{
			"anvil.yaml:2:1: error manifest/parse_error: a manifest is a single YAML document; found another document here",
		},
	},
	{
		name: "argument mapping with many keys",
		src:  "operations:\n  x:\n    effect:\n      inverse:\n        operation: y\n        arguments:\n          a: {k1: 1, k2: 1, k3: 1, k4: 1, k5: 1, k6: 1, k7: 1, k8: 1, k9: 1, k10: 1}\n",
		want: []string{
			"anvil.yaml:7:14: error manifest/type: operations.x.effect.inverse.arguments.a: expected a path string or {const: value}, got a mapping with keys \"k1\", \"k2\", \"k3\", \"k4\", \"k5\", \"k6\", \"k7\", \"k8\" and 2 more",
		},
	},
	{
		name: "a problem in an anchor is reported for each alias",
		src:  "operations:\n  a: &o {stat: approved}\n  b: *o\n",
		want: []string{
			"anvil.yaml:2:10: error manifest/unknown_key: unknown key \"stat\" in operations.a; did you mean \"state\"?",
			"anvil.yaml:2:10: error manifest/unknown_key: unknown key \"stat\" in operations.b; did you mean \"state\"?",
		},
	},
	{
		name: "alias that contains itself",
		src:  "query_templates: &a [*a]\n",
		want: []string{
			"anvil.yaml:1:22: error manifest/parse_error: alias *a contains itself",
		},
	},
	{
		name: "unknown anchor",
		src:  "service:\n  name: *nope\n",
		want: []string{
			"anvil.yaml:2:9: error manifest/parse_error: unknown anchor 'nope' referenced",
		},
	},
	{
		name: "lists and strings",
		src:  "operations:\n  x:\n    intent_examples: hello\n    display_name: 12\n    auth: {scopes: read}\n",
		want: []string{
			"anvil.yaml:3:22: error manifest/type: operations.x.intent_examples: expected a list, got string \"hello\"",
			"anvil.yaml:4:19: error manifest/type: operations.x.display_name: expected a string, got integer 12",
			"anvil.yaml:5:20: error manifest/type: operations.x.auth.scopes: expected a list, got a string",
		},
	},
	{
		name: "non-string key",
		src:  "? [a]\n: b\n",
		want: []string{
			"anvil.yaml:1:3: error manifest/type: manifest: keys must be strings, got a list",
		},
	},
	{
		name: "json values without a json form",
		src:  "operations:\n  x:\n    query_policy: {a: .nan, b: !custom x}\n",
		want: []string{
			"anvil.yaml:3:23: error manifest/type: operations.x.query_policy.a: .nan has no JSON form",
			"anvil.yaml:3:32: error manifest/type: operations.x.query_policy.b: expected a JSON value, got value \"x\" tagged !custom",
		},
	},
	{
		name: "block types",
		src:  "service: [a]\nversion: [1]\nworkflows: [a]\ncapabilities: {c: {operations: [1, null]}}\neffect: {}\n",
		want: []string{
			"anvil.yaml:1:10: error manifest/type: service: expected a mapping, got a list",
			"anvil.yaml:2:10: error manifest/type: version: expected a string or a number, got a list",
			"anvil.yaml:3:12: error manifest/type: workflows: expected a mapping of ids, got a list",
			"anvil.yaml:4:33: error manifest/type: capabilities.c.operations[0]: expected a string, got integer 1",
			"anvil.yaml:4:36: error manifest/type: capabilities.c.operations[1]: expected a string, got null",
			"anvil.yaml:5:1: error manifest/unknown_key: unknown key \"effect\" at the top level; valid keys: version, service, auth, path_grammar, operations, workflows, capabilities, query_templates",
		},
	},
	{
		name: "deadline values",
		src:  "operations:\n  x:\n    effect:\n      inverse:\n        operation: y\n        deadline: {within_ms: -5, at: 7}\n",
		want: []string{
			"anvil.yaml:6:31: error manifest/invalid_value: operations.x.effect.inverse.deadline.within_ms: -5 is out of range (at least 1)",
			"anvil.yaml:6:39: error manifest/type: operations.x.effect.inverse.deadline.at: expected a string, got integer 7",
		},
	},
	{
		name: "invalid utf-8",
		src:  "service:\n  name: \xff\n",
		want: []string{
			"anvil.yaml:2:9: error manifest/parse_error: invalid leading UTF-8 octet",
		},
	},
	{
		name: "control character",
		src:  "service:\n  name: a\x01b\n",
		want: []string{
			"anvil.yaml:2:10: error manifest/parse_error: control characters are not allowed",
		},
	},
	{
		name: "bad merge key",
		src:  "operations:\n  x:\n    <<: [1]\n    <<: 2\n",
		want: []string{
			"anvil.yaml:3:10: error manifest/type: operations.x: a merge key (<<) takes a mapping or a list of mappings, got integer 1",
			"anvil.yaml:4:9: error manifest/type: operations.x: a merge key (<<) takes a mapping or a list of mappings, got integer 2",
		},
	},
	{
		name: "wrong types for typed values",
		src:  "operations:\n  x:\n    retries: {max_attempts: 2.5, enabled: \"true\"}\n    stream: {max_events: 99999999999999999999}\n    operation: [a]\n    effect: {class: [reversible]}\n",
		want: []string{
			"anvil.yaml:3:29: error manifest/type: operations.x.retries.max_attempts: expected an integer, got number 2.5",
			"anvil.yaml:3:43: error manifest/type: operations.x.retries.enabled: expected a boolean, got string \"true\"",
			"anvil.yaml:4:26: error manifest/type: operations.x.stream.max_events: expected an integer, got number 99999999999999999999",
			"anvil.yaml:5:5: error manifest/unknown_key: unknown key \"operation\" in operations.x; valid keys: side_effect, risk, reversible, display_name, description, intent_examples, action, name, idempotency, confirmation, retries, auth, pagination, query_policy, query_schema, async_contract, stream, state, reviewed_by, review_reason, effect, needs",
			"anvil.yaml:6:21: error manifest/type: operations.x.effect.class: expected a string, got a list",
		},
	},
}

func TestDecodeErrors(t *testing.T) {
	for _, tt := range errorCases {
		t.Run(tt.name, func(t *testing.T) {
			_, diags := Decode("anvil.yaml", []byte(tt.src))
			if d := cmp.Diff(tt.want, render(diags)); d != "" {
				t.Errorf("diagnostics (-want +got):\n%s", d)
			}
			for _, d := range diags {
				if d.Level != "error" {
					t.Errorf("%s: level %s", d, d.Level)
				}
			}
		})
	}
}
