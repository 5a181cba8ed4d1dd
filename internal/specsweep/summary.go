package specsweep

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Summary aggregates sweep results.
type Summary struct {
	Files      int            `json:"files"`
	Outcomes   map[string]int `json:"outcomes"`
	Fatal      map[string]int `json:"fatal"`      // files failing with each fatal code
	Errors     map[string]int `json:"errors"`     // compiled files with error diagnostics of each code
	Warnings   map[string]int `json:"warnings"`   // compiled files with warnings of each code
	Problems   map[string]int `json:"problems"`   // files failing each check
	Clean      int            `json:"clean"`      // ok, no error diagnostics, no failed check
	Operations int            `json:"operations"` // operations compiled, over ok files
	CLIRuns    int            `json:"cliRuns"`
}

// Summarize counts results by outcome, code and check.
func Summarize(results []Result) Summary {
	s := Summary{Files: len(results), Outcomes: map[string]int{}, Fatal: map[string]int{}, Errors: map[string]int{},
		Warnings: map[string]int{}, Problems: map[string]int{}}
	for _, r := range results {
		s.Outcomes[r.Outcome]++
		for _, c := range r.Fatal {
			s.Fatal[c]++
		}
		for c := range r.Errors {
			s.Errors[c]++
		}
		for c := range r.Warnings {
			s.Warnings[c]++
		}
		checks := map[string]bool{}
		for _, p := range r.Problems {
			checks[p.Check] = true
		}
		for c := range checks {
			s.Problems[c]++
		}
		if r.Outcome == OutcomeOK {
			s.Operations += r.Operations
			if len(r.Errors) == 0 && len(r.Problems) == 0 {
				s.Clean++
			}
		}
		if r.CLI != nil {
			s.CLIRuns++
		}
	}
	return s
}

// OK reports whether nothing unacceptable happened: no panic, timeout or
// crash, and no failed check.
func (s Summary) OK() bool {
	return s.Outcomes[OutcomePanic]+s.Outcomes[OutcomeTimeout]+s.Outcomes[OutcomeCrash] == 0 && len(s.Problems) == 0
}

// WriteText writes the summary, the slowest files and every file that
// panicked, timed out, crashed, failed or failed a check.
func WriteText(w io.Writer, results []Result, slowest int) {
	s := Summarize(results)
	fmt.Fprintf(w, "specsweep: %d files, %d operations compiled, %d clean\n\n", s.Files, s.Operations, s.Clean)
	fmt.Fprintln(w, "outcomes:")
	writeCounts(w, s.Outcomes)
	fmt.Fprintln(w, "\nfatal failures, files by code:")
	writeCounts(w, s.Fatal)
	fmt.Fprintln(w, "\ncompiled files with error diagnostics, by code:")
	writeCounts(w, s.Errors)
	fmt.Fprintln(w, "\nfailed checks, files by check:")
	writeCounts(w, s.Problems)
	fmt.Fprintf(w, "\nCLI runs: %d\n", s.CLIRuns)
	fmt.Fprintln(w, "\ncompiled files with warnings, by code:")
	writeCounts(w, s.Warnings)

	byTime := append([]Result(nil), results...)
	sort.SliceStable(byTime, func(i, j int) bool { return byTime[i].Millis > byTime[j].Millis })
	if slowest > len(byTime) {
		slowest = len(byTime)
	}
	fmt.Fprintf(w, "\nslowest %d files:\n", slowest)
	for _, r := range byTime[:slowest] {
		fmt.Fprintf(w, "  %6d ms (load %d ms, peak %d MiB) %5d ops  %s  %s\n", r.Millis, r.LoadMillis, r.PeakRSSMiB, r.Operations, r.Outcome, r.File)
	}

	section := func(title string, keep func(Result) bool, detail func(Result) []string) {
		var hit []Result
		for _, r := range results {
			if keep(r) {
				hit = append(hit, r)
			}
		}
		if len(hit) == 0 {
			return
		}
		fmt.Fprintf(w, "\n%s (%d):\n", title, len(hit))
		for _, r := range hit {
			fmt.Fprintf(w, "  %s\n", r.File)
			for _, d := range detail(r) {
				fmt.Fprintf(w, "      %s\n", strings.ReplaceAll(d, "\n", "\n      "))
			}
		}
	}
	section("panics, timeouts and crashes", func(r Result) bool {
		return r.Outcome == OutcomePanic || r.Outcome == OutcomeTimeout || r.Outcome == OutcomeCrash
	}, func(r Result) []string { return []string{r.Outcome + ": " + firstLines(r.Panic, 25)} })
	section("failed checks", func(r Result) bool { return len(r.Problems) > 0 }, func(r Result) []string {
		var out []string
		for _, p := range r.Problems {
			out = append(out, p.Check+": "+p.Detail)
		}
		if r.CLI != nil && r.CLI.Stderr != "" {
			out = append(out, "cli stderr: "+r.CLI.Stderr)
		}
		return out
	})
	section("compiled with error diagnostics", func(r Result) bool { return r.Outcome == OutcomeOK && len(r.Errors) > 0 },
		func(r Result) []string { return r.ErrorMsgs })
	section("fatal", func(r Result) bool { return r.Outcome == OutcomeFatal }, func(r Result) []string { return r.FatalMsgs })
}

// WriteJSONLines writes one JSON object per result.
func WriteJSONLines(w io.Writer, results []Result) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, r := range results {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return nil
}

func writeCounts(w io.Writer, m map[string]int) {
	if len(m) == 0 {
		fmt.Fprintln(w, "  (none)")
		return
	}
	keys := sortedKeys(m)
	sort.SliceStable(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] })
	for _, k := range keys {
		fmt.Fprintf(w, "  %6d  %s\n", m[k], k)
	}
}
