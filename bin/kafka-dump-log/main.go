// Command kafka-dump-log is Kafka's DumpLogSegments tool
// (bin/kafka-dump-log.sh): it prints the batches and records of .log
// segments, the entries of .index, .timeindex and .txnindex files and the
// producer entries of .snapshot files, in Kafka 3.4's output format.
//
//	kafka-dump-log.sh --files 00000000000000000000.log[,more...] [--print-data-log]
//	    [--deep-iteration] [--index-sanity-check] [--verify-index-only]
//	    [--offsets-decoder] [--skip-record-metadata] [--max-bytes N] [--max-message-size N]
//
// It runs single-threaded; all the work is in dump.go's run.
package main

import "os"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}
