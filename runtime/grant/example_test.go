package grant_test

import (
	"fmt"

	"github.com/anvil-dev/anvil/runtime/grant"
)

func Example() {
	l, err := grant.Parse([]byte(`[
		{"connector":"github","operations":["issues.*","pulls.list"],"mode":"write","account":"work"},
		{"connector":"github","operations":["*"],"mode":"read"}
	]`))
	if err != nil {
		fmt.Println(err)
		return
	}
	ops := []grant.Op{
		{Connector: "github", ID: "github.issues.list", ServiceID: "github"},
		{Connector: "github", ID: "github.releases.get", ServiceID: "github"},
		{Connector: "github", ID: "github.issues.create", ServiceID: "github", Mutation: true, NeedsConfirm: true},
		{Connector: "github", ID: "github.releases.create", ServiceID: "github", Mutation: true},
		{Connector: "jira", ID: "jira.tickets.list", ServiceID: "jira"},
	}
	compiled := grant.Compile(l, ops)
	for i, op := range ops {
		d := compiled.Decide(i)
		fmt.Printf("%s: %s %s account=%q rule=%s\n", op.ID, d.Outcome, d.Code, d.Account, d.Rule())
	}
	// Output:
	// github.issues.list: allowed  account="work" rule={"index":0,"connector":"github","operations":["issues.*","pulls.list"],"mode":"write","account":"work"}
	// github.releases.get: allowed  account="default" rule={"index":1,"connector":"github","operations":["*"],"mode":"read"}
	// github.issues.create: confirmation_required policy/grant_confirmation_required account="work" rule={"index":0,"connector":"github","operations":["issues.*","pulls.list"],"mode":"write","account":"work"}
	// github.releases.create: denied policy/grant_denied account="default" rule={"index":1,"connector":"github","operations":["*"],"mode":"read"}
	// jira.tickets.list: denied policy/grant_denied account="" rule=null
}

func ExampleParseFile() {
	_, err := grant.ParseFile([]byte(`{"grants": "github"}`))
	fmt.Println("grants.json", err)
	// Output: grants.json is not a grant: expected a JSON array of {connector, operations, mode} entries.
}
