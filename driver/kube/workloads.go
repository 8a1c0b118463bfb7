package kube

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"labrun.dev/labrun/schema"
)

// Scale sets a Deployment's replicas through its scale subresource and, with wait, waits for
// the rollout.
func (d *driver) Scale(ctx context.Context, namespace, deployment string, replicas int, wait bool) error {
	ns := d.ns(namespace)
	op := fmt.Sprintf("scale deployment %s/%s", ns, deployment)
	if err := d.guard.namespace(op, ns); err != nil {
		return err
	}
	if replicas < 0 || replicas > math.MaxInt32 {
		return fmt.Errorf("%s: replicas %d out of range", op, replicas)
	}
	// The dynamic client, not a typed one: the Scale type is autoscaling/v1's, a group labrun
	// would link for this one call.
	deps := d.dyn.Resource(appsv1.SchemeGroupVersion.WithResource("deployments")).Namespace(ns)
	sc, err := deps.Get(ctx, deployment, getOpts, "scale")
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if err := unstructured.SetNestedField(sc.Object, int64(replicas), "spec", "replicas"); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if _, err := deps.Update(ctx, sc, metav1.UpdateOptions{FieldManager: fieldManager}, "scale"); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if !wait {
		return nil
	}
	return d.WaitRollout(ctx, ns, deployment)
}

// Restart does what `kubectl rollout restart` does: it sets the pod template annotation
// kubectl.kubernetes.io/restartedAt, which rolls every pod. With wait, it waits for the rollout.
func (d *driver) Restart(ctx context.Context, namespace, deployment string, wait bool) error {
	ns := d.ns(namespace)
	op := fmt.Sprintf("restart deployment %s/%s", ns, deployment)
	if err := d.guard.namespace(op, ns); err != nil {
		return err
	}
	// Nanoseconds, unlike kubectl's seconds, so that two restarts in one second both roll.
	patch := fmt.Sprintf(`{"spec":{"template":{"metadata":{"annotations":{"kubectl.kubernetes.io/restartedAt":%q}}}}}`,
		time.Now().Format(time.RFC3339Nano))
	_, err := d.cs.AppsV1().Deployments(ns).Patch(ctx, deployment, types.StrategicMergePatchType, []byte(patch),
		metav1.PatchOptions{FieldManager: fieldManager})
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if !wait {
		return nil
	}
	return d.WaitRollout(ctx, ns, deployment)
}

// errProgressDeadline marks a rollout that Kubernetes itself gave up on.
var errProgressDeadline = errors.New("exceeded its progress deadline")

// rolloutStatus applies kubectl's rules (rollout status) to a Deployment: it returns done, or
// what the rollout is waiting for, or an error when the progress deadline was exceeded.
func rolloutStatus(dep *appsv1.Deployment) (done bool, waiting string, err error) {
	if dep.Generation > dep.Status.ObservedGeneration {
		return false, "the deployment controller has not observed the latest spec yet", nil
	}
	for _, c := range dep.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Reason == "ProgressDeadlineExceeded" {
			return false, "", fmt.Errorf("deployment %q %w: %s", dep.Name, errProgressDeadline, c.Message)
		}
	}
	want := int32(1)
	if dep.Spec.Replicas != nil {
		want = *dep.Spec.Replicas
	}
	st := dep.Status
	switch {
	case st.UpdatedReplicas < want:
		return false, fmt.Sprintf("%d out of %d new replicas have been updated", st.UpdatedReplicas, want), nil
	case st.Replicas > st.UpdatedReplicas:
		return false, fmt.Sprintf("%d old replicas are pending termination", st.Replicas-st.UpdatedReplicas), nil
	case st.AvailableReplicas < st.UpdatedReplicas:
		return false, fmt.Sprintf("%d of %d updated replicas are available", st.AvailableReplicas, st.UpdatedReplicas), nil
	}
	return true, "", nil
}

