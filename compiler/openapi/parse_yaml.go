package openapi

import (
	"fmt"
	"github.com/anvil-dev/anvil/runtime/canon"
	"math"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// maxYAMLExpansion bounds the number of nodes a YAML document may stand for
// once its aliases are expanded (a "billion laughs" guard).
const maxYAMLExpansion = 10_000_000

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// parseYAML parses data as a YAML document. It returns (nil, nil) for a
// document with no content.
func parseYAML(data []byte) (root *node, count int, serr *syntaxError) {
	var doc yaml.Node
	err := func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("yaml: the YAML parser failed: %v", r)
			}
		}()
		return yaml.Unmarshal(data, &doc)
	}()
	if err != nil {
		msg := err.Error()
		if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
			line, _ := strconv.Atoi(m[1])
			return nil, 0, &syntaxError{line: line, msg: m[2]}
		}
		return nil, 0, &syntaxError{msg: strings.TrimPrefix(msg, "yaml: ")}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, 0, nil
	}
	c := &yamlConv{memo: map[*yaml.Node]*yamlConverted{}}
	top := doc.Content[0]
	if doc.Kind != yaml.DocumentNode {
		top = &doc
	}
	n := c.convert(top, 0)
	if c.err != nil {
		return nil, 0, c.err
	}
	return n, c.alloc.count, nil
}

type yamlConverted struct {
	n    *node
	size int64 // node count once aliases are expanded
	busy bool
}

type yamlConv struct {
	alloc nodeAlloc
	memo  map[*yaml.Node]*yamlConverted
	size  int64 // of the node being converted, set by convert
	err   *syntaxError
}

func (c *yamlConv) fail(y *yaml.Node, format string, args ...any) {
	if c.err == nil {
		c.err = &syntaxError{line: y.Line, col: y.Column, msg: fmt.Sprintf(format, args...)}
	}
}

// convert turns a yaml node into a node; c.size is set to its expanded size.
func (c *yamlConv) convert(y *yaml.Node, depth int) *node {
	c.size = 1
	if c.err != nil {
		return &node{}
	}
	if depth > maxDepth {
		c.fail(y, "nesting deeper than %d levels", maxDepth)
		return &node{}
	}
	if y.Kind == yaml.AliasNode {
		if y.Alias == nil {
			c.fail(y, "unknown alias %s", quote(y.Value))
			return &node{}
		}
		return c.anchored(y.Alias, depth)
	}
	if y.Anchor != "" {
		return c.anchored(y, depth)
	}
	return c.plain(y, depth)
}

// anchored converts a node that aliases may share, once.
func (c *yamlConv) anchored(y *yaml.Node, depth int) *node {
	if m, ok := c.memo[y]; ok {
		if m.busy {
			c.fail(y, "anchor %s refers to itself", quote(y.Anchor))
			return &node{}
		}
		c.size = m.size
		return m.n
	}
	m := &yamlConverted{busy: true}
	c.memo[y] = m
	m.n = c.plain(y, depth)
	m.size = c.size
	m.busy = false
	return m.n
}

func (c *yamlConv) plain(y *yaml.Node, depth int) *node {
	n := c.alloc.new()
	n.line, n.col = int32(y.Line), int32(y.Column)
	var size int64 = 1
	switch y.Kind {
	case yaml.DocumentNode:
		if len(y.Content) == 0 {
			n.kind = kNull
			break
		}
		return c.convert(y.Content[0], depth)
	case yaml.SequenceNode:
		n.kind = kArray
		n.kids = make([]member, 0, len(y.Content))
		for _, e := range y.Content {
			v := c.convert(e, depth+1)
			size += c.size
			n.kids = append(n.kids, member{val: v})
		}
	case yaml.MappingNode:
		n.kind = kObject
		size += c.mapping(n, y, depth)
	case yaml.ScalarNode:
		c.scalar(n, y)
	default:
		c.fail(y, "unsupported YAML node")
	}
	if size > maxYAMLExpansion {
		c.fail(y, "aliases expand to more than %d values", maxYAMLExpansion)
	}
	c.size = size
	return n
}

