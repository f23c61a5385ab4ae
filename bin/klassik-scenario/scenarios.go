package main

// scenario is one replay: its name on the command line, a one-line
// description for list, and the steps. run returns what held, printed in
// the final OK line.
type scenario struct {
	name string
	desc string
	run  func(s *Stage) string
}

// scenarios is the table list prints, in teaching order.
var scenarios = []scenario{
	{"controller-failover", "kill -9 the controller: /controller and /controller_epoch move, the old epoch is fenced", controllerFailover},
}

func lookup(name string) (scenario, bool) {
	for _, sc := range scenarios {
		if sc.name == name {
			return sc, true
		}
	}
	return scenario{}, false
}
