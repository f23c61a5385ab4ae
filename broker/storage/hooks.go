package storage

// Seam for the log cleaner (cleaner.go), written by the record engineer.
// It is optional; the engine works without it.

// LogCleaner is what the LogManager runs when ManagerConfig.CleanerEnable is
// set (Kafka's LogCleaner). cleaner.go provides it by setting
// NewLogCleaner from an init function; Startup starts it and Shutdown stops
// it before the logs are closed. See doc.go for what a cleaner may use.
type LogCleaner interface {
	Startup()
	Shutdown() error
}

// NewLogCleaner builds the cleaner for a LogManager; nil means "no cleaner
// implementation linked in" and CleanerEnable only logs that fact.
var NewLogCleaner func(m *LogManager) LogCleaner