// WaitRollout waits until the Deployment is rolled out by kubectl's rules. On timeout the error
// says what the rollout still waits for and why the pods that are not ready are not.
func (d *driver) WaitRollout(ctx context.Context, namespace, deployment string) error {
	ns := d.ns(namespace)
	ctx, cancel := d.withDefaultTimeout(ctx)
	defer cancel()
	var last string
	var dep *appsv1.Deployment
	observed := false // the last poll read the Deployment (see schema.Unmet)
	err := poll(ctx, 250*time.Millisecond, func(ctx context.Context) (bool, error) {
		got, err := d.cs.AppsV1().Deployments(ns).Get(ctx, deployment, getOpts)
		if err == nil {
			dep = got
		}
		if apierrors.IsNotFound(err) {
			last, observed = "the deployment does not exist", true
			return false, nil
		}
		if err != nil {
			if !isDeadline(err) {
				last, observed = err.Error(), false
			}
			return false, nil
		}
		observed = true
		done, waiting, err := rolloutStatus(dep)
		last = waiting
		return done, err
	})
	if err == nil {
		return nil
	}
	if errors.Is(err, errProgressDeadline) {
		return err
	}
	msg := fmt.Sprintf("deployment %s/%s not rolled out: %s", ns, deployment, last)
	if dep != nil && dep.Spec.Selector != nil {
		// What the pods say is what the user needs (Pending: unschedulable, image pull, ...).
		sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer scancel()
		if sel, serr := metav1.LabelSelectorAsSelector(dep.Spec.Selector); serr == nil {
			if pods, perr := d.cs.CoreV1().Pods(ns).List(sctx, metav1.ListOptions{LabelSelector: sel.String()}); perr == nil {
				if s := notReadyPods(pods.Items, 5); s != "" {
					msg += "; pods not ready: " + s
				}
			}
		}
	}
	err = fmt.Errorf("%s: %w", msg, err)
	if observed && ctx.Err() != nil {
		return &schema.Unmet{Err: err}
	}
	return err
}

// notReadyPods describes up to max pods that are not ready.
func notReadyPods(pods []corev1.Pod, max int) string {
	var parts []string
	n := 0
	for i := range pods {
		p := &pods[i]
		if podReady(p) {
			continue
		}
		n++
		if len(parts) < max {
			parts = append(parts, p.Name+" "+podState(p))
		}
	}
	if n > len(parts) {
		parts = append(parts, fmt.Sprintf("and %d more", n-len(parts)))
	}
	return strings.Join(parts, "; ")
}

// podState says why a pod is not ready, in the words the API gives.
func podState(p *corev1.Pod) string {
	s := string(p.Status.Phase)
	if p.DeletionTimestamp != nil {
		s = "Terminating"
	}
	for _, c := range p.Status.Conditions {
		if c.Status != corev1.ConditionTrue && c.Message != "" {
			return s + " (" + string(c.Type) + ": " + c.Message + ")"
		}
	}
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil && w.Reason != "" {
			return s + " (" + cs.Name + ": " + w.Reason + ")"
		}
	}
	return s
}

