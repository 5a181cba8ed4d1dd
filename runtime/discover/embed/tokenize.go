package embed

import (
	"encoding/json"
	"math"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// reserved is how many leading vocabulary entries are control symbols
// (the unknown piece, <s>, </s> and three extra ids): they have an id and
// an embedding but never match text.
const reserved = 6

// unknownID is the id of the unknown piece (vocab.json's first entry).
const unknownID = 0

// unknownPenalty is how far below the lowest piece score an unknown
// character scores, as in sentencepiece's unigram model: any path through
// known pieces beats one through an unknown character.
const unknownPenalty = 10

// vocab is a sentencepiece unigram model: pieces with log-probability
// scores.
type vocab struct {
	ids          map[string]int
	scores       []float64
	maxRunes     int
	unknownScore float64
}

// parseVocab reads vocab.json: an array of [piece, score] pairs (a null
// score counts as 0) whose index is the piece's id; it must fit the
// embedding table's rows.
func parseVocab(raw []byte, rows int) (*vocab, error) {
	var entries [][2]json.RawMessage
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, fail(CodeSyntax, "vocab.json", "want an array of [piece, score] pairs: %v", err)
	}
	if len(entries) <= reserved || len(entries) > MaxVocabPieces || len(entries) > rows {
		return nil, fail(CodeVocab, "vocab.json", "%d pieces for an embedding table of %d rows", len(entries), rows)
	}
	v := &vocab{ids: make(map[string]int, len(entries)), scores: make([]float64, len(entries))}
	low := math.Inf(1)
	for id, e := range entries {
		var piece string
		if err := json.Unmarshal(e[0], &piece); err != nil || piece == "" || len(piece) > MaxPieceBytes || !utf8.ValidString(piece) {
			return nil, fail(CodeVocab, "vocab.json", "entry %d: the piece is not a non-empty UTF-8 string of at most %d bytes", id, MaxPieceBytes)
		}
		var score *float64
		if err := json.Unmarshal(e[1], &score); err != nil {
			return nil, fail(CodeVocab, "vocab.json", "entry %d: the score is not a number", id)
		}
		if score != nil {
			if math.IsNaN(*score) || math.IsInf(*score, 0) {
				return nil, fail(CodeVocab, "vocab.json", "entry %d: the score is not finite", id)
			}
			v.scores[id] = *score
		}
		low = min(low, v.scores[id])
		if id < reserved {
			continue
		}
		if _, dup := v.ids[piece]; !dup {
			v.ids[piece] = id
		}
		v.maxRunes = max(v.maxRunes, utf8.RuneCountInString(piece))
	}
	v.unknownScore = low - unknownPenalty
	return v, nil
}

// MaxTextBytes bounds the text encode reads, before and after NFKC (which
// can lengthen a character up to 18 times): the graph keeps 128 pieces,
// about a kilobyte of ordinary text, so only text whose first 16 KB are one
// unknown piece (a run of characters no piece covers) loses anything.
const MaxTextBytes = 16 << 10

// truncate cuts s to at most MaxTextBytes without splitting a rune.
func truncate(s string) string {
	if len(s) <= MaxTextBytes {
		return s
	}
	s = s[:MaxTextBytes]
	// Drop the bytes of a rune the cut split (at most UTFMax-1).
	for range utf8.UTFMax - 1 {
		if r, size := utf8.DecodeLastRuneInString(s); r != utf8.RuneError || size != 1 {
			break
		}
		s = s[:len(s)-1]
	}
	return s
}

// encode tokenizes text: NFKC normalisation, "▁" for each space and one
// in front, then the Viterbi segmentation of highest total score over the
// vocabulary's pieces. A character no piece covers is the unknown piece;
// consecutive unknown characters are one unknown piece.
func (v *vocab) encode(text string) []int {
	s := "▁" + strings.ReplaceAll(truncate(norm.NFKC.String(truncate(text))), " ", "▁")
	// bounds[i] is the byte offset of rune i; n runes.
	bounds := make([]int, 0, len(s)+1)
	for i := range s {
		bounds = append(bounds, i)
	}
	n := len(bounds)
	bounds = append(bounds, len(s))
	best := make([]float64, n+1)
	from := make([]int, n+1) // start rune of the piece ending here
	piece := make([]int, n+1)
	for i := 1; i <= n; i++ {
		best[i] = math.Inf(-1)
	}
	for i := range n {
		if math.IsInf(best[i], -1) {
			continue
		}
		single := false
		for l := 1; l <= v.maxRunes && i+l <= n; l++ {
			id, ok := v.ids[s[bounds[i]:bounds[i+l]]]
			if !ok {
				continue
			}
			if l == 1 {
				single = true
			}
			if c := best[i] + v.scores[id]; c > best[i+l] {
				best[i+l], from[i+l], piece[i+l] = c, i, id
			}
		}
		if !single {
			if c := best[i] + v.unknownScore; c > best[i+1] {
				best[i+1], from[i+1], piece[i+1] = c, i, unknownID
			}
		}
	}
	var rev []int
	for j := n; j > 0; j = from[j] {
		rev = append(rev, piece[j])
	}
	out := make([]int, 0, len(rev))
	for k := len(rev) - 1; k >= 0; k-- {
		if rev[k] == unknownID && len(out) > 0 && out[len(out)-1] == unknownID {
			continue
		}
		out = append(out, rev[k])
	}
	return out
}
