package deploy

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/lockcheck/lockcheck/matrix"
	"github.com/rhysd/actionlint"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// workflowFile is the example GitHub Actions workflow, relative to deploy/.
const workflowFile = "github-actions/lockcheck-nightly.yml"

// samples are the values the tests give the templates' ${VAR}s, as a user
// would: the substituted file must be what kubectl apply gets.
func samples() map[string]string {
	return map[string]string{
		"MATRIX":   "20261126t220000",
		"SHARDS":   "4",
		"SEEDS":    "1..3",
		"DEADLINE": "10800",
		"IMAGE":    "registry.example/lockcheck/check:dev",
		// cell-job.yaml's
		"N":    "001",
		"CELL": "redis-set-px-pause",
		"SEED": "1",
		"ARGS": `"--lock", "redis-set-px", "--nemesis", "pause", "--time", "20s"`,
	}
}

// TestDeployFiles: every manifest and the workflow pass every check.
func TestDeployFiles(t *testing.T) {
	files := readDeployFiles(t)
	for _, name := range []string{"k8s/matrix-job.yaml", "k8s/merge-job.yaml", "k8s/store.yaml", "k8s/cell-job.yaml", workflowFile} {
		if _, ok := files[name]; !ok {
			t.Errorf("no %s", name)
		}
	}
	for _, err := range checkDeploy(files, checkBinary(t)) {
		t.Error(err)
	}
}

