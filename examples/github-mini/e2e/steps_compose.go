package e2e

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
)

// Check names of step 10 (the composite) and of the shutdown.
const (
	chkCompose          = "composite is written"
	chkFlowRuns         = "flow runs through the gateway"
	chkFlowValid        = "flow validates without errors"
	chkFlowFails        = "flow fails on the missing issue"
	chkFlowCompensation = "flow compensation lists the comments newest first"
	chkCompensate       = "compensate deletes the flow's comments"
	chkCommentsRestored = "mock ends with the comments it started with"
	chkGatewayStop      = "gateway exits 0 on SIGTERM"
)

// missingIssue is the issue number the flow's last comment names. The mock
// accepts comments on any number it can route, so the missing issue is one
// its routes cannot name: the call reaches the upstream and fails 404.
const missingIssue = -1

//go:embed scripts/compose_flow.py
var composeFlowPy string

// flowOut is what scripts/compose_flow.py printed.
type flowOut struct {
	ImportError  *pyError         `json:"import_error"`
	Error        *pyError         `json:"error"`
	Traceback    string           `json:"traceback"`
	Findings     []map[string]any `json:"findings"`
	OK           *bool            `json:"ok"`
	Run          map[string]any   `json:"run"`
	Compensation []compensation   `json:"compensation"`
	Outcomes     []map[string]any `json:"outcomes"`
}

