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
	"testing"

	"github.com/lockcheck/lockcheck/matrix"
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
// shellcheck is on PATH (scripts/deps.sh's lint group installs it for make
// test; actionlint uses it for the workflow's scripts the same way).
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
