package embed

import "testing"

// The cost of one embedding: a short query (6 pieces) and an operation's
// index text (title, first sentence, path words: about 30 pieces).
func BenchmarkEmbedQuery(b *testing.B) {
	m := loadShared(b)
	for b.Loop() {
		m.Embed("Who directed Oppenheimer?")
	}
}

func BenchmarkEmbedEntry(b *testing.B) {
	m := loadShared(b)
	text := "Merge a pull request. Merges a pull request into the base branch. repos owner repo pulls pull number merge"
	b.ReportMetric(float64(len(m.vocab.encode(text))), "pieces")
	for b.Loop() {
		m.Embed(text)
	}
}