// TestPlantedDefects: each check can fail. One defect is planted in a
// copy of a file, and the checks must name it.
func TestPlantedDefects(t *testing.T) {
	cli := checkBinary(t)
	files := readDeployFiles(t)
	for _, tt := range []struct {
		name, file, old, new, want string
		needs                      string // a program the check needs
	}{
		{"unknown field", "k8s/matrix-job.yaml", "backoffLimitPerIndex: 0", "backoffLimitPerIndx: 0", `unknown field "backoffLimitPerIndx"`, ""},
		{"unknown field in the pod", "k8s/merge-job.yaml", "restartPolicy: Never", "restartPolicy: Never\n      restartPolicies: Never", `unknown field "restartPolicies"`, ""},
		{"wrong type", "k8s/matrix-job.yaml", "completions: ${SHARDS}", `completions: "${SHARDS}"`, "cannot unmarshal string", ""},
		{"bad quantity", "k8s/matrix-job.yaml", "memory: 768Mi", "memory: 768MB", "quantities must match", ""},
		{"wrong kind", "k8s/merge-job.yaml", "kind: Job", "kind: Jobs", `unknown kind "Jobs"`, ""},
		{"kind of another API group", "k8s/store.yaml", "apiVersion: apps/v1", "apiVersion: batch/v1", `unknown kind "Deployment" of apiVersion "batch/v1"`, ""},
		{"not indexed", "k8s/matrix-job.yaml", "completionMode: Indexed", "completionMode: NonIndexed", "not an Indexed Job", ""},
		{"parallelism below completions", "k8s/matrix-job.yaml", "parallelism: ${SHARDS}", "parallelism: 2", "completions 4 != parallelism 2", ""},
		{"a retried shard", "k8s/matrix-job.yaml", "backoffLimitPerIndex: 0", "backoffLimitPerIndex: 1", "retried", ""},
		{"an exit code retried", "k8s/matrix-job.yaml", "- action: FailJob", "- action: Ignore", "retries exit codes [3]", ""},
		{"restarted in place", "k8s/matrix-job.yaml", "restartPolicy: Never", "restartPolicy: OnFailure", `restartPolicy "OnFailure"`, ""},
		{"no deadline", "k8s/merge-job.yaml", "activeDeadlineSeconds: 900", "", "no activeDeadlineSeconds", ""},
		{"one shard for every pod", "k8s/matrix-job.yaml", "--shard $((JOB_COMPLETION_INDEX+1))/${SHARDS}", "--shard 1/${SHARDS}", "index 1 runs --shard 1/4, want 2/4", ""},
		{"shards off by one", "k8s/matrix-job.yaml", "--shard $((JOB_COMPLETION_INDEX+1))/${SHARDS}", "--shard $((JOB_COMPLETION_INDEX))/${SHARDS}", "want 1 <= I <= N", ""},
		{"one store for every shard", "k8s/matrix-job.yaml", "--store /store/shards/${MATRIX}/$((JOB_COMPLETION_INDEX+1))", "--store /store/shards/${MATRIX}", "index 1 stores to /store/shards/20261126t220000 as index 0 does", ""},
		{"misspelled matrix flag", "k8s/matrix-job.yaml", "--seeds ${SEEDS}", "--seed ${SEEDS}", "check matrix has no flag --seed", ""},
		{"misspelled merge flag", "k8s/merge-job.yaml", "--junit /store", "--junt /store", "check matrix merge has no flag --junt", ""},
		{"misspelled run flag", "k8s/cell-job.yaml", `"--quiet"`, `"--quite"`, "check run has no flag --quite", ""},
		{"misspelled serve flag", "k8s/store.yaml", `"--allow-remote"`, `"--allow-remotely"`, "check serve has no flag --allow-remotely", ""},
		{"not a subcommand", "k8s/matrix-job.yaml", "exec check matrix", "exec check matrx", "`check matrx` is not a command of check", ""},
		{"a cell flag misspelled", "k8s/matrix-job.yaml", "--nemesis pause --fencing", "--nemesis pause --fenced", "check run has no flag --fenced", ""},
		{"cells drift from the acceptance file", "k8s/matrix-job.yaml", "redis-set-px       none          S", "redis-set-px       none          U", "differ from scripts/acceptance.txt", ""},
		{"cells file not mounted", "k8s/matrix-job.yaml", "exec check matrix --cells /cells/cells.txt", "exec check matrix --cells /cells/acceptance.txt", "no key acceptance.txt", ""},
		{"another claim", "k8s/merge-job.yaml", "claimName: lockcheck-store", "claimName: lockcheck-stor", `claim "lockcheck-stor"`, ""},
		{"merge reads elsewhere", "k8s/merge-job.yaml", "/store/shards/${MATRIX}/*/", "/store/shard/${MATRIX}/*/", "no `check matrix merge` reads the shards", ""},
		{"a variable envsubst is not told", "k8s/matrix-job.yaml", "${DEADLINE} ${IMAGE}'", "${DEADLINE}'", "envsubst line names", ""},
		{"serve elsewhere", "k8s/store.yaml", `"--store", "/store"`, `"--store", "/srv"`, "check serve --store /srv, but the merge stores the matrix in /store", ""},
		{"a shell variable envsubst would blank", "k8s/cell-job.yaml", `"--quiet"`, `"--quiet=$QUIET"`, "$QUIET would be replaced by envsubst", ""},
		{"a shell mistake in a pod's script", "k8s/merge-job.yaml", `set -- "$@" "$newest"`, `set -- $@ "$newest"`, "SC2068", "shellcheck"},
		{"a shell mistake in a workflow script", workflowFile, `exit "$code"`, `exit "$code`, "shellcheck", "shellcheck"},
		{"bad workflow expression", workflowFile, "${{ matrix.shard }}/${{ strategy.job-total }}", "${{ matrix.shrad }}/${{ strategy.job-total }}", "property \"shrad\" is not defined", ""},
		{"bad workflow function", workflowFile, "if: always()", "if: alway()", `undefined function "alway"`, ""},
		{"unknown action input", workflowFile, "if-no-files-found: warn\n          retention-days: 14", "if-no-file-found: warn\n          retention-days: 14", "input \"if-no-file-found\" is not defined", ""},
		{"misspelled flag in the workflow", workflowFile, "--run-timeout 15m --store shard", "--run-timeout 15m --stor shard", "check matrix has no flag --stor", ""},
		{"shard total hard-coded wrong", workflowFile, "/${{ strategy.job-total }}", "/3", "shard 4 runs --shard 4/3", ""},
		{"merge not always", workflowFile, "    if: always()\n    runs-on", "    runs-on", "merge job runs only if", ""},
		{"unpinned action", workflowFile, "actions/setup-go@v6", "actions/setup-go@main", "not pinned to a major version", ""},
		{"unknown deps group", workflowFile, "scripts/deps.sh redis", "scripts/deps.sh redis-server", "no deps group redis-server", ""},
		{"merge reads another directory", workflowFile, "shards/*/matrix/*/", "shard/*/matrix/*/", "not below the artifacts' directory", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.needs != "" {
				if _, err := exec.LookPath(tt.needs); err != nil {
					t.Skipf("no %s on PATH", tt.needs)
				}
			}
			src := string(files[tt.file])
			if !strings.Contains(src, tt.old) {
				t.Fatalf("%s has no %q to plant the defect in", tt.file, tt.old)
			}
			planted := make(map[string][]byte, len(files))
			for k, v := range files {
				planted[k] = v
			}
			planted[tt.file] = []byte(strings.Replace(src, tt.old, tt.new, 1))
			errs := checkDeploy(planted, cli)
			for _, err := range errs {
				if strings.Contains(err.Error(), tt.want) {
					return
				}
			}
			t.Errorf("the defect was not caught: want an error with %q, got %d errors: %v", tt.want, len(errs), errors.Join(errs...))
		})
	}
}

