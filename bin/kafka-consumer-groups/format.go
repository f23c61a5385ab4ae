package main

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// missing is Kafka's MISSING_COLUMN_VALUE.
const missing = "-"

// assignmentRow is Kafka's PartitionAssignmentState: one line of
// --describe --offsets. Nil pointers print as "-".
type assignmentRow struct {
	group                      string
	topic                      *string
	partition                  *int32
	offset, logEndOffset, lag  *int64
	consumerID, host, clientID *string
}

// memberRow is Kafka's MemberAssignmentState (--describe --members).
type memberRow struct {
	group, consumerID, host, clientID, instanceID string
	numPartitions                                 int
	assignment                                    map[string][]int32 // only with --verbose
}

// stateRow is Kafka's GroupState (--describe --state).
type stateRow struct {
	group, coordinator, strategy, state string
	members                             int
}

func str(s string) *string { return &s }
func i64(n int64) *int64   { return &n }
func i32(n int32) *int32   { return &n }

func orMissing[T any](p *T) string {
	if p == nil {
		return missing
	}
	return fmt.Sprint(*p)
}

// lag is Kafka's getLag: only for a real committed offset and a known log
// end offset.
func lag(offset, logEnd *int64) *int64 {
	if offset == nil || *offset == -1 || logEnd == nil {
		return nil
	}
	return i64(*logEnd - *offset)
}

// pad is Java's %-Ns: left-justified, never truncated.
func pad(s string, n int) string {
	if len(s) >= n {
		return s
	}
	return s + strings.Repeat(" ", n-len(s))
}

// groupStatus writes the state messages of shouldPrintMemberState and
// reports whether a table follows. rows < 0 means the group could not be
// described at all.
func groupStatus(stdout, stderr io.Writer, group, state string, rows int) bool {
	if rows < 0 {
		printError(stdout, fmt.Sprintf("The consumer group '%s' does not exist.", group))
		return false
	}
	switch state {
	case "Dead":
		printError(stdout, fmt.Sprintf("Consumer group '%s' does not exist.", group))
	case "Empty":
		fmt.Fprintf(stderr, "\nConsumer group '%s' has no active members.\n", group)
	case "PreparingRebalance", "CompletingRebalance":
		fmt.Fprintf(stderr, "\nWarning: Consumer group '%s' is rebalancing.\n", group)
	case "Stable":
	default:
		printError(stdout, fmt.Sprintf("Executing consumer group command failed due to Expected a valid consumer group state, but found '%s'.", state))
		return false
	}
	return state != "Dead" && rows > 0
}

// printError is ConsumerGroupCommand.printError (stdout, leading blank line).
func printError(w io.Writer, msg string) { fmt.Fprintf(w, "\nError: %s\n", msg) }

// printOffsets writes the --describe (--offsets) table of one group.
func printOffsets(w io.Writer, rows []assignmentRow) {
	g, t, c, h := 15, 15, 15, 15
	for _, r := range rows {
		g = max(g, len(r.group))
		t = max(t, len(orMissing(r.topic)))
		c = max(c, len(orMissing(r.consumerID)))
		h = max(h, len(orMissing(r.host)))
	}
	line := func(cols ...string) string {
		return pad(cols[0], g) + " " + pad(cols[1], t) + " " + pad(cols[2], 10) + " " + pad(cols[3], 15) + " " +
			pad(cols[4], 15) + " " + pad(cols[5], 15) + " " + pad(cols[6], c) + " " + pad(cols[7], h) + " " + cols[8]
	}
	fmt.Fprintf(w, "\n%s\n", line("GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID"))
	for _, r := range rows {
		fmt.Fprintln(w, line(r.group, orMissing(r.topic), orMissing(r.partition), orMissing(r.offset), orMissing(r.logEndOffset),
			orMissing(r.lag), orMissing(r.consumerID), orMissing(r.host), orMissing(r.clientID)))
	}
}

