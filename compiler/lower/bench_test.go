package lower

import "testing"

// BenchmarkLowerGitHubMini lowers the bundled example (spec and manifest loaded once).
func BenchmarkLowerGitHubMini(b *testing.B) {
	spec, man := loadMini(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if doc, _ := Lower(spec, man, nil); len(doc.Operations) != 12 {
			b.Fatal("wrong operation count")
		}
	}
}

// BenchmarkLowerGitHub lowers GitHub's REST description with no manifest.
func BenchmarkLowerGitHub(b *testing.B) {
	spec := loadRealSpec(b, "github.json")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Lower(spec, nil, nil)
	}
}