// TestShellCommands: the scripts' check commands are found as the shell
// would split them.
func TestShellCommands(t *testing.T) {
	for _, tt := range []struct {
		script string
		want   [][]string
	}{
		{`exec check matrix --seeds 1..3 --shard $((JOB_COMPLETION_INDEX+1))/4`, [][]string{{"exec", "check", "matrix", "--seeds", "1..3", "--shard", "$((JOB_COMPLETION_INDEX+1))/4"}}},
		{"set -eu\nx=$(ls -d \"$s\"m/*/ | tail -n 1); echo \"a b\" >&2\ncheck a \\\n  --b 'c d' 2>&1 # done", [][]string{{"set", "-eu"}, {"x=$(ls -d \"$s\"m/*/ | tail -n 1)"}, {"echo", "a b"}, {"check", "a", "--b", "c d"}}},
		{"a && b || c | d > out", [][]string{{"a"}, {"b"}, {"c"}, {"d"}}},
	} {
		if got := shellCommands(tt.script); !slices.EqualFunc(got, tt.want, slices.Equal) {
			t.Errorf("shellCommands(%q) = %q, want %q", tt.script, got, tt.want)
		}
	}
}

// readDeployFiles reads the manifests and the workflow, keyed by their
// path below deploy/.
func readDeployFiles(t *testing.T) map[string][]byte {
	t.Helper()
	names, err := filepath.Glob("k8s/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	names = append(names, workflowFile)
	files := make(map[string][]byte, len(names))
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.ToSlash(n)] = b
	}
	return files
}

// checkDeploy runs every check over the files (manifests under k8s/, the
// workflow) and returns what each found.
func checkDeploy(files map[string][]byte, cli *checkCLI) []error {
	var errs []error
	m := manifests{cli: cli}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if strings.HasPrefix(n, "k8s/") {
			m.load(n, files[n])
		}
	}
	errs = append(errs, m.errs...)
	errs = append(errs, m.check()...)
	if src, ok := files[workflowFile]; ok {
		errs = append(errs, checkWorkflow(workflowFile, src, cli)...)
	}
	return errs
}

// The manifests.

var (
	varRE      = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)
	bareVarRE  = regexp.MustCompile(`\$([A-Za-z_][A-Za-z0-9_]*)`)
	envsubstRE = regexp.MustCompile(`envsubst '([^']*)'`)
	indexRE    = regexp.MustCompile(`\$\(\(\s*JOB_COMPLETION_INDEX\s*([+-]\s*\d+)?\s*\)\)`)
)

// substitute returns src with each ${VAR} replaced by its sample, as
// envsubst would. When the file's header gives envsubst a list of
// variables (as a file whose shell scripts have variables of their own
// must), the list must name exactly the ${VAR}s the file uses; without a
// list envsubst replaces every $NAME, so the file may have no other.
func substitute(name string, src []byte) ([]byte, error) {
	var body strings.Builder
	for _, line := range strings.Split(string(src), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			body.WriteString(line + "\n")
		}
	}
	used := map[string]bool{}
	for _, m := range varRE.FindAllStringSubmatch(body.String(), -1) {
		used[m[1]] = true
	}
	s := samples()
	for v := range used {
		if _, ok := s[v]; !ok {
			return nil, fmt.Errorf("%s: ${%s} has no sample value (add one to samples)", name, v)
		}
	}
	if m := envsubstRE.FindSubmatch(src); m != nil {
		listed := map[string]bool{}
		for _, v := range bareVarRE.FindAllStringSubmatch(strings.NewReplacer("{", "", "}", "").Replace(string(m[1])), -1) {
			listed[v[1]] = true
		}
		if !mapsEqual(listed, used) {
			return nil, fmt.Errorf("%s: its envsubst line names %v, its documents use %v: a variable left out stays ${...} in the applied file", name, keys(listed), keys(used))
		}
	} else if bare := bareVarRE.FindString(body.String()); bare != "" {
		return nil, fmt.Errorf("%s: %s would be replaced by envsubst with no list of variables", name, bare)
	}
	return []byte(varRE.ReplaceAllStringFunc(string(src), func(v string) string {
		return s[varRE.FindStringSubmatch(v)[1]]
	})), nil
}

