package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"labrun.dev/labrun/driver/kube"
	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/suite"
)

// labrun job renders a suite's shards as a Kubernetes Indexed Job; labrun collect reads the
// records its pods wrote to their logs and merges them (merge.go). See docs/scaling-out.md.

type jobFlags struct {
	loadFlags
	matrixFlags
	selection
	shards, parallelism int
	image, name         string
	namespace, target   string
	passRate            float64
	passRateGiven       bool
	parallel            int
}

// configMapLimit is the most a ConfigMap may hold (the API server refuses more).
const configMapLimit = 1 << 20

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

func newJobCmd(p *process) *cobra.Command {
	var f jobFlags
	cmd := &cobra.Command{
		Use:   "job --shards N --image IMAGE PATH...",
		Short: "Render a Kubernetes Indexed Job that runs the scenarios' shards inside the cluster",
		Long: `job prints (YAML, for kubectl apply -f -) what runs the scenarios in PATH inside the cluster,
split into N shards (labrun run --shard): a ServiceAccount; a ConfigMap holding the scenario
files (paths relative to this folder, mounted at /scenarios); a Role and RoleBinding in each
namespace the scenarios declare, granting the kinds they apply, read and delete and what their
steps do to pods and workloads; for scenarios with ephemeral namespaces a ClusterRole bound in
every namespace (a Role cannot name a namespace made at run time) that may also create and
delete namespaces; and an Indexed Job of N completions (--parallelism at once) whose pod i
runs shard i+1 of N (--shard job/N reads JOB_COMPLETION_INDEX) with its records on stdout as
JSON lines: the pod's log. labrun collect reads them back and merges them.

The image is IMAGE (the repository's Containerfile builds one holding labrun). Files the
scenarios read besides their .cue and .md files (scripts, YAML for apply.files) are not in
the ConfigMap: put them in the image. The kinds of apply.files are read from those files here;
an object whose kind is known only when its step runs (written as ${...}, or in a file not
there yet) is said on stderr and in a comment, and the Roles grant nothing for it.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f.passRateGiven = cmd.Flags().Changed("pass-rate")
			return p.job(args, &f)
		},
	}
	f.loadFlags.register(cmd)
	f.matrixFlags.register(cmd, "run")
	_ = cmd.Flags().MarkHidden("shard")
	f.selection.register(cmd, "run")
	cmd.Flags().IntVar(&f.shards, "shards", 0, "how many shards (the Job's completions: one pod each)")
	cmd.Flags().IntVar(&f.parallelism, "parallelism", 0, "how many pods run at once (default: --shards)")
	cmd.Flags().StringVar(&f.image, "image", "", "the image of the pods (one holding labrun; see the Containerfile)")
	cmd.Flags().StringVar(&f.name, "name", "labrun", "the name of the Job, its ServiceAccount, Roles and ConfigMap (<name>-scenarios)")
	cmd.Flags().StringVarP(&f.namespace, "namespace", "n", "labrun", "the namespace of the Job, its ServiceAccount and ConfigMap (it must exist)")
	cmd.Flags().Var(targetValue{p, &f.target}, "target", "the target of the runs (default: each scenario's)")
	cmd.Flags().Float64Var(&f.passRate, "pass-rate", 0, passRateHelp)
	cmd.Flags().IntVar(&f.parallel, "parallel", 1, "how many runs each pod runs at once (run --parallel)")
	return cmd
}

// maxIndexedJobPods is the most pods of an Indexed Job that Kubernetes' validation lets run
// at once (its spec.parallelism).
const maxIndexedJobPods = 100000

func (p *process) job(args []string, f *jobFlags) error {
	switch {
	case f.shards < 1:
		return &exitError{exitInvalid, fmt.Sprintf("--shards %d: expected 1 or more (the Job's pods)", f.shards)}
	case f.image == "":
		return &exitError{exitInvalid, "--image: expected the image of the pods, one holding labrun (the repository's Containerfile builds one)"}
	case !dnsLabel.MatchString(f.name) || len(f.name) > 50:
		return &exitError{exitInvalid, fmt.Sprintf("--name %q: expected a DNS label of at most 50 characters (a-z, 0-9, -)", f.name)}
	case !dnsLabel.MatchString(f.namespace):
		return &exitError{exitInvalid, fmt.Sprintf("-n %q: expected a namespace name (a-z, 0-9, -)", f.namespace)}
	case f.parallelism < 0 || f.parallel < 1:
		return &exitError{exitInvalid, "--parallelism and --parallel: expected 1 or more"}
	}
	if f.parallelism == 0 {
		f.parallelism = f.shards
	}
	if err := p.checkTarget(f.target); err != nil {
		return err
	}
	opts, err := f.options()
	if err != nil {
		return err
	}
	opts.ForRun = true // the scenarios run long after their load
	opts.Target = f.target
	opts.Selected = f.selection.selects()
	mf := f.matrixFlags
	mf.shard = ""
	w, err := p.expand(args, opts, expansion{sel: f.selection, matrix: mf, passRate: f.passRate, passRateGiven: f.passRateGiven, output: "text", target: f.target})
	if err != nil {
		return err
	}
	// The files: those the load read, and the other .cue files of their folders (the package
	// a file sees), relative to this folder.
	var paths []string
	seen := map[string]bool{}
	add := func(abs string) error {
		if seen[abs] {
			return nil
		}
		seen[abs] = true
		rel, err := filepath.Rel(p.Cwd, abs)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return &exitError{exitInvalid, fmt.Sprintf("%s is outside this folder: run labrun job from a folder that holds every scenario file (the ConfigMap holds them by their paths from here)", abs)}
		}
		paths = append(paths, rel)
		return nil
	}
	for _, file := range w.res.Files {
		if err := add(file); err != nil {
			return err
		}
		if strings.HasSuffix(file, ".cue") {
			sib, _ := filepath.Glob(filepath.Join(filepath.Dir(file), "*.cue"))
			for _, s := range sib {
				if err := add(s); err != nil {
					return err
				}
			}
		}
	}
	slices.Sort(paths)
	if f.shards > len(w.units) {
		// Each shard is a pod of the Job: past one run per pod the others run nothing
		// (--shards 100000000 of 8 runs rendered a Job of that many pods, which the API
		// server refuses past maxIndexedJobPods).
		if f.parallelism > maxIndexedJobPods {
			return &exitError{exitInvalid, fmt.Sprintf("--shards %d: expected at most %d, the %s of %s (Kubernetes runs at most %d pods of an Indexed Job at once)", f.shards, len(w.units), countOf(len(w.units), "run"), strings.Join(args, " "), maxIndexedJobPods)}
		}
		idle, verb := f.shards-len(w.units), "runs"
		if idle > 1 {
			verb = "run"
		}
		fmt.Fprintf(p.Stderr, "labrun: warning: --shards %d of the %s of %s: %s %s nothing\n", f.shards, countOf(len(w.units), "run"), strings.Join(args, " "), countOf(idle, "pod"), verb)
	}
	spec := kube.JobSpec{Name: f.name, Namespace: f.namespace, Image: f.image, Shards: f.shards, Parallelism: f.parallelism}
	size := 0
	for _, rel := range paths {
		b, err := os.ReadFile(filepath.Join(p.Cwd, rel))
		if err != nil {
			return &exitError{exitInvalid, fmt.Sprintf("%s: %v", rel, unwrapPath(err))}
		}
		size += len(b)
		spec.Files = append(spec.Files, kube.JobFile{Path: filepath.ToSlash(rel), Data: string(b)})
	}
	if size > configMapLimit-4096 {
		return &exitError{exitInvalid, fmt.Sprintf("the scenario files hold %d bytes, more than a ConfigMap can (1 MiB): run fewer, or put them in the image", size)}
	}
	// The pods' own arguments: the flags that choose the work, then the paths as given.
	var runArgs []string
	for _, v := range f.vars {
		runArgs = append(runArgs, "--var", v)
	}
	if f.count > 1 {
		runArgs = append(runArgs, "--count", strconv.Itoa(f.count))
	}
	for _, s := range f.sweeps {
		runArgs = append(runArgs, "--sweep", s)
	}
	for _, n := range f.names {
		runArgs = append(runArgs, "--scenario", n)
	}
	for _, t := range f.tags {
		runArgs = append(runArgs, "--tag", t)
	}
	if f.match != "" {
		runArgs = append(runArgs, "--match", f.match)
	}
	if f.skip != "" {
		runArgs = append(runArgs, "--skip", f.skip)
	}
	if f.target != "" {
		runArgs = append(runArgs, "--target", f.target)
	}
	if f.passRate > 0 {
		runArgs = append(runArgs, "--pass-rate", strconv.FormatFloat(f.passRate, 'g', -1, 64))
	}
	if f.parallel > 1 {
		runArgs = append(runArgs, "--parallel", strconv.Itoa(f.parallel))
	}
	if f.allowSystem {
		runArgs = append(runArgs, "--allow-system-namespaces")
	}
	// DIR/... goes to the pods as the folders it finds here: the kubelet mounts a ConfigMap's
	// files behind symlinks (each top-level name links to ..data/<name>), which a walk does not
	// follow, so in the pod DIR/... found DIR alone and the scenarios below it never ran.
	dirs, err := expandPaths(p.Cwd, args)
	if err != nil {
		return err
	}
	for _, a := range dirs {
		abs := inCwd(p.Cwd, a)
		rel, err := filepath.Rel(p.Cwd, abs)
		if err != nil || strings.HasPrefix(rel, "..") {
			return &exitError{exitInvalid, fmt.Sprintf("%s is outside this folder: run labrun job from a folder that holds it", a)}
		}
		runArgs = append(runArgs, filepath.ToSlash(rel))
	}
	spec.Args = runArgs
	var scenarios []*dsl.Scenario
	var multi dsl.Errors
	said := map[*dsl.Scenario]bool{}
	for _, u := range w.units {
		if u.Scenario != nil {
			scenarios = append(scenarios, u.Scenario)
			// A pod reaches its own cluster (in-cluster config, these Roles): the contexts of
			// a scenario's clusters are not there, and its run would fail in the pod, after
			// the Job was applied (probe p9).
			if sc := u.Scenario; len(sc.Clusters) > 0 && or(f.target, sc.Target) == "kube" && !said[sc] {
				said[sc] = true
				multi = append(multi, &dsl.Error{Pos: sc.Clusters[0].Pos, Path: sc.Name + ".clusters",
					Msg: fmt.Sprintf("scenario %s reaches %d clusters (%s): a labrun job's pod runs in one cluster with its in-cluster credentials, and has no kubeconfig of their contexts; run it with labrun run (--shard i/n in a CI matrix), or leave it out (--skip %s)",
						sc.Name, len(sc.Clusters), strings.Join(sc.ClusterNames(), ", "), regexp.QuoteMeta(sc.Name))})
			}
		}
	}
	if len(multi) > 0 {
		for _, e := range multi.Rel(p.Cwd) {
			fmt.Fprintln(p.Stderr, e)
		}
		return &exitError{exitInvalid, "job: a scenario of several clusters cannot run in the Job's pods"}
	}
	access := suite.AccessOf(scenarios, f.target)
	conv := func(rs []suite.Rule) []kube.JobRule {
		var out []kube.JobRule
		for _, r := range rs {
			out = append(out, kube.JobRule{Group: r.Group, Resources: r.Resources, ResourceNames: r.ResourceNames, Verbs: r.Verbs})
		}
		return out
	}
	spec.Namespaces = map[string][]kube.JobRule{}
	for ns, rs := range access.Namespaces {
		spec.Namespaces[ns] = conv(rs)
	}
	spec.Anywhere, spec.Cluster = conv(access.Anywhere), conv(access.Cluster)
	fmt.Fprintf(p.Stdout, "# labrun job %s: %s of %s in %s (%s at once), image %s.\n# Apply: labrun job ... | kubectl apply -f -   Then: labrun collect -n %s --name %s\n",
		f.name, countOf(len(w.units), "run"), countOf(w.scenarioCount(), "scenario"), countOf(f.shards, "shard"), countOf(f.parallelism, "pod"), f.image, f.namespace, f.name)
	if len(access.Anywhere) > 0 {
		fmt.Fprintf(p.Stdout, "# Scenarios with ephemeral namespaces: ClusterRole %s-%s-anywhere grants their rules in every namespace.\n", f.namespace, f.name)
	}
	// What the Roles cannot grant, said where the YAML is read and where a person reads.
	for _, u := range access.Unseen.Rel(p.Cwd) {
		fmt.Fprintf(p.Stdout, "# Not in the Roles: %s\n", u)
		fmt.Fprintf(p.Stderr, "%s: warning: %s\n", u.Pos, u.Msg)
	}
	enc := &docWriter{w: p.Stdout, output: "yaml"}
	for _, o := range kube.RenderJob(spec) {
		if err := enc.write(o); err != nil {
			return err
		}
	}
	return nil
}

type collectFlags struct {
	mergeFlags
	targetFlags
	name string
}

func newCollectCmd(p *process) *cobra.Command {
	var f collectFlags
	cmd := &cobra.Command{
		Use:   "collect",
		Short: "Read the records of a labrun job's pods from their logs and merge them",
		Long: `collect lists the pods of the labrun job --name in namespace -n (label labrun.dev/job), reads
the log of each pod's labrun container — the records its shard wrote, as JSON lines — and
merges them as labrun merge does: a report per run and the summaries in --report-dir, one
JUnit file (--junit), a line per scenario and the total, and the exit code of one run of them
all. A pod that has not ended yet is read as far as it got, with a warning.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return p.junitOfRefusal("collect", f.junit, p.collectJob(&f))
		},
	}
	cmd.Flags().StringVar(&f.name, "name", "labrun", "the name of the labrun job")
	cmd.Flags().StringVar(&f.kubeconfig, "kubeconfig", "", "path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)")
	cmd.Flags().StringVar(&f.context, "context", "", "the kubeconfig context (default: the current one)")
	cmd.Flags().StringVarP(&f.namespace, "namespace", "n", "labrun", "the namespace of the job")
	cmd.Flags().StringVar(&f.reportDir, "report-dir", "reports", "directory for the runs' reports and the summaries (\"\" for none)")
	cmd.Flags().StringVar(&f.junit, "junit", "", "write JUnit XML of every run to this file")
	cmd.Flags().BoolVar(&f.mixed, "allow-mixed-sources", false, "merge records of one scenario made from different sources")
	cmd.Flags().BoolVarP(&f.quiet, "quiet", "q", false, "print only the verdicts")
	return cmd
}

