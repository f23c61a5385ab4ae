// Command kafka-acls adds, removes and lists ACLs with the options and
// output of Kafka 2.8's kafka-acls.sh (AclCommand): directly in ZooKeeper
// with --authorizer-properties zookeeper.connect=... (as AclCommand runs
// the AclAuthorizer in process), or through the brokers' CreateAcls,
// DeleteAcls and DescribeAcls APIs with --bootstrap-server [--command-config
// FILE]. Run it through bin/kafka-acls.sh.
package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/klassik/klassik/bin/kafka-leader-election/admintool"
	"github.com/klassik/klassik/broker/security"
)

func main() {
	admintool.Main(func(ctx context.Context) int { return run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr) })
}

// backend is AclCommandService's store: the authorizer on ZooKeeper or the
// admin API.
type backend interface {
	// create adds bindings; it returns an error that ends the command
	// (admin mode) and prints per-binding failures it survives (ZooKeeper
	// mode).
	create(ctx context.Context, out io.Writer, bindings []security.ACLBinding) error
	remove(ctx context.Context, out io.Writer, filters []security.ACLFilter) error
	describe(ctx context.Context, filter security.ACLFilter) ([]security.ACLBinding, error)
	close()
}

// run executes one command and returns the exit status: option mistakes
// print the message and the option table on stderr (status 1), failures
// "Error while executing ACL command: <message>" on stdout (status 1).
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	o, special, err := parseOptions(args)
	if code, done := admintool.CommandLine(special, err, admintool.UsageAndDie, helpText, specs, stdout, stderr); done {
		return code
	}
	if err == nil {
		err = execute(ctx, o, bufio.NewReader(stdin), stdout)
	}
	if err == nil {
		return 0
	}
	var ue *admintool.UsageError
	if errors.As(err, &ue) {
		fmt.Fprintln(stderr, ue.Msg)
		fmt.Fprint(stderr, admintool.Usage(specs))
		return 1
	}
	fmt.Fprintf(stdout, "Error while executing ACL command: %s\n", err)
	return 1
}

func execute(ctx context.Context, o *aclOptions, in *bufio.Reader, out io.Writer) error {
	// The resources and ACLs of the command are checked before anything
	// is contacted.
	var toAdd, toRemove []filterACLs
	var err error
	switch o.action {
	case actionAdd:
		toAdd, err = o.resourceToACLs()
	case actionRemove:
		toRemove, err = o.filterToACLs()
	}
	if err != nil {
		return err
	}
	listFilters, err := o.resourceFilters(false)
	if err != nil {
		return err
	}
	var listPrincipals []string
	for _, p := range o.o.Values("principal") {
		if strings.TrimSpace(p) == "" {
			continue
		}
		ps, err := parsePrincipal(p)
		if err != nil {
			return err
		}
		listPrincipals = appendNew(listPrincipals, ps)
	}
	var be backend
	if o.bootstrap != "" {
		be, err = newAdminBackend(o)
	} else {
		be, err = newZKBackend(o)
	}
	if err != nil {
		return err
	}
	defer be.close()

	switch o.action {
	case actionAdd:
		for _, fa := range toAdd {
			p := security.ResourcePattern{ResourceType: fa.filter.ResourceType, Name: *fa.filter.Name, PatternType: fa.filter.PatternType}
			fmt.Fprintf(out, "Adding ACLs for resource `%s`: \n %s \n\n", p, joinEntries(fa.entries))
			bindings := make([]security.ACLBinding, len(fa.entries))
			for i, e := range fa.entries {
				bindings[i] = security.ACLBinding{Pattern: p, Entry: e}
			}
			if err := be.create(ctx, out, bindings); err != nil {
				return err
			}
		}
	case actionRemove:
		for _, fa := range toRemove {
			var filters []security.ACLFilter
			var question string
			if len(fa.entries) == 0 {
				question = fmt.Sprintf("Are you sure you want to delete all ACLs for resource filter `%s`? (y/n)", fa.filter)
				filters = []security.ACLFilter{{Pattern: fa.filter, Entry: security.AnyACL.Entry}}
			} else {
				question = fmt.Sprintf("Are you sure you want to remove ACLs: \n %s \n from resource filter `%s`? (y/n)", joinEntries(fa.entries), fa.filter)
				for _, e := range fa.entries {
					filters = append(filters, security.ACLFilter{Pattern: fa.filter, Entry: e.ToFilter()})
				}
			}
			if !o.force {
				fmt.Fprintln(out, question)
				line, _ := in.ReadString('\n')
				if !strings.EqualFold(strings.TrimRight(line, "\r\n"), "y") {
					continue
				}
			}
			if err := be.remove(ctx, out, filters); err != nil {
				return err
			}
		}
	}
	return list(ctx, be, out, listFilters, listPrincipals)
}