// decode decodes one YAML document strictly (an unknown or duplicate
// field is an error) into the k8s.io/api type of its apiVersion and kind.
func decode(doc []byte) (any, error) {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return nil, err
	}
	var obj any
	switch tm.APIVersion + " " + tm.Kind {
	case "batch/v1 Job":
		obj = &batchv1.Job{}
	case "v1 PersistentVolumeClaim":
		obj = &corev1.PersistentVolumeClaim{}
	case "v1 ConfigMap":
		obj = &corev1.ConfigMap{}
	case "v1 Service":
		obj = &corev1.Service{}
	case "apps/v1 Deployment":
		obj = &appsv1.Deployment{}
	default:
		return nil, fmt.Errorf("unknown kind %q of apiVersion %q (known: batch/v1 Job, v1 PersistentVolumeClaim, v1 ConfigMap, v1 Service, apps/v1 Deployment)", tm.Kind, tm.APIVersion)
	}
	if err := yaml.UnmarshalStrict(doc, obj); err != nil {
		return nil, fmt.Errorf("%s %s: %w", tm.APIVersion, tm.Kind, err)
	}
	return obj, nil
}

// manifests are the decoded documents of every manifest, and what
// loading them found wrong.
type manifests struct {
	cli        *checkCLI
	jobs       []located[*batchv1.Job]
	deploys    []located[*appsv1.Deployment]
	configMaps []located[*corev1.ConfigMap]
	pvcs       []located[*corev1.PersistentVolumeClaim]
	errs       []error
}

// located is an object and the file it is in.
type located[T any] struct {
	file string
	obj  T
}

// load substitutes, splits and decodes one manifest.
func (m *manifests) load(name string, src []byte) {
	out, err := substitute(name, src)
	if err != nil {
		m.errs = append(m.errs, err)
		return
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(out)))
	for n := 1; ; n++ {
		doc, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			m.errs = append(m.errs, fmt.Errorf("%s: document %d: %w", name, n, err))
			return
		}
		var fields map[string]any
		if err := yaml.Unmarshal(doc, &fields); err != nil {
			m.errs = append(m.errs, fmt.Errorf("%s: document %d: %w", name, n, err))
			continue
		}
		if len(fields) == 0 {
			continue // comments only
		}
		obj, err := decode(doc)
		if err != nil {
			m.errs = append(m.errs, fmt.Errorf("%s: document %d: %w", name, n, err))
			continue
		}
		switch o := obj.(type) {
		case *batchv1.Job:
			m.jobs = append(m.jobs, located[*batchv1.Job]{name, o})
		case *appsv1.Deployment:
			m.deploys = append(m.deploys, located[*appsv1.Deployment]{name, o})
		case *corev1.ConfigMap:
			m.configMaps = append(m.configMaps, located[*corev1.ConfigMap]{name, o})
		case *corev1.PersistentVolumeClaim:
			m.pvcs = append(m.pvcs, located[*corev1.PersistentVolumeClaim]{name, o})
		}
	}
}