func (p *process) collectJob(f *collectFlags) error {
	if err := checkWritable(p.Cwd, f.reportDir, f.junit); err != nil {
		return err
	}
	logs, ns, err := kube.NewJobLogs(kube.Options{Kubeconfig: f.kubeconfig, Context: f.context, Getenv: p.Getenv}, f.namespace)
	if err != nil {
		return &exitError{exitInfra, "collect: " + err.Error()}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	pods, err := logs.Pods(ctx, f.name)
	if err != nil {
		return &exitError{exitInfra, fmt.Sprintf("collect: the pods of job %s in %s: %v", f.name, ns, err)}
	}
	if len(pods) == 0 {
		return &exitError{exitInvalid, fmt.Sprintf("collect: no pods of job %s in namespace %s (label %s=%s)", f.name, ns, kube.JobLabel, f.name)}
	}
	var all []mergedRecord
	for _, pod := range pods {
		if pod.Phase != "Succeeded" && pod.Phase != "Failed" {
			fmt.Fprintf(p.Stderr, "labrun: collect: warning: pod %s (shard %d) is %s: its log is read as far as it got\n", pod.Name, pod.Index+1, pod.Phase)
		}
		rc, err := logs.Logs(ctx, pod.Name)
		if err != nil {
			return &exitError{exitInfra, fmt.Sprintf("collect: the log of pod %s: %v", pod.Name, err)}
		}
		from := "pod/" + pod.Name
		recs, err := recordLines(from, rc, func(msg string) {
			fmt.Fprintf(p.Stderr, "labrun: collect: warning: %s\n", msg)
		})
		rc.Close()
		if err != nil {
			return &exitError{exitInfra, "collect: " + err.Error()}
		}
		if !f.quiet {
			fmt.Fprintf(p.Stdout, "pod %s (shard %d): %d record%s\n", pod.Name, pod.Index+1, len(recs), plural(len(recs)))
		}
		for _, r := range recs {
			all = append(all, mergedRecord{rec: r, from: from})
		}
	}
	if len(all) == 0 {
		return &exitError{exitInfra, fmt.Sprintf("collect: the %d pod%s of job %s logged no run records", len(pods), plural(len(pods)), f.name)}
	}
	return p.mergeRecords(all, &f.mergeFlags)
}

// countOf is "1 run", "2 runs".
func countOf(n int, noun string) string { return fmt.Sprintf("%d %s%s", n, noun, plural(n)) }
