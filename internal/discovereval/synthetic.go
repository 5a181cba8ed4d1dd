package discovereval

import (
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
				op.Input.Params = append(op.Input.Params, air.Param{Name: p, Key: p, In: "query"})
			}
			ops = append(ops, op)
		}
	}
	return ops
}