// check asserts what the design rests on, over all the manifests.
func (m *manifests) check() []error {
	var errs []error
	fail := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if len(m.pvcs) != 1 {
		fail("%d PersistentVolumeClaims, want the one store every pod shares", len(m.pvcs))
	}
	claim := ""
	if len(m.pvcs) > 0 {
		claim = m.pvcs[0].obj.Name
		if !slices.Contains(m.pvcs[0].obj.Spec.AccessModes, corev1.ReadWriteMany) {
			fail("%s: the claim %s is not ReadWriteMany: pods on many nodes write to it", m.pvcs[0].file, claim)
		}
	}
	var merges, serves, shards []invocation
	var shardRoot string
	for _, j := range m.jobs {
		where := j.file + ": Job " + j.obj.Name
		spec := j.obj.Spec
		invs, perrs := m.checkPod(where, j.file, &spec.Template.Spec, claim, true)
		errs = append(errs, perrs...)
		if p := spec.Template.Spec.RestartPolicy; p != corev1.RestartPolicyNever {
			fail("%s: restartPolicy %q, want Never (a run is not restarted in place)", where, p)
		}
		perIndex := spec.BackoffLimitPerIndex != nil
		if perIndex && *spec.BackoffLimitPerIndex != 0 || !perIndex && (spec.BackoffLimit == nil || *spec.BackoffLimit != 0) {
			fail("%s: a pod that ended is retried: want backoffLimitPerIndex 0 or backoffLimit 0 (an exit code is a verdict)", where)
		}
		if spec.ActiveDeadlineSeconds == nil || *spec.ActiveDeadlineSeconds <= 0 {
			fail("%s: no activeDeadlineSeconds", where)
		}
		if pfp := spec.PodFailurePolicy; pfp != nil {
			for _, r := range pfp.Rules {
				if r.OnExitCodes == nil {
					continue
				}
				if r.Action == batchv1.PodFailurePolicyActionIgnore || r.Action == batchv1.PodFailurePolicyActionCount && (perIndex || spec.BackoffLimit == nil || *spec.BackoffLimit != 0) {
					fail("%s: podFailurePolicy %s retries exit codes %v: an exit code is a verdict", where, r.Action, r.OnExitCodes.Values)
				}
			}
		}
		var matrixInvs []invocation
		for _, inv := range invs {
			switch inv.command() {
			case "matrix":
				matrixInvs = append(matrixInvs, inv)
			case "matrix merge":
				merges = append(merges, inv)
			}
		}
		indexed := spec.CompletionMode != nil && *spec.CompletionMode == batchv1.IndexedCompletion
		for _, inv := range matrixInvs {
			if _, sharded := inv.flag("shard"); !sharded {
				continue
			}
			if !indexed {
				fail("%s: runs check matrix --shard but is not an Indexed Job: every pod would run the same shard", where)
				continue
			}
			shards = append(shards, inv)
			root, serrs := checkShards(where, spec, inv)
			errs = append(errs, serrs...)
			if root != "" {
				shardRoot = root
			}
		}
	}
	for _, d := range m.deploys {
		where := d.file + ": Deployment " + d.obj.Name
		invs, perrs := m.checkPod(where, d.file, &d.obj.Spec.Template.Spec, claim, false)
		errs = append(errs, perrs...)
		for _, inv := range invs {
			if inv.command() == "serve" {
				serves = append(serves, inv)
			}
		}
	}
	if len(shards) == 0 {
		fail("no Indexed Job runs check matrix --shard")
	}
	found := false
	for _, mg := range merges {
		if shardRoot != "" && strings.Contains(mg.script, shardRoot+"/*/") {
			found = true
		}
		store, _ := mg.flag("store")
		if shardRoot != "" && !strings.HasPrefix(shardRoot, store+"/") {
			fail("%s: the merge's --store %s does not hold the shards' stores %s: its run links would not reach them", mg.where, store, shardRoot)
		}
		for _, s := range serves {
			if ss, _ := s.flag("store"); ss != store {
				fail("%s: check serve --store %s, but the merge stores the matrix in %s", s.where, ss, store)
			}
		}
	}
	if shardRoot != "" && !found {
		fail("no `check matrix merge` reads the shards' stores %s/*/", shardRoot)
	}
	return errs
}

// checkShards checks the shard argument and the store of an Indexed Job's
// check matrix: pod i runs shard i+1 of completions, each into a store of
// its own. It returns the directory that holds the shards' stores.
func checkShards(where string, spec batchv1.JobSpec, inv invocation) (string, []error) {
	var errs []error
	if spec.Completions == nil || spec.Parallelism == nil {
		return "", []error{fmt.Errorf("%s: an Indexed Job needs completions and parallelism", where)}
	}
	n, p := int(*spec.Completions), int(*spec.Parallelism)
	if n != p {
		errs = append(errs, fmt.Errorf("%s: completions %d != parallelism %d: all shards at once, one per index", where, n, p))
	}
	shard, _ := inv.flag("shard")
	store, _ := inv.flag("store")
	if !strings.Contains(shard, "JOB_COMPLETION_INDEX") {
		errs = append(errs, fmt.Errorf("%s: --shard %s does not use JOB_COMPLETION_INDEX", where, shard))
	}
	stores := map[string]int{}
	root := ""
	for i := 0; i < n; i++ {
		got, err := matrix.ParseShard(atIndex(shard, i))
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: index %d: %w", where, i, err))
		} else if got.I != i+1 || got.N != n {
			errs = append(errs, fmt.Errorf("%s: index %d runs --shard %s, want %d/%d", where, i, atIndex(shard, i), i+1, n))
		}
		s := atIndex(store, i)
		if prev, dup := stores[s]; dup {
			errs = append(errs, fmt.Errorf("%s: index %d stores to %s as index %d does", where, i, s, prev))
		}
		stores[s] = i
		if i == 0 {
			root = path.Dir(s)
		} else if path.Dir(s) != root {
			errs = append(errs, fmt.Errorf("%s: the shards' stores are not in one directory (%s, %s)", where, root, path.Dir(s)))
		}
	}
	return root, errs
}

// atIndex evaluates the $((JOB_COMPLETION_INDEX+k)) of s for index i.
func atIndex(s string, i int) string {
	return indexRE.ReplaceAllStringFunc(s, func(e string) string {
		k := 0
		if off := indexRE.FindStringSubmatch(e)[1]; off != "" {
			k, _ = strconv.Atoi(strings.ReplaceAll(strings.ReplaceAll(off, " ", ""), "+", ""))
		}
		return strconv.Itoa(i + k)
	})
}

