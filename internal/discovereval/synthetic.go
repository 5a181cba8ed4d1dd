package discovereval

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/anvil-dev/anvil/runtime/air"
)

// Vocabulary of the synthetic API: resources nest under parents, each
// resource gets the usual verbs, descriptions draw from a shared word list.
var (
	synthParents   = []string{"orgs", "users", "projects", "accounts", "workspaces", "teams", "sites", "regions"}
	synthResources = []string{"invoice", "customer", "subscription", "widget", "report", "channel", "message",
		"ticket", "comment", "attachment", "webhook", "token", "policy", "role", "member", "group", "device",
		"bucket", "object", "snapshot", "volume", "instance", "cluster", "node", "pipeline", "job", "artifact",
		"release", "deployment", "alert", "incident", "schedule", "calendar", "event", "contact", "lead",
		"campaign", "segment", "template", "domain", "certificate", "secret", "variable", "label", "milestone",
		"note", "folder", "file", "dashboard", "metric", "log", "trace", "quota", "plan", "coupon", "refund",
		"payout", "transfer", "dispute", "product", "price", "order", "shipment", "address", "tax", "rate"}
	synthVerbs = []struct{ method, action, title string }{
		{"GET", "list", "List %ss"}, {"GET", "get", "Get a %s"}, {"POST", "create", "Create a %s"},
		{"PATCH", "update", "Update a %s"}, {"DELETE", "delete", "Delete a %s"},
	}
	synthWords = strings.Fields(`the a of for with when this that returns all given specified account user
		organization resource access token scope permission request response page cursor filter sort order
		status state created updated deleted archived active pending enabled disabled public private default
		limit maximum minimum result results item items field fields value values name description type
		version region zone identifier unique key secret read write admin owner member role settings
		configuration notification email webhook event trigger delivery retry failure error success`)
)

// Synthetic returns n operations of a made-up API shaped like real ones
// (nested resource paths, CRUD verbs, parameters, descriptions of 20-60
// words), deterministic for a given n.
func Synthetic(n int) []air.Operation {
	r := rand.New(rand.NewPCG(1, uint64(n)))
	ops := make([]air.Operation, 0, n)
	for i := 0; len(ops) < n; i++ {
		parent := synthParents[i%len(synthParents)]
		res := synthResources[(i/len(synthParents))%len(synthResources)]
		variant := i / (len(synthParents) * len(synthResources))
		scope := fmt.Sprintf("%s_v%d", strings.TrimSuffix(parent, "s"), variant)
		for _, v := range synthVerbs {
			if len(ops) == n {
				break
			}
			path := fmt.Sprintf("/%s/{%s_id}/x%d/%ss", parent, strings.TrimSuffix(parent, "s"), variant, res)
			if v.action != "list" && v.action != "create" {
				path += "/{" + res + "_id}"
			}
			tool := fmt.Sprintf("%s_%s_%s", v.action, res, scope)
			words := make([]string, 20+r.IntN(40))
			for j := range words {
				words[j] = synthWords[r.IntN(len(synthWords))]
			}
			op := air.Operation{
				ID: fmt.Sprintf("synthetic.%s_%s.%s", res, scope, v.action), CanonicalName: tool,
				DisplayName: fmt.Sprintf(v.title, res) + " in " + strings.TrimSuffix(parent, "s") + " " + fmt.Sprint(variant),
				Description: strings.Join(words, " ") + ".",
				Tags:        []string{res + "s"},
				SourceRef:   air.SourceRef{Kind: "openapi", Path: path, Method: v.method},
				Effect:      air.Effect{Kind: air.KindRead, Action: v.action, Resource: res},
				MCP:         air.MCP{ToolName: tool},
				CLI:         air.CLI{Command: "synthetic " + res + " " + v.action},
			}
			if v.method != "GET" {
				op.Effect.Kind = air.KindMutation
			}
			for _, p := range []string{strings.TrimSuffix(parent, "s") + "_id", "per_page", "cursor", "status"} {
				op.Input.Params = append(op.Input.Params, air.Param{Name: p, Key: p, In: air.InQuery})
			}
			ops = append(ops, op)
		}
	}
	return ops
}

