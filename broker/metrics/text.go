package metrics

import (
	"bufio"
	"math"
	"strconv"
	"strings"
)

// The text format (0.0.4) written directly for the Kafka families. A
// broker with 10,000 partitions exports over 100,000 samples; expfmt's
// encoder validates and escapes every name and label on every scrape,
// which made it most of the scrape's time. Here each sample's
// "name{labels} " prefix and each family's HELP and TYPE lines are
// rendered once per layout (when names come or go), and a scrape writes
// the prefixes with the current values. The names are the rules' safe
// names (valid by construction); label values and help texts are escaped
// as the text format requires.

// textLayout holds, parallel to Collector.order, each sample's rendered
// prefix and, where a family starts, its HELP and TYPE lines.
type textLayout struct {
	// buf holds every sample's head (HELP and TYPE lines where a family
	// starts, else nothing) and prefix, in order, in one allocation so a
	// scrape reads them sequentially; sample i's bytes are
	// buf[ends[i-1]:ends[i]] (ends[-1] = 0).
	buf  []byte
	ends []int
}

func (c *Collector) buildText() {
	t := &c.text
	t.buf = t.buf[:0]
	t.ends = t.ends[:0]
	last := ""
	for _, r := range c.order {
		name := familyName(r)
		b := t.buf
		if name != last || len(t.ends) == 0 {
			typ := "gauge"
			if r.which == sampleCount {
				typ = "counter"
			}
			b = append(b, "# HELP "+name+" "+helpEscaper.Replace(c.helps[name])+"\n# TYPE "+name+" "+typ+"\n"...)
			last = name
		}
		b = append(b, name...)
		if ps := r.labelPairs(); len(ps) > 0 {
			b = append(b, '{')
			for i, lp := range ps {
				if i > 0 {
					b = append(b, ',')
				}
				b = append(b, lp.GetName()...)
				b = append(b, `="`...)
				b = append(b, valueEscaper.Replace(lp.GetValue())...)
				b = append(b, '"')
			}
			b = append(b, '}')
		}
		b = append(b, ' ')
		t.buf = b
		t.ends = append(t.ends, len(b))
	}
}

var (
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
	valueEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)
)

// writeTextLocked writes the Kafka families in the text format, with the
// values of this scrape.
func (c *Collector) writeTextLocked(w *bufio.Writer) error {
	c.refreshPlansLocked()
	if c.dirty {
		c.sortOrder()
	}
	if c.textLayout != c.layout || len(c.text.ends) != len(c.order) {
		c.buildText()
		c.textLayout = c.layout
	}
	defer c.releaseLocked()
	var num [32]byte
	start := 0
	for i, r := range c.order {
		end := c.text.ends[i]
		w.Write(c.text.buf[start:end])
		start = end
		w.Write(appendFloat(num[:0], c.readLocked(r)))
		if err := w.WriteByte('\n'); err != nil {
			return err
		}
	}
	return nil
}

// appendFloat formats v as the text format does (expfmt's writeFloat).
func appendFloat(b []byte, v float64) []byte {
	switch {
	case v == 1:
		return append(b, '1')
	case v == 0:
		return append(b, '0')
	case v == -1:
		return append(b, "-1"...)
	case math.IsNaN(v):
		return append(b, "NaN"...)
	case math.IsInf(v, +1):
		return append(b, "+Inf"...)
	case math.IsInf(v, -1):
		return append(b, "-Inf"...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}
