package jvm

import (
	"math"
	"strconv"
	"strings"
)

// FormatFixed is java.util.Formatter's %.<prec>f (String.format("%.2f",
// v), and Scala's "%.4f".format(v)), which Kafka's perf tools print
// their figures with. Java does not round the exact binary value the way
// Go's %f does: it takes the shortest decimal digits that identify the
// double (the digits of Double.toString) and rounds those half up, so
// 0.125 becomes "0.13" and 1.005 becomes "1.01" at two places where Go
// prints "0.12" and "1.00". No grouping, no exponent however large the
// value; the sign is kept for -0.0 and for values that round to zero
// ("-0.0"); NaN and the infinities print as Java names them.
func FormatFixed(v float64, prec int) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "Infinity"
	case math.IsInf(v, -1):
		return "-Infinity"
	}
	sign := ""
	if math.Signbit(v) {
		sign, v = "-", -v
	}
	// digits holds the shortest digits; the decimal point sits after
	// point of them (point may be <= 0 or beyond len(digits)).
	var digits []byte
	point := 1
	if v != 0 {
		mant, exp, _ := strings.Cut(strconv.FormatFloat(v, 'e', -1, 64), "e")
		digits = []byte(strings.Replace(mant, ".", "", 1))
		e, _ := strconv.Atoi(exp)
		point = e + 1
	}
	keep := point + prec // digits left after rounding
	switch {
	case keep < 0:
		digits = nil
	case keep < len(digits):
		up := digits[keep] >= '5'
		digits = digits[:keep]
		if up {
			i := keep - 1
			for ; i >= 0 && digits[i] == '9'; i-- {
				digits[i] = '0'
			}
			if i >= 0 {
				digits[i]++
			} else {
				digits = append([]byte{'1'}, digits...)
				point++
			}
		}
	}
	// Lay the digits out around the point, padding with zeros.
	var b strings.Builder
	b.WriteString(sign)
	digit := func(i int) byte {
		if i >= 0 && i < len(digits) {
			return digits[i]
		}
		return '0'
	}
	if point <= 0 {
		b.WriteByte('0')
	} else {
		for i := 0; i < point; i++ {
			b.WriteByte(digit(i))
		}
	}
	if prec > 0 {
		b.WriteByte('.')
		for i := 0; i < prec; i++ {
			b.WriteByte(digit(point + i))
		}
	}
	return b.String()
}