// checkPod checks a pod template: its volumes and claim, its resources,
// and every check command of its containers. It returns those commands.
func (m *manifests) checkPod(where, file string, spec *corev1.PodSpec, claim string, job bool) ([]invocation, []error) {
	var errs []error
	fail := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	volumes := map[string]corev1.Volume{}
	for _, v := range spec.Volumes {
		volumes[v.Name] = v
		if pvc := v.PersistentVolumeClaim; pvc != nil && pvc.ClaimName != claim {
			fail("%s: volume %s mounts the claim %q, not the store %q every pod shares", where, v.Name, pvc.ClaimName, claim)
		}
		if cm := v.ConfigMap; cm != nil && m.configMap(file, cm.Name) == nil {
			fail("%s: volume %s is the ConfigMap %s, which %s does not make", where, v.Name, cm.Name, file)
		}
	}
	var invs []invocation
	for _, c := range spec.Containers {
		cwhere := where + " container " + c.Name
		req := c.Resources.Requests
		if req.Cpu().IsZero() || req.Memory().IsZero() {
			fail("%s: no cpu and memory request", cwhere)
		}
		if job && c.Resources.Limits.Memory().IsZero() {
			fail("%s: no memory limit", cwhere)
		}
		mounts := map[string]corev1.VolumeMount{}
		for _, vm := range c.VolumeMounts {
			if _, ok := volumes[vm.Name]; !ok {
				fail("%s: mounts %s, not a volume of the pod", cwhere, vm.Name)
			}
			mounts[vm.MountPath] = vm
		}
		ci, cerrs := containerCommands(cwhere, c)
		errs = append(errs, cerrs...)
		if len(ci) == 0 && len(cerrs) == 0 {
			fail("%s: runs no check command", cwhere)
		}
		for i := range ci {
			inv := &ci[i]
			if err := m.cli.check(inv); err != nil {
				errs = append(errs, err)
				continue
			}
			if f, ok := inv.flag("cells"); ok {
				errs = append(errs, m.checkCells(cwhere, file, f, mounts, volumes)...)
			}
		}
		invs = append(invs, ci...)
	}
	return invs, errs
}

// configMap is the ConfigMap name of file, or nil.
func (m *manifests) configMap(file, name string) *corev1.ConfigMap {
	for _, c := range m.configMaps {
		if c.file == file && c.obj.Name == name {
			return c.obj
		}
	}
	return nil
}

// checkCells checks a --cells path: a key of a ConfigMap mounted at its
// directory, whose cells parse, whose run flags are check run's, and
// which are the acceptance cells (the file's comments say so).
func (m *manifests) checkCells(where, file, cells string, mounts map[string]corev1.VolumeMount, volumes map[string]corev1.Volume) []error {
	vm, ok := mounts[path.Dir(cells)]
	if !ok || volumes[vm.Name].ConfigMap == nil {
		return []error{fmt.Errorf("%s: --cells %s is not in a mounted ConfigMap", where, cells)}
	}
	cm := m.configMap(file, volumes[vm.Name].ConfigMap.Name)
	if cm == nil {
		return nil // reported with the volume
	}
	text, ok := cm.Data[path.Base(cells)]
	if !ok {
		return []error{fmt.Errorf("%s: --cells %s: the ConfigMap %s has no key %s", where, cells, cm.Name, path.Base(cells))}
	}
	got, err := matrix.ParseCells(strings.NewReader(text), cm.Name)
	if err != nil {
		return []error{fmt.Errorf("%s: %w", where, err)}
	}
	var errs []error
	for _, c := range got {
		if err := m.cli.check(&invocation{where: where + " cell " + c.Name(), sub: []string{"run"}, words: c.Args}); err != nil {
			errs = append(errs, err)
		}
	}
	b, err := os.ReadFile("../scripts/acceptance.txt")
	if err != nil {
		return append(errs, err)
	}
	want, err := matrix.ParseCells(bytes.NewReader(b), "scripts/acceptance.txt")
	if err != nil {
		return append(errs, err)
	}
	if !slices.EqualFunc(got, want, func(a, b matrix.Cell) bool { return a.Key() == b.Key() && a.Expect == b.Expect }) {
		errs = append(errs, fmt.Errorf("%s: the cells of %s differ from scripts/acceptance.txt", where, cm.Name))
	}
	return errs
}

