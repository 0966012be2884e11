package deploy

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/lockcheck/lockcheck/matrix"
	"github.com/rhysd/actionlint"
)

// The example GitHub Actions workflow.

var (
	exprRE   = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)
	pinnedRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+@v[0-9]+$`)
	groupsRE = regexp.MustCompile(`(?m)^groups=\(([^)]*)\)`)
)

// checkWorkflow lints the workflow with actionlint (with shellcheck for
// its scripts when shellcheck is on PATH) and asserts the shape of a
// sharded matrix: shard 1..N over a job matrix, each uploading its store,
// and a merge that runs whatever the shards did and fails on a miss.
func checkWorkflow(name string, src []byte, cli *checkCLI) []error {
	var errs []error
	fail := func(format string, a ...any) { errs = append(errs, fmt.Errorf(name+": "+format, a...)) }
	shellcheck, _ := exec.LookPath("shellcheck")
	linter, err := actionlint.NewLinter(io.Discard, &actionlint.LinterOptions{Shellcheck: shellcheck})
	if err != nil {
		return []error{err}
	}
	// A name that is not a file here: no project, so no .github config.
	lerrs, err := linter.Lint(path.Base(name), src, nil)
	if err != nil {
		return []error{err}
	}
	for _, e := range lerrs {
		fail("actionlint: line %d: %s [%s]", e.Line, e.Message, e.Kind)
	}
	w, perrs := actionlint.Parse(src)
	if w == nil || len(perrs) > 0 {
		return errs // actionlint said why
	}
	events := map[string]bool{}
	for _, e := range w.On {
		events[e.EventName()] = true
	}
	if !events["schedule"] || !events["workflow_dispatch"] {
		fail("on: want schedule and workflow_dispatch, have %v", keys(events))
	}
	groups := depsGroups()
	var shardJob, mergeJob *actionlint.Job
	var shardValues []string
	for _, id := range sortedKeys(w.Jobs) {
		j := w.Jobs[id]
		if j.Strategy != nil && j.Strategy.Matrix != nil && j.Strategy.Matrix.Rows["shard"] != nil {
			shardJob = j
			for _, v := range j.Strategy.Matrix.Rows["shard"].Values {
				s, ok := v.(*actionlint.RawYAMLString)
				if !ok {
					fail("job %s: shard %s is not a number", id, v)
					continue
				}
				shardValues = append(shardValues, s.Value)
			}
			if ff := j.Strategy.FailFast; ff == nil || ff.Value {
				fail("job %s: fail-fast is not false: one shard's failure would cancel the others, whose runs the merge then misses", id)
			}
		}
		for _, s := range j.Steps {
			if a, ok := s.Exec.(*actionlint.ExecAction); ok && a.Uses != nil && !pinnedRE.MatchString(a.Uses.Value) {
				fail("job %s: %s is not pinned to a major version (owner/name@vN)", id, a.Uses.Value)
			}
		}
	}
	if shardJob == nil {
		return append(errs, fmt.Errorf("%s: no job has a matrix of shards", name))
	}
	n := len(shardValues)
	for i, v := range shardValues {
		if v != strconv.Itoa(i+1) {
			fail("job %s: the shards are %v, want 1 to %d in order", shardJob.ID.Value, shardValues, n)
			break
		}
	}
	for _, id := range sortedKeys(w.Jobs) {
		for _, needed := range w.Jobs[id].Needs {
			if needed.Value == shardJob.ID.Value {
				mergeJob = w.Jobs[id]
			}
		}
	}
	// The shard job: each shard runs check matrix --shard I/N and uploads
	// its store.
	var store string
	for i, v := range shardValues {
		vars := map[string]string{"matrix.shard": v, "strategy.job-total": strconv.Itoa(n)}
		sharded := false
		invs := workflowCommands(shardJob, vars, groups, fail)
		for k := range invs {
			inv := &invs[k]
			if err := cli.check(inv); err != nil {
				errs = append(errs, err)
				continue
			}
			if inv.command() != "matrix" {
				continue
			}
			shard, ok := inv.flag("shard")
			if !ok {
				continue
			}
			sharded = true
			got, err := matrix.ParseShard(shard)
			if err != nil || got.I != i+1 || got.N != n {
				fail("shard %s runs --shard %s, want %d/%d", v, shard, i+1, n)
			}
			store, _ = inv.flag("store")
		}
		if !sharded {
			fail("shard %s runs no check matrix --shard", v)
		}
	}
	if up := findAction(shardJob, "actions/upload-artifact"); up == nil {
		fail("job %s uploads no artifact", shardJob.ID.Value)
	} else {
		if p := input(up, "path"); strings.TrimSuffix(p, "/") != store {
			fail("job %s uploads %q, not its shard's store %q", shardJob.ID.Value, p, store)
		}
		if !isAlways(up.If) {
			fail("job %s uploads its store only if %s: a failed shard's runs would not reach the merge", shardJob.ID.Value, exprOf(up.If))
		}
	}
	// The merge job: always, downloads every shard, merges, uploads JUnit.
	if mergeJob == nil {
		return append(errs, fmt.Errorf("%s: no job needs %s", name, shardJob.ID.Value))
	}
	if !isAlways(mergeJob.If) {
		fail("the merge job runs only if %s: when a shard fails, nothing would report its runs", exprOf(mergeJob.If))
	}
	down := findAction(mergeJob, "actions/download-artifact")
	if down == nil {
		return append(errs, fmt.Errorf("%s: the merge job downloads no artifact", name))
	}
	dir := strings.TrimSuffix(input(down, "path"), "/")
	merged := false
	invs := workflowCommands(mergeJob, nil, groups, fail)
	for i := range invs {
		inv := &invs[i]
		if err := cli.check(inv); err != nil {
			errs = append(errs, err)
			continue
		}
		if inv.command() != "matrix merge" {
			continue
		}
		merged = true
		for _, a := range inv.args {
			if !strings.HasPrefix(a, dir+"/") {
				fail("merge of %s: not below the artifacts' directory %s", a, dir)
			}
		}
		junit, ok := inv.flag("junit")
		up := findAction(mergeJob, "actions/upload-artifact")
		if !ok || up == nil || !strings.Contains(input(up, "path"), junit) {
			fail("the merge job does not upload its JUnit (--junit %q)", junit)
		}
	}
	if !merged {
		fail("the merge job runs no check matrix merge")
	}
	for _, s := range mergeJob.Steps {
		if s.ContinueOnError != nil && s.ContinueOnError.Value {
			fail("the merge job has a continue-on-error step: a miss must fail the workflow")
		}
	}
	return errs
}

// workflowCommands are the check commands of a job's run steps, with the
// ${{ }} expressions of vars put in (any other becomes EXPR); a
// scripts/deps.sh command's groups are checked on the way.
func workflowCommands(j *actionlint.Job, vars map[string]string, groups map[string]bool, fail func(string, ...any)) []invocation {
	var invs []invocation
	for _, s := range j.Steps {
		r, ok := s.Exec.(*actionlint.ExecRun)
		if !ok || r.Run == nil {
			continue
		}
		script := exprRE.ReplaceAllStringFunc(r.Run.Value, func(e string) string {
			if v, ok := vars[exprRE.FindStringSubmatch(e)[1]]; ok {
				return v
			}
			return "EXPR"
		})
		for _, words := range shellCommands(script) {
			if len(words) > 1 && words[0] == "bash" && words[1] == "scripts/deps.sh" {
				for _, g := range words[2:] {
					if !groups[g] {
						fail("job %s: scripts/deps.sh has no deps group %s (groups: %v)", j.ID.Value, g, keys(groups))
					}
				}
			}
		}
		invs = append(invs, scriptCommands("job "+j.ID.Value, script)...)
	}
	return invs
}

// depsGroups are the groups scripts/deps.sh installs.
func depsGroups() map[string]bool {
	b, _ := os.ReadFile("../scripts/deps.sh")
	groups := map[string]bool{}
	if m := groupsRE.FindSubmatch(b); m != nil {
		for _, g := range strings.Fields(string(m[1])) {
			groups[g] = true
		}
	}
	return groups
}

// findAction is the first step of j that uses the action repo (any version).
func findAction(j *actionlint.Job, repo string) *actionlint.Step {
	for _, s := range j.Steps {
		if a, ok := s.Exec.(*actionlint.ExecAction); ok && a.Uses != nil && strings.HasPrefix(a.Uses.Value, repo+"@") {
			return s
		}
	}
	return nil
}

// input is the with: input name of an action step.
func input(s *actionlint.Step, name string) string {
	if in := s.Exec.(*actionlint.ExecAction).Inputs[name]; in != nil && in.Value != nil {
		return in.Value.Value
	}
	return ""
}

// isAlways reports whether an if: is always().
func isAlways(s *actionlint.String) bool { return exprOf(s) == "always()" }

// exprOf is an if: condition without its ${{ }}.
func exprOf(s *actionlint.String) string {
	if s == nil {
		return "(no if:, i.e. success())"
	}
	v := strings.TrimSpace(s.Value)
	if m := exprRE.FindStringSubmatch(v); m != nil && m[0] == v {
		return m[1]
	}
	return v
}
