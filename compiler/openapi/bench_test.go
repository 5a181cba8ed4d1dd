package openapi

import (
	"os"
	"testing"

	"github.com/pb33f/libopenapi"
)

// BenchmarkLoadGitHubMini loads the bundled example.
func BenchmarkLoadGitHubMini(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Load(githubMini, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoadGitHub loads GitHub's REST description (skipped unless
// scripts/fetch-specs.sh has cached it).
func BenchmarkLoadGitHub(b *testing.B) {
	file := realSpec(b, "github.json")
	b.ReportAllocs()
	for b.Loop() {
		s, err := Load(file, nil)
		if err != nil {
			b.Fatal(err)
		}
		if len(s.Operations) < 1000 {
			b.Fatalf("%d operations", len(s.Operations))
		}
	}
}

// BenchmarkLibopenapiGitHub is the baseline: libopenapi reading the same
// file and building its OpenAPI 3 model.
func BenchmarkLibopenapiGitHub(b *testing.B) {
	file := realSpec(b, "github.json")
	b.ReportAllocs()
	for b.Loop() {
		data, err := os.ReadFile(file)
		if err != nil {
			b.Fatal(err)
		}
		doc, err := libopenapi.NewDocument(data)
		if err != nil {
			b.Fatal(err)
		}
		m, err := doc.BuildV3Model()
		if err != nil {
			b.Fatal(err)
		}
		if m.Model.Paths.PathItems.Len() < 500 {
			b.Fatal("too few paths")
		}
	}
}
