package effect

import "testing"

func BenchmarkBuild(b *testing.B) {
	ops := loadOps(b)
	tools := fleetTools(ops)
	op := ops["github.comments.create"]
	call := commentCall(b, decode)
	b.ReportAllocs()
	for b.Loop() {
		_ = Build(op, call, tools)
	}
}

func BenchmarkBuildStaged(b *testing.B) {
	ops := loadOps(b)
	tools := fleetTools(ops)
	op := ops["github.releases.create"]
	call := Call{Request: obj(b, `{"owner":"octo","repo":"hello","tag_name":"v1","name":"One"}`),
		Response: decode(b, `{"id":500,"tag_name":"v1","draft":true}`), Staged: true}
	b.ReportAllocs()
	for b.Loop() {
		_ = Build(op, call, tools)
	}
}

func BenchmarkMarshalJSON(b *testing.B) {
	ops := loadOps(b)
	r := Build(ops["github.comments.create"], commentCall(b, decode), fleetTools(ops))
	b.ReportAllocs()
	for b.Loop() {
		_, _ = r.MarshalJSON()
	}
}

func BenchmarkHeaderValue(b *testing.B) {
	ops := loadOps(b)
	tools := fleetTools(ops)
	ascii := Build(ops["github.comments.create"], commentCall(b, decode), tools)
	call := commentCall(b, decode)
	call.Request["owner"] = "øcto 🚀"
	wide := Build(ops["github.comments.create"], call, tools)
	b.Run("ascii", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = HeaderValue(ascii)
		}
	})
	b.Run("non-ascii", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = HeaderValue(wide)
		}
	})
}
