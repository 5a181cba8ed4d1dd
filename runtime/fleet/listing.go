package fleet

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/anvil-dev/anvil/runtime/air"
	"github.com/anvil-dev/anvil/runtime/effect"
)

// mcpTool builds the tools/list entry of a tool: name, title, description,
// the served input schema, the outputSchema when the MCP door asked for
// it (ListOutputSchemas), annotations and the anvil/* _meta keys.
func mcpTool(t *Tool) *mcp.Tool {
	op := t.Op
	schema, err := json.Marshal(op.Input.Schema)
	if err != nil {
		// A loaded schema always encodes; should one not, the tool is
		// listed with the schema of any object rather than not at all,
		// and its calls are still checked against its own.
		schema = []byte(`{"type":"object"}`)
	}
	readOnly := op.Effect.Kind == air.KindRead
	destructive := op.Effect.Kind == air.KindMutation && !op.Effect.Reversible
	openWorld := false
	desc := op.Description
	if desc == "" {
		desc = op.DisplayName
	}
	meta := mcp.Meta{
		"anvil/effect":           op.Effect.Kind,
		"anvil/action":           op.Effect.Action,
		"anvil/risk":             op.Effect.Risk,
		"anvil/retry_safe":       op.Retries.Mode == air.RetrySafe,
		"anvil/retry_basis":      op.Retries.Basis,
		"anvil/idempotency":      op.Idempotency.Mode,
		"anvil/principal":        principalOf(t),
		"anvil/operation_id":     op.ID,
		"anvil/fleet_bundle_id":  t.Connector.ID,
		"anvil/fleet_tool_name":  t.unprefixed(),
		"anvil/confirm_required": op.Confirmation.Required,
	}
	if air.HasEffectContract(op) {
		meta["anvil/effect_class"] = air.EffectClassOf(op)
		meta["anvil/effect_contract"] = effect.Contract(op)
	}
	var output any
	if t.listOutput {
		if o := t.OutputSchema(); o != nil {
			output = o
		}
	}
	return &mcp.Tool{
		Name:         t.Name,
		OutputSchema: output,
		Title:        op.DisplayName,
		Description:  desc,
		InputSchema:  json.RawMessage(schema),
		Annotations: &mcp.ToolAnnotations{
			Title:           op.DisplayName,
			ReadOnlyHint:    readOnly,
			DestructiveHint: &destructive,
			IdempotentHint:  op.Idempotency.Mode != air.IdemNone,
			OpenWorldHint:   &openWorld,
		},
		Meta: meta,
	}
}

func principalOf(t *Tool) string {
	a := t.Connector.AuthFor(t.Op)
	if a.Principal != "" {
		return a.Principal
	}
	if a.Type == air.AuthNone || a.Type == "" {
		return "none"
	}
	return "user"
}
