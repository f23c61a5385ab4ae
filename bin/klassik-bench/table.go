package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// row is one figure of the table: the Klassik samples and the baseline
// samples of every run (the table shows medians and their ratio) and the
// issue's target for it.
type row struct {
	figure   string
	unit     string    // of the samples, e.g. "MB/s"
	k, b     []float64 // Klassik, baseline
	baseline string    // what the baseline is
	target   string
	note     string // shown instead of numbers when there are no samples
}

func (r *row) ratio() (float64, bool) {
	if len(r.k) == 0 || len(r.b) == 0 {
		return 0, false
	}
	b := median(r.b)
	if b == 0 {
		return 0, false
	}
	return median(r.k) / b, true
}

// format prints a figure with three significant digits (integers as
// they are).
func format(v float64) string {
	switch a := max(v, -v); {
	case a == 0:
		return "0"
	case a >= 1000:
		return groupThousands(strconv.FormatFloat(v, 'f', 0, 64))
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	default:
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
}

func groupThousands(s string) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// header is what the table is quoted with: when, on what and how.
type header struct {
	date     time.Time
	nproc    int
	cpu      string
	goVer    string
	cluster  string
	runs     int
	quick    bool
	settings string
}

func machine() (nproc int, cpu string) {
	nproc = runtime.NumCPU()
	if out, err := exec.Command("nproc").Output(); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(out))); err == nil {
			nproc = n
		}
	}
	cpu = "unknown CPU"
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	return nproc, cpu
}

// markdown renders the table with its header lines.
func markdown(h header, rows []*row) string {
	var b strings.Builder
	mode := fmt.Sprintf("median of %d alternating runs (Klassik, baseline, Klassik, ...)", h.runs)
	if h.quick {
		mode = "--quick: one small run, a smoke test, not a measurement"
	}
	fmt.Fprintf(&b, "klassik-bench, %s UTC, %d CPUs (nproc), %s, %s\n", h.date.UTC().Format("2006-01-02 15:04"), h.nproc, h.cpu, h.goVer)
	fmt.Fprintf(&b, "%s; %s; %s.\n\n", h.cluster, mode, h.settings)
	b.WriteString("| Figure | Klassik | Baseline | Ratio | Target (issue 13) |\n")
	b.WriteString("|---|---:|---:|---:|---|\n")
	for _, r := range rows {
		k, base, ratio := "n/a", "n/a", "—"
		if len(r.k) > 0 {
			k = format(median(r.k)) + " " + r.unit
		}
		if len(r.b) > 0 {
			base = format(median(r.b)) + " " + r.unit
		}
		if x, ok := r.ratio(); ok {
			ratio = fmt.Sprintf("%.2f×", x)
		}
		if r.note != "" && len(r.k) == 0 {
			k = r.note
		}
		fmt.Fprintf(&b, "| %s | %s | %s (%s) | %s | %s |\n", r.figure, k, base, r.baseline, ratio, r.target)
	}
	return b.String()
}