func parsePrincipal(p string) (string, error) {
	p = strings.TrimSpace(p)
	if _, _, ok := security.ParsePrincipal(p); !ok {
		return "", &commandError{msg: "expected a string in format principalType:principalName but got " + p}
	}
	return p, nil
}

// list is listAcls: the ACLs of the command's resources (all ACLs when it
// names none), per resource, optionally only those of --principal.
func list(ctx context.Context, be backend, out io.Writer, filters []security.PatternFilter, principals []string) error {
	var bindings []security.ACLBinding
	if len(filters) == 0 {
		bs, err := be.describe(ctx, security.AnyACL)
		if err != nil {
			return err
		}
		bindings = bs
	}
	for _, f := range filters {
		bs, err := be.describe(ctx, security.ACLFilter{Pattern: f, Entry: security.AnyACL.Entry})
		if err != nil {
			return err
		}
		for _, b := range bs {
			if !slices.Contains(bindings, b) {
				bindings = append(bindings, b)
			}
		}
	}
	byResource := map[security.ResourcePattern][]security.AccessControlEntry{}
	var resources []security.ResourcePattern
	for _, b := range bindings {
		if _, ok := byResource[b.Pattern]; !ok {
			resources = append(resources, b.Pattern)
		}
		byResource[b.Pattern] = append(byResource[b.Pattern], b.Entry)
	}
	slices.SortFunc(resources, func(a, b security.ResourcePattern) int {
		if a.ResourceType != b.ResourceType {
			return int(a.ResourceType) - int(b.ResourceType)
		}
		if a.PatternType != b.PatternType {
			return int(a.PatternType) - int(b.PatternType)
		}
		return strings.Compare(a.Name, b.Name)
	})
	print := func(only string) {
		for _, r := range resources {
			var es []security.AccessControlEntry
			for _, e := range byResource[r] {
				if only == "" || e.Principal == only {
					es = append(es, e)
				}
			}
			if len(es) == 0 {
				continue
			}
			fmt.Fprintf(out, "Current ACLs for resource `%s`: \n %s \n\n", r, joinEntries(es))
		}
	}
	if len(principals) == 0 {
		print("")
		return nil
	}
	for _, p := range principals {
		fmt.Fprintf(out, "ACLs for principal `%s`\n", p)
		print(p)
	}
	return nil
}

// joinEntries is acls.map("\t" + _).mkString(Newline).
func joinEntries(es []security.AccessControlEntry) string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = "\t" + e.String()
	}
	return strings.Join(parts, "\n")
}

// sortEntries orders entries for listing; Kafka's come out of a hash set.
func sortEntries(es []security.AccessControlEntry) {
	slices.SortFunc(es, func(a, b security.AccessControlEntry) int {
		if c := strings.Compare(a.Principal, b.Principal); c != 0 {
			return c
		}
		if c := strings.Compare(a.Host, b.Host); c != 0 {
			return c
		}
		if a.Operation != b.Operation {
			return int(a.Operation) - int(b.Operation)
		}
		return int(a.Permission) - int(b.Permission)
	})
}
