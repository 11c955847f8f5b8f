//go:build race

package conformance

// raceEnabled says the race detector is on: the runtime-cost step of
// TestCELValidationRules, which makes the server run a rule up to
// kube-apiserver's per-call cost limit (about half a second of CEL), takes
// over 30 seconds under it, so it is left to the runs without -race and to
// internal/cel's TestValidateCost (the same limit scaled down).
const raceEnabled = true
