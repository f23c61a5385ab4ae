package e2e_test

import (
	"os"
	"testing"

	"github.com/klassik/klassik/broker/testcluster"
)

func TestMain(m *testing.M) { os.Exit(testcluster.Main(m)) }
