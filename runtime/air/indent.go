package air

// Indenter indents compact JSON as json.Indent does with no prefix and two
// spaces (a member or element per line, "key": value with one space, empty
// objects and arrays kept as {} and []), except that the members of
// containers nested deeper than MaxDepth stay compact on their line. It
// takes the JSON in runs that may end anywhere, even inside a string, so
// a writer can stream a large document through it. Its state is a
// comparable value: a copy taken between runs indents the rest alike.
// Marshal, EncodeDocument and anvil.lock's writer all indent with it.
type Indenter struct {
	MaxDepth int
	depth    int  // the containers the scan is inside
	open     bool // just after { or [: the line break waits for a first member
	inStr    bool // inside a string
	esc      bool // inside a string, just after a backslash
}

// indentSpaces is copied from for each line's indentation.
var indentSpaces = []byte("                                                                ")

// Append appends the indented form of the run src to dst.
func (ind *Indenter) Append(dst, src []byte) []byte {
	for i := 0; i < len(src); i++ {
		if ind.inStr {
			j := i
			for ; j < len(src); j++ {
				if ind.esc {
					ind.esc = false
				} else if src[j] == '\\' {
					ind.esc = true
				} else if src[j] == '"' {
					ind.inStr = false
					break
				}
			}
			j = min(j, len(src)-1)
			dst = append(dst, src[i:j+1]...)
			i = j
			continue
		}
		c := src[i]
		if ind.open && c != '}' && c != ']' {
			ind.open = false
			ind.depth++
			if ind.depth <= ind.MaxDepth {
				dst = ind.newline(dst)
			}
		}
		switch c {
		case '"':
			ind.inStr = true
			dst = append(dst, c)
		case '{', '[':
			ind.open = true
			dst = append(dst, c)
		case ',':
			dst = append(dst, c)
			if ind.depth <= ind.MaxDepth {
				dst = ind.newline(dst)
			}
		case ':':
			if ind.depth <= ind.MaxDepth {
				dst = append(dst, ':', ' ')
			} else {
				dst = append(dst, ':')
			}
		case '}', ']':
			if ind.open {
				ind.open = false
			} else {
				ind.depth--
				if ind.depth < ind.MaxDepth {
					dst = ind.newline(dst)
				}
			}
			dst = append(dst, c)
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// newline ends the line and indents the next to the current depth.
func (ind *Indenter) newline(dst []byte) []byte {
	dst = append(dst, '\n')
	for left := 2 * ind.depth; left > 0; {
		k := min(left, len(indentSpaces))
		dst = append(dst, indentSpaces[:k]...)
		left -= k
	}
	return dst
}