// containerCommands are the check commands a container runs: its args
// with the image's entrypoint (check), or the commands of its sh -c script.
func containerCommands(where string, c corev1.Container) ([]invocation, []error) {
	switch {
	case len(c.Command) == 0:
		return []invocation{{where: where, sub: c.Args[:min(1, len(c.Args))], words: c.Args[min(1, len(c.Args)):]}}, nil
	case len(c.Command) == 2 && (c.Command[0] == "/bin/sh" || c.Command[0] == "sh") && c.Command[1] == "-c":
		if len(c.Args) != 1 {
			return nil, []error{fmt.Errorf("%s: sh -c with %d args, want the script", where, len(c.Args))}
		}
		if err := shellcheck(where, c.Args[0]); err != nil {
			return nil, []error{err}
		}
		return scriptCommands(where, c.Args[0]), nil
	case path.Base(c.Command[0]) == "check":
		argv := append(slices.Clone(c.Command[1:]), c.Args...)
		return []invocation{{where: where, sub: argv[:min(1, len(argv))], words: argv[min(1, len(argv)):]}}, nil
	}
	return nil, []error{fmt.Errorf("%s: command %q is neither check nor sh -c", where, c.Command)}
}

// shellcheck runs shellcheck over a container's sh -c script when
// shellcheck is on PATH (scripts/deps.sh does not install it; actionlint
// uses it for the workflow's scripts the same way).
func shellcheck(where, script string) error {
	bin, err := exec.LookPath("shellcheck")
	if err != nil {
		return nil
	}
	cmd := exec.Command(bin, "--shell=sh", "--format=gcc", "-")
	cmd.Stdin = strings.NewReader(script)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: shellcheck of its script: %v\n%s", where, err, out)
	}
	return nil
}

// The workflow.

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

// Commands and the check CLI.

// invocation is one check command: its subcommand (one word, or two for
// matrix merge and matrix diff) and the words after it.
type invocation struct {
	where  string
	sub    []string
	words  []string
	script string // the shell script it is in, if any

	// Filled by checkCLI.check.
	flags map[string]string
	args  []string
}

// command is the subcommand, as "matrix merge".
func (inv invocation) command() string { return strings.Join(inv.sub, " ") }

// flag is the value of --name (after checkCLI.check).
func (inv invocation) flag(name string) (string, bool) {
	v, ok := inv.flags[name]
	return v, ok
}

// scriptCommands finds the check commands of a shell script: a simple
// command whose first word (after exec) is check or a path to it.
func scriptCommands(where, script string) []invocation {
	var invs []invocation
	for _, words := range shellCommands(script) {
		if len(words) > 0 && words[0] == "exec" {
			words = words[1:]
		}
		if len(words) == 0 || path.Base(words[0]) != "check" {
			continue
		}
		sub, rest := words[1:min(2, len(words))], words[min(2, len(words)):]
		if len(sub) == 1 && sub[0] == "matrix" && len(rest) > 0 && (rest[0] == "merge" || rest[0] == "diff") {
			sub, rest = []string{"matrix", rest[0]}, rest[1:]
		}
		invs = append(invs, invocation{where: where, sub: sub, words: rest, script: script})
	}
	return invs
}

// shellCommands splits a shell script into simple commands of words, well
// enough for the deploy files' scripts: quotes are taken off a word and
// keep what they hold; $( ) and $(( )) stay in one word as written;
// backslash-newline joins lines; a newline, ;, &, && , || and | end a
// command; a redirection (>f, > f, 2>&1) is left out; # at the start of a
// word starts a comment.
func shellCommands(script string) [][]string {
	var cmds [][]string
	var cur []string
	var w strings.Builder
	inWord, depth, quote := false, 0, rune(0)
	endWord := func() {
		if inWord {
			cur = append(cur, w.String())
		}
		w.Reset()
		inWord = false
	}
	endCmd := func() {
		endWord()
		if words := dropRedirections(cur); len(words) > 0 {
			cmds = append(cmds, words)
		}
		cur = nil
	}
	rs := []rune(strings.ReplaceAll(script, "\\\n", ""))
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		switch {
		case depth > 0:
			w.WriteRune(c)
			if c == '(' {
				depth++
			} else if c == ')' {
				depth--
			}
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				w.WriteRune(c)
			}
		case c == '\'' || c == '"':
			quote, inWord = c, true
		case c == '$' && i+1 < len(rs) && rs[i+1] == '(':
			w.WriteString("$(")
			i++
			depth, inWord = 1, true
		case c == '#' && !inWord:
			for i+1 < len(rs) && rs[i+1] != '\n' {
				i++
			}
		case c == '&' && inWord && strings.HasSuffix(w.String(), ">"):
			w.WriteRune(c) // 2>&1
		case c == ' ' || c == '\t':
			endWord()
		case c == '\n' || c == ';' || c == '&' || c == '|':
			endCmd()
		default:
			w.WriteRune(c)
			inWord = true
		}
	}
	endCmd()
	return cmds
}

