package main

import (
	"fmt"
	"strings"
	"time"
)

// dateFormat is java.text.SimpleDateFormat for --date-format, in the
// default locale (English) and time zone: the pattern letters G y Y M L d
// D E u a H k K h m s S z Z X, quoted text ('...', ” for a quote) and
// literal characters. Another ASCII letter is refused as Java refuses it.
type dateFormat struct {
	fields []dateField
	loc    *time.Location // the JVM's default time zone: the local one
}

type dateField struct {
	letter byte // 0 for literal text
	count  int
	text   string
}

func parseDateFormat(pattern string) (*dateFormat, error) {
	f := &dateFormat{loc: time.Local}
	for i := 0; i < len(pattern); {
		c := pattern[i]
		switch {
		case c == '\'':
			// Quoted text; '' inside or outside quotes is one quote.
			if i+1 < len(pattern) && pattern[i+1] == '\'' {
				f.fields = append(f.fields, dateField{text: "'"})
				i += 2
				continue
			}
			var b strings.Builder
			j := i + 1
			for ; j < len(pattern); j++ {
				if pattern[j] == '\'' {
					if j+1 < len(pattern) && pattern[j+1] == '\'' {
						b.WriteByte('\'')
						j++
						continue
					}
					break
				}
				b.WriteByte(pattern[j])
			}
			if j >= len(pattern) {
				return nil, fmt.Errorf("Unterminated quote")
			}
			f.fields = append(f.fields, dateField{text: b.String()})
			i = j + 1
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			if !strings.ContainsRune("GyYMLdDEuaHkKhmsSzZX", rune(c)) {
				return nil, fmt.Errorf("Illegal pattern character '%c'", c)
			}
			j := i
			for j < len(pattern) && pattern[j] == c {
				j++
			}
			f.fields = append(f.fields, dateField{letter: c, count: j - i})
			i = j
		default:
			f.fields = append(f.fields, dateField{text: string(c)})
			i++
		}
	}
	return f, nil
}

// format renders ms since the epoch in the local time zone.
func (f *dateFormat) format(ms int64) string {
	t := time.UnixMilli(ms).In(f.loc)
	var b strings.Builder
	num := func(v, count int) { fmt.Fprintf(&b, "%0*d", count, v) }
	text := func(full string, count int) {
		if count >= 4 {
			b.WriteString(full)
		} else {
			b.WriteString(full[:3])
		}
	}
	for _, fl := range f.fields {
		n := fl.count
		switch fl.letter {
		case 0:
			b.WriteString(fl.text)
		case 'G':
			b.WriteString("AD")
		case 'y', 'Y':
			y := t.Year()
			if n == 2 {
				num(y%100, 2)
			} else {
				num(y, n)
			}
		case 'M', 'L':
			if n >= 3 {
				text(t.Month().String(), n)
			} else {
				num(int(t.Month()), n)
			}
		case 'd':
			num(t.Day(), n)
		case 'D':
			num(t.YearDay(), n)
		case 'E':
			text(t.Weekday().String(), n)
		case 'u':
			wd := int(t.Weekday())
			if wd == 0 {
				wd = 7
			}
			num(wd, n)
		case 'a':
			if t.Hour() < 12 {
				b.WriteString("AM")
			} else {
				b.WriteString("PM")
			}
		case 'H':
			num(t.Hour(), n)
		case 'k':
			h := t.Hour()
			if h == 0 {
				h = 24
			}
			num(h, n)
		case 'K':
			num(t.Hour()%12, n)
		case 'h':
			h := t.Hour() % 12
			if h == 0 {
				h = 12
			}
			num(h, n)
		case 'm':
			num(t.Minute(), n)
		case 's':
			num(t.Second(), n)
		case 'S':
			num(t.Nanosecond()/int(time.Millisecond), n)
		case 'z':
			name, _ := t.Zone()
			b.WriteString(name)
		case 'Z':
			b.WriteString(t.Format("-0700"))
		case 'X':
			_, off := t.Zone()
			switch {
			case off == 0:
				b.WriteString("Z")
			case n == 1:
				b.WriteString(t.Format("-07"))
			case n == 2:
				b.WriteString(t.Format("-0700"))
			default:
				b.WriteString(t.Format("-07:00"))
			}
		}
	}
	return b.String()
}