// SyntheticSpec returns the OpenAPI 3.0 JSON document of Synthetic(n)'s
// operations, for compiling a workspace of any size (docs/scale.md): every
// resource has a named schema in components (an object of a dozen fields
// reaching the shared Address, Owner and Metadata schemas), create and
// update take it as their JSON request body and every operation answers it,
// so each input schema that reaches it carries the named schemas as real
// APIs' do. The server is https://synthetic.example.invalid and no
// operation needs credentials. The bytes are deterministic for a given n.
func SyntheticSpec(n int) ([]byte, error) {
	type obj = map[string]any
	ref := func(name string) obj { return obj{"$ref": "#/components/schemas/" + name} }
	schemas := obj{
		"Address": obj{"type": "object", "properties": obj{
			"line1": obj{"type": "string", "maxLength": 200}, "line2": obj{"type": "string"},
			"city": obj{"type": "string"}, "postal_code": obj{"type": "string", "pattern": "^[A-Z0-9 -]{3,10}$"},
			"country": obj{"type": "string", "minLength": 2, "maxLength": 2}}, "required": []string{"line1", "country"}},
		"Owner": obj{"type": "object", "properties": obj{
			"id": obj{"type": "integer", "format": "int64"}, "login": obj{"type": "string"},
			"email": obj{"type": "string", "format": "email"}, "address": ref("Address")}},
		"Metadata": obj{"type": "object", "description": "Free-form key/value pairs attached to the object.",
			"additionalProperties": obj{"type": "string", "maxLength": 500}},
	}
	paths := obj{}
	for _, op := range Synthetic(n) {
		res := op.Effect.Resource
		name := strings.ToUpper(res[:1]) + res[1:]
		if _, ok := schemas[name]; !ok {
			schemas[name] = obj{"type": "object", "description": "A " + res + ".", "properties": obj{
				"id": obj{"type": "string", "readOnly": true}, "name": obj{"type": "string", "maxLength": 120},
				"description": obj{"type": "string"}, "status": obj{"type": "string", "enum": []string{"active", "pending", "archived"}},
				"amount": obj{"type": "integer", "minimum": 0}, "currency": obj{"type": "string", "minLength": 3, "maxLength": 3},
				"tags":  obj{"type": "array", "items": obj{"type": "string"}, "maxItems": 20},
				"owner": ref("Owner"), "billing_address": ref("Address"), "shipping_address": ref("Address"),
				"metadata": ref("Metadata"), "created_at": obj{"type": "string", "format": "date-time", "readOnly": true}},
				"required": []string{"name"}}
		}
		var params []obj
		p := op.SourceRef.Path
		for _, seg := range strings.Split(p, "/") {
			if strings.HasPrefix(seg, "{") {
				params = append(params, obj{"name": strings.Trim(seg, "{}"), "in": "path", "required": true, "schema": obj{"type": "string"}})
			}
		}
		if op.Effect.Action == "list" {
			params = append(params,
				obj{"name": "per_page", "in": "query", "schema": obj{"type": "integer", "minimum": 1, "maximum": 100, "default": 30}},
				obj{"name": "cursor", "in": "query", "schema": obj{"type": "string"}},
				obj{"name": "status", "in": "query", "schema": obj{"type": "string", "enum": []string{"active", "pending", "archived"}}})
		}
		answer := ref(name)
		if op.Effect.Action == "list" {
			answer = obj{"type": "array", "items": ref(name)}
		}
		o := obj{
			"operationId": op.CanonicalName, "summary": op.DisplayName, "description": op.Description,
			"tags":       op.Tags,
			"responses":  obj{"200": obj{"description": "OK", "content": obj{"application/json": obj{"schema": answer}}}},
			"parameters": params,
		}
		if op.Effect.Action == "create" || op.Effect.Action == "update" {
			o["requestBody"] = obj{"required": true, "content": obj{"application/json": obj{"schema": ref(name)}}}
		}
		item, _ := paths[p].(obj)
		if item == nil {
			item = obj{}
			paths[p] = item
		}
		item[strings.ToLower(op.SourceRef.Method)] = o
	}
	return json.Marshal(obj{
		"openapi": "3.0.3",
		"info":    obj{"title": "Synthetic", "version": "1.0.0", "description": fmt.Sprintf("A made-up API of %d operations.", n)},
		"servers": []obj{{"url": "https://synthetic.example.invalid"}},
		"paths":   paths, "components": obj{"schemas": schemas},
	})
}