// mapping fills n's members from a YAML mapping, applying merge keys ("<<");
// it returns the expanded size of the members.
func (c *yamlConv) mapping(n *node, y *yaml.Node, depth int) int64 {
	var size int64
	n.kids = make([]member, 0, len(y.Content)/2)
	var merges []*yaml.Node
	for i := 0; i+1 < len(y.Content); i += 2 {
		k, v := y.Content[i], y.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			merges = append(merges, v)
			continue
		}
		key := k.Value
		if k.Kind == yaml.AliasNode && k.Alias != nil {
			key = k.Alias.Value
		} else if k.Kind != yaml.ScalarNode {
			c.fail(k, "a mapping key must be a plain value")
			return size
		}
		val := c.convert(v, depth+1)
		size += c.size
		n.kids = append(n.kids, member{key: key, line: int32(k.Line), col: int32(k.Column), val: val, written: true})
	}
	var have map[string]bool
	if len(merges) > 0 {
		have = make(map[string]bool, len(n.kids))
		for _, km := range n.kids {
			have[km.key] = true
		}
	}
	for _, m := range merges {
		var sources []*yaml.Node
		src := m
		if src.Kind == yaml.AliasNode && src.Alias != nil {
			src = src.Alias
		}
		switch src.Kind {
		case yaml.MappingNode:
			sources = append(sources, m)
		case yaml.SequenceNode:
			sources = append(sources, src.Content...)
		default:
			c.fail(m, "a merge key (<<) must refer to a mapping or a list of mappings")
			return size
		}
		for _, s := range sources {
			sv := c.convert(s, depth+1)
			if sv.kind != kObject {
				c.fail(s, "a merge key (<<) must refer to a mapping or a list of mappings")
				return size
			}
			for _, km := range sv.kids {
				if !have[km.key] {
					have[km.key] = true
					n.kids = append(n.kids, km)
					size++
				}
			}
			size += c.size
		}
	}
	return size
}

// scalar resolves a YAML scalar to a JSON-shaped node.
func (c *yamlConv) scalar(n *node, y *yaml.Node) {
	n.kind = kString
	n.str = y.Value
	switch y.ShortTag() {
	case "!!null":
		n.kind, n.str = kNull, ""
	case "!!bool":
		if v, err := strconv.ParseBool(strings.ToLower(y.Value)); err == nil {
			n.kind = kBool
			n.str = strconv.FormatBool(v)
		}
	case "!!int":
		if lit, ok := yamlInt(y.Value); ok {
			n.kind, n.str = kNumber, lit
		}
	case "!!float":
		if canon.IsNumber(y.Value) {
			n.kind = kNumber
			break
		}
		v := strings.ReplaceAll(y.Value, "_", "")
		f, err := strconv.ParseFloat(v, 64)
		if err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
			n.kind, n.str = kNumber, strconv.FormatFloat(f, 'g', -1, 64)
		}
	}
}

// yamlInt turns a YAML integer (decimal, 0x, 0o, 0b, with _ separators) into a
// JSON number literal.
func yamlInt(s string) (string, bool) {
	if canon.IsNumber(s) {
		return s, true
	}
	v := strings.ReplaceAll(s, "_", "")
	neg := false
	switch {
	case strings.HasPrefix(v, "-"):
		neg = true
		v = v[1:]
	case strings.HasPrefix(v, "+"):
		v = v[1:]
	}
	base := 10
	switch {
	case strings.HasPrefix(v, "0x"), strings.HasPrefix(v, "0X"):
		base, v = 16, v[2:]
	case strings.HasPrefix(v, "0o"), strings.HasPrefix(v, "0O"):
		base, v = 8, v[2:]
	case strings.HasPrefix(v, "0b"), strings.HasPrefix(v, "0B"):
		base, v = 2, v[2:]
	case len(v) > 1 && v[0] == '0':
		base, v = 8, v[1:]
	}
	u, err := strconv.ParseUint(v, base, 64)
	if err != nil {
		return "", false
	}
	lit := strconv.FormatUint(u, 10)
	if neg && u != 0 {
		lit = "-" + lit
	}
	return lit, true
}
