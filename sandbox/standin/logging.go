package main

// POST logging: Envoy's /logging admin endpoint, which the stand-in answers as Envoy does (see
// envoy source/server/admin/logs_handler.cc) and remembers per pod, so that a replay's Envoy
// debug lines reach a pod's log only when the pod's logger was set to debug (exec.go):
//
//	logging?<logger>=<level>                      one logger
//	logging?paths=<logger>:<level>,<logger>:...   several loggers
//	logging?level=<level>                         every logger
//
// Exactly one query parameter is accepted, as in Envoy: `logging?connection=debug&pool=debug`
// is a 400 ("invalid number of parameters"), which `pilot-agent request` turns into an error. The
// answer lists the active loggers. The levels start where Istio starts its proxies
// (--proxyLogLevel warning, --proxyComponentLogLevel misc:error) and are kept in the pod's
// working directory (<sandbox>/pods/<namespace>/<pod>/envoy-log-levels.json), so they live as
// long as the pod.

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
)

// envoyLoggers are Envoy's component loggers (ALL_LOGGER_IDS of source/common/common/logger.h),
// in its order.
var envoyLoggers = []string{
	"admin", "alternate_protocols_cache", "aws", "assert", "backtrace", "basic_auth", "cache_filter",
	"client", "config", "connection", "conn_handler", "decompression", "dns", "dubbo", "envoy_bug",
	"ext_authz", "ext_proc", "rocketmq", "file", "filter", "forward_proxy", "geolocation", "grpc",
	"happy_eyeballs", "hc", "health_checker", "http", "http2", "hystrix", "init", "io", "jwt", "kafka",
	"key_value_store", "lua", "main", "matcher", "misc", "mongo", "multi_connection", "oauth2", "quic",
	"quic_stream", "pool", "rate_limit_quota", "rbac", "rds", "redis", "router", "runtime", "stats",
	"secret", "tap", "testing", "thrift", "tracing", "upstream", "udp", "wasm", "websocket", "golang",
}

// envoyLevels are spdlog's level names, most verbose first.
var envoyLevels = []string{"trace", "debug", "info", "warning", "error", "critical", "off"}

// defaultLevel is a logger's level before any POST logging: Istio's defaults.
func defaultLevel(logger string) string {
	if logger == "misc" {
		return "error"
	}
	return "warning"
}

// levelRank is the level's position in envoyLevels, -1 for an unknown name.
func levelRank(level string) int {
	for i, l := range envoyLevels {
		if l == level {
			return i
		}
	}
	return -1
}

// httpError is an admin answer with a status code pilot-agent reports as a failure (> 399, not 404).
type httpError struct {
	code int
	body string
}

func (e *httpError) Error() string {
	return fmt.Sprintf("received unsuccessful status code %d: %s", e.code, e.body)
}

// logLevelsPath is where a pod's logger levels are kept.
func logLevelsPath(sandboxDir, namespace, pod string) string {
	return filepath.Join(sandboxDir, "pods", namespace, pod, "envoy-log-levels.json")
}

// postLogging answers POST logging?… for the pod of env, changing its levels.
func postLogging(env environment, sandboxDir string, query url.Values) (string, error) {
	if sandboxDir == "" {
		return "", errors.New("LABRUN_SANDBOX_DIR is not set: nowhere to keep the pod's log levels")
	}
	path := logLevelsPath(sandboxDir, env.PodNamespace, env.PodName)
	var body strings.Builder
	var failed error
	err := withLevels(path, true, func(levels map[string]string) {
		if len(query) == 0 {
			return
		}
		if err := changeLevels(levels, query); err != nil {
			failed = err
			body.WriteString("error: " + err.Error() + "\n\n")
			body.WriteString("usage: /logging?<name>=<level> (change single level)\n")
			body.WriteString("usage: /logging?paths=name1:level1,name2:level2,... (change multiple levels)\n")
			body.WriteString("usage: /logging?level=<level> (change all levels)\n")
			body.WriteString("levels: " + strings.Join(envoyLevels, " ") + " \n")
		}
	})
	if err != nil {
		return "", err
	}
	levels, err := readLevels(path)
	if err != nil {
		return "", err
	}
	body.WriteString("active loggers:\n")
	for _, l := range envoyLoggers {
		fmt.Fprintf(&body, "  %s: %s\n", l, levels(l))
	}
	body.WriteString("\n")
	if failed != nil {
		return "", &httpError{code: 400, body: body.String()}
	}
	return body.String(), nil
}

// changeLevels applies one /logging query to levels, as Envoy's LogsHandler::changeLogLevel: all
// or nothing.
func changeLevels(levels map[string]string, query url.Values) error {
	if len(query) != 1 {
		return errors.New("invalid number of parameters")
	}
	var key, value string
	for k, v := range query {
		key = k
		if len(v) > 0 {
			value = v[0]
		}
	}
	if key == "level" {
		if levelRank(value) < 0 {
			return fmt.Errorf("unknown log level %q", value)
		}
		for _, l := range envoyLoggers {
			levels[l] = value
		}
		return nil
	}
	changes := map[string]string{}
	if key == "paths" {
		for _, pair := range strings.Split(value, ",") {
			if pair = strings.TrimSpace(pair); pair == "" {
				continue
			}
			name, level, _ := strings.Cut(pair, ":")
			if name == "" || level == "" {
				return errors.New("empty logger name or empty logger level")
			}
			changes[name] = level
		}
	} else {
		changes[key] = value
	}
	for name, level := range changes {
		if levelRank(level) < 0 {
			return fmt.Errorf("unknown log level %q", level)
		}
		known := false
		for _, l := range envoyLoggers {
			known = known || l == name
		}
		if !known {
			return errors.New("unknown logger name")
		}
	}
	for name, level := range changes {
		levels[name] = level
	}
	return nil
}

// withLevels runs change on the levels kept at path (only the changed ones are stored), under a
// file lock, and writes them back when write is set.
func withLevels(path string, write bool, change func(map[string]string)) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	levels := map[string]string{}
	if b, _ := os.ReadFile(path); len(b) > 0 {
		if err := json.Unmarshal(b, &levels); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	change(levels)
	if !write {
		return nil
	}
	b, _ := json.Marshal(levels)
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err = f.WriteAt(b, 0)
	return err
}

// readLevels returns the level of each logger of the pod whose levels are kept at path.
func readLevels(path string) (func(logger string) string, error) {
	levels := map[string]string{}
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	if len(b) > 0 {
		if err := json.Unmarshal(b, &levels); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	return func(logger string) string {
		if l, ok := levels[logger]; ok {
			return l
		}
		return defaultLevel(logger)
	}, nil
}

// envoyLogLine matches a line of Envoy's own log as Istio's proxies write it:
// "<time>\t<level>\tenvoy <logger> <source>\t<message>…".
var envoyLogLine = regexp.MustCompile(`^\S+\t(trace|debug|info|warning|error|critical)\tenvoy (\w+)[\t ]`)

// keepLogLine reports whether a pod whose loggers are at levels writes line: Envoy log lines only
// at or above their logger's level, every other line (access logs, pilot-agent's) always.
func keepLogLine(levels func(string) string, line string) bool {
	m := envoyLogLine.FindStringSubmatch(line)
	if m == nil {
		return true
	}
	return levelRank(m[1]) >= levelRank(levels(m[2]))
}