var redirRE = regexp.MustCompile(`^[0-9]*(>>?|<)(&[0-9-])?`)

// dropRedirections leaves out the redirections of a command's words.
func dropRedirections(words []string) []string {
	var out []string
	for i := 0; i < len(words); i++ {
		m := redirRE.FindString(words[i])
		switch {
		case m == "":
			out = append(out, words[i])
		case m == words[i] && !strings.Contains(m, "&"):
			i++ // > file: the file is the next word
		}
	}
	return out
}

// checkCLI asks the check binary of this checkout which subcommands and
// flags it has (`check SUB --help`).
type checkCLI struct {
	bin   string
	mu    sync.Mutex
	flags map[string]map[string]bool // "matrix merge" -> flag -> takes a value
}

// takesArgs are the subcommands that take words that are not flags.
var takesArgs = map[string]bool{"matrix merge": true, "matrix diff": true, "analyze": true, "repro": true}

// check parses inv's words with its subcommand's flags and fills inv's
// flags and args: an unknown subcommand or flag, or an argument where
// none is taken, is an error.
func (c *checkCLI) check(inv *invocation) error {
	if len(inv.sub) == 0 {
		return fmt.Errorf("%s: check with no subcommand", inv.where)
	}
	flags, err := c.flagSet(inv.sub)
	if err != nil {
		return fmt.Errorf("%s: %w", inv.where, err)
	}
	inv.flags = map[string]string{}
	for i := 0; i < len(inv.words); i++ {
		w := inv.words[i]
		if !strings.HasPrefix(w, "-") || w == "-" {
			if !takesArgs[inv.command()] {
				return fmt.Errorf("%s: check %s takes no argument %q", inv.where, inv.command(), w)
			}
			inv.args = append(inv.args, w)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(w, "-"), "=")
		takesValue, ok := flags[name]
		if !ok {
			return fmt.Errorf("%s: check %s has no flag --%s", inv.where, inv.command(), name)
		}
		if takesValue && !hasValue {
			if i+1 == len(inv.words) {
				return fmt.Errorf("%s: check %s --%s has no value", inv.where, inv.command(), name)
			}
			i++
			value = inv.words[i]
		}
		inv.flags[name] = value
	}
	return nil
}

// flagSet returns the flags of `check SUB`, from its --help: a line
// "  -name" is a boolean flag, "  -name type" one that takes a value.
func (c *checkCLI) flagSet(sub []string) (map[string]bool, error) {
	key := strings.Join(sub, " ")
	c.mu.Lock()
	defer c.mu.Unlock()
	if f, ok := c.flags[key]; ok {
		return f, nil
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(c.bin, append(slices.Clone(sub), "--help")...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("`check %s` is not a command of check (%v: %s)", key, err, strings.TrimSpace(stderr.String()))
	}
	f := map[string]bool{}
	for _, line := range strings.Split(stdout.String()+stderr.String(), "\n") {
		if fields := strings.Fields(line); strings.HasPrefix(line, "  -") && len(fields) > 0 {
			f[strings.TrimLeft(fields[0], "-")] = len(fields) > 1
		}
	}
	if len(f) == 0 {
		return nil, fmt.Errorf("`check %s --help` lists no flags", key)
	}
	c.flags[key] = f
	return f, nil
}

var (
	cliOnce sync.Once
	cliDir  string
	cli     *checkCLI
	cliErr  error
)

// checkBinary builds the check binary of this checkout once per test run.
func checkBinary(t *testing.T) *checkCLI {
	t.Helper()
	cliOnce.Do(func() {
		goBin, err := exec.LookPath("go")
		if err != nil {
			cliErr = fmt.Errorf("no go command to build check with: %w", err)
			return
		}
		if cliDir, cliErr = os.MkdirTemp("", "lockcheck-deploy-"); cliErr != nil {
			return
		}
		bin := filepath.Join(cliDir, "check")
		cmd := exec.Command(goBin, "build", "-o", bin, "./cmd/check")
		cmd.Dir = ".."
		if out, err := cmd.CombinedOutput(); err != nil {
			cliErr = fmt.Errorf("go build ./cmd/check: %v\n%s", err, out)
			return
		}
		cli = &checkCLI{bin: bin, flags: map[string]map[string]bool{}}
	})
	if cliErr != nil {
		t.Fatal(cliErr)
	}
	return cli
}

func TestMain(m *testing.M) {
	code := m.Run()
	if cliDir != "" {
		os.RemoveAll(cliDir)
	}
	os.Exit(code)
}

func keys[V any](m map[string]V) []string { return sortedKeys(m) }

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func mapsEqual(a, b map[string]bool) bool {
	return slices.Equal(keys(a), keys(b))
}