func podReady(p *corev1.Pod) bool {
	if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// KillPods deletes the pods a selector (or a name) picks, with the grace period if given, and
// returns their names. It does not wait for them to be gone. A selector that matches no pod is
// an error: a kill that kills nothing is a mistake in the scenario.
func (d *driver) KillPods(ctx context.Context, req schema.Kill) ([]string, error) {
	if req.Process != "" {
		return nil, fmt.Errorf("kill process %q: the kube target has no local processes", req.Process)
	}
	ns := d.ns(req.Namespace)
	what := "pod " + ns + "/" + req.Pod
	if req.Pod == "" {
		what = "pods " + ns + "/{" + req.Selector + "}"
	}
	if err := d.guard.namespace("kill "+what, ns); err != nil {
		return nil, err
	}
	var names []string
	switch {
	case req.Pod != "":
		names = []string{req.Pod}
	case req.Selector != "":
		sel, err := labels.Parse(req.Selector)
		if err != nil {
			return nil, fmt.Errorf("kill: selector %q: %w", req.Selector, err)
		}
		pods, err := d.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
		if err != nil {
			return nil, fmt.Errorf("kill %s: %w", what, err)
		}
		for _, p := range pods.Items {
			names = append(names, p.Name)
		}
		if len(names) == 0 {
			return nil, fmt.Errorf("kill %s: no pod matches", what)
		}
		slices.Sort(names)
	default:
		return nil, errors.New("kill: needs a pod or a selector")
	}
	opts := metav1.DeleteOptions{}
	if req.GracePeriod != nil {
		secs := int64(math.Ceil(req.GracePeriod.D().Seconds()))
		opts.GracePeriodSeconds = &secs
	}
	var killed []string
	for _, name := range names {
		err := d.cs.CoreV1().Pods(ns).Delete(ctx, name, opts)
		if apierrors.IsNotFound(err) && req.Pod == "" {
			continue // gone between list and delete
		}
		if err != nil {
			return killed, fmt.Errorf("kill pod %s/%s: %w", ns, name, err)
		}
		killed = append(killed, name)
	}
	return killed, nil
}

// condition is one entry of status.conditions.
type condition struct {
	status, reason, message string
}

func (c condition) describe() string {
	if c.status == "" {
		return "absent"
	}
	s := c.status
	if c.reason != "" {
		s += " (" + c.reason
		if c.message != "" {
			s += ": " + c.message
		}
		s += ")"
	} else if c.message != "" {
		s += " (" + c.message + ")"
	}
	return s
}

// findCondition finds status.conditions[type==typ] of an object.
func findCondition(obj map[string]any, typ string) (condition, bool) {
	conds, _, _ := unstructured.NestedSlice(obj, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok || m["type"] != typ {
			continue
		}
		str := func(k string) string { s, _ := m[k].(string); return s }
		return condition{status: str("status"), reason: str("reason"), message: str("message")}, true
	}
	return condition{}, false
}

// WaitCondition waits until the object (or every object the selector matches that is not being
// deleted, at least one) has the condition with the wanted status (default "True"), written by
// its controller for the object's current generation (see unobserved). On timeout the error
// lists the objects that do not, with the condition's status, reason and message.
func (d *driver) WaitCondition(ctx context.Context, namespace string, cond schema.Condition, interval time.Duration) error {
	if interval <= 0 {
		interval = 500 * time.Millisecond
	}
	want := cond.Status
	if want == "" {
		want = "True"
	}
	if cond.Type == "" {
		return errors.New("wait condition: needs a type")
	}
	m, err := d.mappingFor(ctx, cond.Kind, cond.APIVersion)
	if err != nil {
		return fmt.Errorf("wait condition: %w", err)
	}
	ns := ""
	if m.namespaced {
		ns = d.ns(namespace)
	}
	ri := d.resourceFor(m.gvr, m.namespaced, ns)
	what := kindName(m.kind, ns, cond.Name)
	if cond.Name == "" {
		what = kindName(m.kind, ns, "{"+cond.Selector+"}")
	}
	ctx, cancel := d.withDefaultTimeout(ctx)
	defer cancel()
	var last string
	observed := false // the last poll read the objects (see schema.Unmet)
	err = poll(ctx, interval, func(ctx context.Context) (bool, error) {
		objs, err := d.getObjects(ctx, ri, cond.Name, cond.Selector)
		if err != nil {
			if apierrors.IsNotFound(err) {
				last, observed = "it does not exist", true
				return false, nil
			}
			if isBadSelector(err) {
				return false, err
			}
			if !isDeadline(err) {
				last, observed = err.Error(), false
			}
			return false, nil
		}
		observed = true
		if cond.Name == "" {
			// Objects on their way out (a killed pod) are not the ones a selector waits for.
			objs = slices.DeleteFunc(objs, func(o unstructured.Unstructured) bool { return o.GetDeletionTimestamp() != nil })
		}
		if len(objs) == 0 {
			last = "nothing matches the selector"
			return false, nil
		}
		var bad []string
		for _, o := range objs {
			// A condition written before the controller saw the object as it is now (a
			// Deployment's Available=True, just after a patch) says nothing of it yet.
			if no := unobserved(o.Object); no != nil {
				bad = append(bad, o.GetName()+": "+no.Error())
				continue
			}
			c, _ := findCondition(o.Object, cond.Type)
			if c.status != want {
				bad = append(bad, o.GetName()+": "+c.describe())
			}
		}
		if len(bad) == 0 {
			return true, nil
		}
		last = strings.Join(bad, "; ")
		return false, nil
	})
	if err != nil {
		err = fmt.Errorf("wait for %s condition %s=%s: %s: %w", what, cond.Type, want, last, err)
		if observed && ctx.Err() != nil {
			return &schema.Unmet{Err: err}
		}
		return err
	}
	return nil
}