// compensation is one entry of run.compensation.
type compensation struct {
	Step      string `json:"step"`
	Call      any    `json:"call"`
	Operation string `json:"operation"`
	Undo      *struct {
		Kind      string          `json:"kind"`
		Operation string          `json:"operation"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"undo"`
	Reason string `json:"reason"`
}

func (r *runner) composite() {
	var out flowOut
	r.step(chkCompose, []string{chkPackage}, r.compose)
	r.step(chkFlowRuns, []string{chkCompose, chkWriteToken, chkConnect}, func(ctx context.Context) error {
		before, err := r.allComments(ctx)
		if err != nil {
			return fmt.Errorf("reading the mock's comments first: %v", err)
		}
		r.beforeFlow = before
		if err := r.runPython(ctx, "compose_flow.py", composeFlowPy, r.paths.writeToken,
			filepath.Join(r.paths.compose, "python"), &out, strconv.Itoa(missingIssue)); err != nil {
			return err
		}
		switch {
		case out.ImportError != nil:
			return fmt.Errorf("from anvil_compose import Composite, item raised %s", out.ImportError)
		case out.Error != nil:
			return fmt.Errorf("the flow raised %s\n%s", out.Error, tail(out.Traceback, 800))
		}
		return nil
	})
	r.step(chkFlowValid, []string{chkFlowRuns}, func(context.Context) error {
		for _, f := range out.Findings {
			if f["level"] == "error" {
				b, _ := json.Marshal(out.Findings)
				return fmt.Errorf("validate() found errors: %s", brief(b))
			}
		}
		return nil
	})
	r.step(chkFlowFails, []string{chkFlowRuns}, func(context.Context) error {
		status, _ := out.Run["status"].(string)
		failed, _ := out.Run["failed_step"].(string)
		if out.OK == nil || *out.OK || status != "failed" || failed != "missing" {
			b, _ := json.Marshal(out.Run)
			return fmt.Errorf("the run is ok=%v status=%q failed_step=%q, want a failed run stopped at \"missing\": %s", boolOrNull(out.OK), status, failed, brief(b))
		}
		return nil
	})
	r.step(chkFlowCompensation, []string{chkFlowFails}, func(context.Context) error {
		return checkFlowCompensation(out)
	})
	r.step(chkCompensate, []string{chkFlowFails}, func(context.Context) error {
		if len(out.Outcomes) != len(out.Compensation) || len(out.Outcomes) == 0 {
			return fmt.Errorf("compensate() returned %d outcome(s) for %d compensation entr(ies)", len(out.Outcomes), len(out.Compensation))
		}
		for i, o := range out.Outcomes {
			if o["status"] != "ok" {
				b, _ := json.Marshal(o)
				return fmt.Errorf("outcome %d is %s, want status ok", i, brief(b))
			}
		}
		return nil
	})
	r.step(chkCommentsRestored, []string{chkFlowRuns}, func(ctx context.Context) error {
		after, err := r.allComments(ctx)
		if err != nil {
			return err
		}
		if !reflect.DeepEqual(after, r.beforeFlow) {
			return fmt.Errorf("the mock's comments by issue were %v before the flow and are %v after", r.beforeFlow, after)
		}
		return nil
	})
}

// compose is step 10's anvil connectors compose.
func (r *runner) compose(ctx context.Context) error {
	res := r.anvil(ctx, nil, "", "connectors", "compose", "--workspace", r.paths.workspace, "--out", r.paths.compose, r.paths.bundle)
	if res.err != nil || res.code != 0 {
		return res.failure("anvil connectors compose")
	}
	var missing []string
	for _, rel := range []string{"SKILL.md", "compose.json", "python/anvil_compose/__init__.py"} {
		if !exists(filepath.Join(r.paths.compose, rel)) {
			missing = append(missing, rel)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the composite lacks %s", strings.Join(missing, ", "))
	}
	return nil
}

// allComments maps each issue the mock lists to its comment ids.
func (r *runner) allComments(ctx context.Context) (map[int64][]int64, error) {
	var issues []map[string]any
	status, err := r.mockGet(ctx, "/repos/octo/hello/issues", &issues)
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("the mock answered %d for the issues", status)
	}
	out := map[int64][]int64{}
	for _, is := range issues {
		n, ok := intField(is, "number")
		if !ok {
			continue
		}
		ids, err := r.commentIDs(ctx, n)
		if err != nil {
			return nil, err
		}
		out[n] = ids
	}
	return out, nil
}

// checkFlowCompensation checks run.compensation: one inverse per comment
// the map step made, newest first, with owner, repo and comment_id.
func checkFlowCompensation(out flowOut) error {
	made, err := mapResultIDs(out.Run)
	if err != nil {
		return err
	}
	if len(made) == 0 {
		return errors.New("the comment step made no comments")
	}
	if len(out.Compensation) != len(made) {
		b, _ := json.Marshal(out.Compensation)
		return fmt.Errorf("run.compensation has %d entr(ies), want %d (one per comment made): %s", len(out.Compensation), len(made), brief(b))
	}
	for i, c := range out.Compensation {
		want := made[len(made)-1-i]
		if c.Undo == nil || c.Step != "comment" || c.Undo.Kind != "inverse" || c.Undo.Operation != "github.comments.delete" {
			b, _ := json.Marshal(c)
			return fmt.Errorf("compensation %d is %s, want the inverse github.comments.delete of a comment step call", i, brief(b))
		}
		wantArgs := fmt.Sprintf(`{"owner":"octo","repo":"hello","comment_id":%d}`, want)
		if got := compactJSON(c.Undo.Arguments); got != wantArgs {
			return fmt.Errorf("compensation %d has arguments %s, want %s (newest first)", i, got, wantArgs)
		}
	}
	return nil
}

// mapResultIDs reads the ids of the comments the map step made, in call
// order, from run.steps.comment.result.
func mapResultIDs(run map[string]any) ([]int64, error) {
	steps, _ := run["steps"].(map[string]any)
	step, _ := steps["comment"].(map[string]any)
	results, ok := step["result"].([]any)
	if !ok {
		b, _ := json.Marshal(step)
		return nil, fmt.Errorf("run.steps.comment.result is not a list: %s", brief(b))
	}
	var ids []int64
	for _, res := range results {
		obj, _ := res.(map[string]any)
		id, ok := intField(obj, "id")
		if !ok {
			return nil, fmt.Errorf("a comment result has no id: %v", res)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

func boolOrNull(b *bool) string {
	if b == nil {
		return "null"
	}
	return strconv.FormatBool(*b)
}

// shutdown stops the gateway and checks it exits 0 on SIGTERM.
func (r *runner) shutdown() {
	r.step(chkGatewayStop, []string{chkGateway}, func(context.Context) error {
		code, graceful := r.gateway.stop()
		if !graceful {
			return fmt.Errorf("the gateway did not exit within %s of SIGTERM and was killed", termGrace)
		}
		if code != 0 {
			return fmt.Errorf("the gateway exited %d on SIGTERM: %s", code, r.gateway.logTail())
		}
		return nil
	})
}
