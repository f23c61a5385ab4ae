package loglevels

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// TestHierarchy: a logger without a level takes its nearest existing
// ancestor's, else root's (Log4jController.resolveLevel); DELETE restores
// inheritance; records below a component's level are dropped.
func TestHierarchy(t *testing.T) {
	var buf bytes.Buffer
	reg := NewRegistry(LevelInfo)
	log := slog.New(NewHandler(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: LevelAll}), reg))
	ctrl := log.With("component", "controller")
	apis := log.With("component", "kafka-apis")
	other := log.With("component", "web")

	ctrl.Debug("hidden")
	if !reg.SetLevel("kafka.controller", "DEBUG") {
		t.Fatal("kafka.controller should exist")
	}
	ctrl.Debug("ctrl-debug")
	apis.Debug("apis-hidden")
	if got := reg.Loggers(); got["kafka.controller.KafkaController"] != "DEBUG" || got["kafka.server.KafkaApis"] != "INFO" ||
		got["klassik.web"] != "INFO" || got[RootLogger] != "INFO" {
		t.Fatalf("loggers: %v", got)
	}
	reg.SetLevel(RootLogger, "WARN")
	other.Info("other-hidden")
	other.Warn("other-warn")
	reg.SetLevel("kafka.controller.KafkaController", "ERROR")
	ctrl.Warn("ctrl-hidden")
	reg.UnsetLevel("kafka.controller.KafkaController")
	ctrl.Debug("ctrl-debug-again")
	reg.UnsetLevel("kafka.controller")
	ctrl.Info("ctrl-hidden-2")
	if !reg.UnsetLevel(RootLogger) || reg.Loggers()[RootLogger] != "WARN" {
		t.Fatal("root keeps its level")
	}
	if reg.SetLevel("no.such.logger", "INFO") || reg.Exists("no.such.logger") {
		t.Fatal("unknown logger")
	}
	out := buf.String()
	for _, want := range []string{"ctrl-debug", "other-warn", "ctrl-debug-again"} {
		if !strings.Contains(out, "msg="+want+" ") && !strings.Contains(out, "msg="+want+"\n") {
			t.Errorf("missing %s in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "hidden") {
		t.Errorf("a record below its logger's level passed:\n%s", out)
	}
}

// TestValidLevels: Kafka's message lists the settable levels in its
// HashSet's order; only those six names, so spelled, are settable.
func TestValidLevels(t *testing.T) {
	if got := ValidLevels(); got != "TRACE, ERROR, INFO, FATAL, DEBUG, WARN" {
		t.Fatal(got)
	}
	for _, s := range []string{"OFF", "ALL", "debug", "", "Info"} {
		if IsValidLevel(s) {
			t.Errorf("%q settable", s)
		}
	}
	if LevelName(LevelTrace) != "TRACE" || LevelName(LevelFatal) != "FATAL" || LevelName(LevelOff) != "OFF" {
		t.Fatal("names")
	}
}