// printMembers writes the --describe --members table of one group.
func printMembers(w io.Writer, rows []memberRow, verbose bool) {
	g, c, inst, h, cl, withInst := 15, 15, 17, 15, 15, false
	for _, r := range rows {
		g, c, inst = max(g, len(r.group)), max(c, len(r.consumerID)), max(inst, len(r.instanceID))
		h, cl = max(h, len(r.host)), max(cl, len(r.clientID))
		withInst = withInst || r.instanceID != ""
	}
	line := func(group, id, instance, host, client, n string) string {
		s := pad(group, g) + " " + pad(id, c) + " "
		if withInst {
			s += pad(instance, inst) + " "
		}
		return s + pad(host, h) + " " + pad(client, cl) + " " + pad(n, 15) + " "
	}
	fmt.Fprint(w, "\n"+line("GROUP", "CONSUMER-ID", "GROUP-INSTANCE-ID", "HOST", "CLIENT-ID", "#PARTITIONS"))
	if verbose {
		fmt.Fprint(w, "ASSIGNMENT")
	}
	fmt.Fprintln(w)
	for _, r := range rows {
		fmt.Fprint(w, line(r.group, r.consumerID, r.instanceID, r.host, r.clientID, strconv.Itoa(r.numPartitions)))
		if verbose {
			fmt.Fprint(w, formatAssignment(r.assignment))
		}
		fmt.Fprintln(w)
	}
}

// formatAssignment is "t1(0,1), t2(3)" with topics and partitions sorted,
// or "-" for nothing.
func formatAssignment(a map[string][]int32) string {
	if len(a) == 0 {
		return missing
	}
	var parts []string
	for t, ps := range a {
		ps = append([]int32(nil), ps...)
		sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
		ss := make([]string, len(ps))
		for i, p := range ps {
			ss[i] = strconv.Itoa(int(p))
		}
		parts = append(parts, t+"("+strings.Join(ss, ",")+")")
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// printState writes the --describe --state table of one group.
func printState(w io.Writer, s stateRow) {
	cw := max(25, len(s.coordinator))
	line := func(a, b, c, d, e string) string {
		return pad(a, cw) + " " + pad(b, 25) + " " + pad(c, 20) + " " + pad(d, 15) + " " + e
	}
	fmt.Fprintf(w, "\n%s\n%s\n", line("GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS"),
		line(s.group, s.coordinator, s.strategy, s.state, strconv.Itoa(s.members)))
}

// printGroupStates writes --list --state.
func printGroupStates(w io.Writer, groups [][2]string) {
	g := 15
	for _, e := range groups {
		g = max(g, len(e[0]))
	}
	fmt.Fprintf(w, "%s %s\n", pad("GROUP", g), "STATE")
	for _, e := range groups {
		fmt.Fprintf(w, "%s %s\n", pad(e[0], g), e[1])
	}
}

// resetRow is one line of the --reset-offsets plan.
type resetRow struct {
	group, topic string
	partition    int32
	offset       int64
}

// printOffsetsToReset writes the reset plan (dry run or executed).
func printOffsetsToReset(w io.Writer, rows []resetRow) {
	if len(rows) > 0 {
		fmt.Fprintf(w, "\n%s %s %s %s\n", pad("GROUP", 30), pad("TOPIC", 30), pad("PARTITION", 10), pad("NEW-OFFSET", 15))
	}
	for _, r := range rows {
		fmt.Fprintf(w, "%s %s %s %s\n", pad(r.group, 30), pad(r.topic, 30), pad(strconv.Itoa(int(r.partition)), 10), pad(strconv.FormatInt(r.offset, 10), 15))
	}
}

// printZKAssignment is the classic (ZooKeeper) consumer's describe table,
// which has no HOST and CLIENT-ID columns.
func printZKAssignment(w io.Writer, rows []assignmentRow) {
	fmt.Fprintf(w, "\n%s %s %s %s %s %s\n", pad("TOPIC", 30), pad("PARTITION", 10), pad("CURRENT-OFFSET", 15), pad("LOG-END-OFFSET", 15), pad("LAG", 10), pad("CONSUMER-ID", 50))
	for _, r := range rows {
		fmt.Fprintf(w, "%s %s %s %s %s %s\n", pad(orMissing(r.topic), 30), pad(orMissing(r.partition), 10), pad(orMissing(r.offset), 15),
			pad(orMissing(r.logEndOffset), 15), pad(orMissing(r.lag), 10), pad(orMissing(r.consumerID), 50))
	}
}
