package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

// Why a pod watcher: kwok v0.8.0 runs an exec'd command with its own environment plus the envs of
// the matching Exec/ClusterExec target, and nothing else — no pod name, namespace or IP, and its own
// working directory (pkg/kwok/server/debugging_exec.go). A ClusterExec cannot template per pod. So
// for every pod the sandbox creates a namespaced kwok Exec named after the pod (kwok matches Exec by
// name and namespace before any ClusterExec) carrying POD_NAME, POD_NAMESPACE and a per-pod working
// directory, and a kwok Logs that maps each container to a local file. Both are owned by the pod, so
// the garbage collector removes them with it.

var (
	execGVK = schema.GroupVersionKind{Group: "kwok.x-k8s.io", Version: "v1alpha1", Kind: "Exec"}
	logsGVK = schema.GroupVersionKind{Group: "kwok.x-k8s.io", Version: "v1alpha1", Kind: "Logs"}
)

// watchPods starts the pod watcher and returns once its cache has synced.
func (s *Sandbox) watchPods(ctx context.Context) error {
	logFile, logf, err := s.componentLog("pod-watcher.log")
	if err != nil {
		return err
	}
	factory := informers.NewSharedInformerFactory(s.client, 0)
	inf := factory.Core().V1().Pods().Informer()
	_, err = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if pod, ok := obj.(*corev1.Pod); ok {
				if err := s.preparePod(ctx, pod); err != nil {
					logf("pod %s/%s: %v", pod.Namespace, pod.Name, err)
				} else {
					logf("pod %s/%s: Exec and Logs created", pod.Namespace, pod.Name)
				}
			}
		},
	})
	if err != nil {
		logFile.Close()
		return err
	}
	return s.runInformer(ctx, factory, inf, logFile, "pod watcher")
}

// PodDir is the working directory of commands exec'd in the pod.
func (s *Sandbox) PodDir(namespace, pod string) string {
	return filepath.Join(s.Dir, "pods", namespace, pod)
}

// ContainerLogPath is the local file kwok serves as the container's log (CRI format).
func (s *Sandbox) ContainerLogPath(namespace, pod, container string) string {
	return filepath.Join(s.Dir, "logs", namespace, pod, container+".log")
}

// preparePod creates the pod's working directory, empty container log files, and its kwok Exec and
// Logs objects.
func (s *Sandbox) preparePod(ctx context.Context, pod *corev1.Pod) error {
	workDir := s.PodDir(pod.Namespace, pod.Name)
	if err := os.MkdirAll(workDir, 0o755); err != nil {
		return err
	}
	var containers []string
	for _, c := range pod.Spec.InitContainers {
		containers = append(containers, c.Name)
	}
	for _, c := range pod.Spec.Containers {
		containers = append(containers, c.Name)
	}
	podEnv := []any{
		map[string]any{"name": "POD_NAME", "value": pod.Name},
		map[string]any{"name": "POD_NAMESPACE", "value": pod.Namespace},
		map[string]any{"name": "SERVICE_ACCOUNT", "value": pod.Spec.ServiceAccountName},
		map[string]any{"name": "LABRUN_SANDBOX_EXEC", "value": "pod"},
	}
	var execs, logs []any
	for _, c := range containers {
		logPath := s.ContainerLogPath(pod.Namespace, pod.Name, c)
		if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
			return err
		}
		f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		f.Close()
		env := append(append([]any{}, podEnv...), map[string]any{"name": "LABRUN_CONTAINER", "value": c})
		execs = append(execs, map[string]any{"containers": []any{c}, "local": map[string]any{"workDir": workDir, "envs": env}})
		logs = append(logs, map[string]any{"containers": []any{c}, "logsFile": logPath})
	}
	// For containers not in the spec (ephemeral ones): same pod, no container name.
	execs = append(execs, map[string]any{"local": map[string]any{"workDir": workDir, "envs": podEnv}})

	owner := metav1.OwnerReference{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID}
	for _, obj := range []struct {
		gvk  schema.GroupVersionKind
		spec map[string]any
	}{
		{execGVK, map[string]any{"execs": execs}},
		{logsGVK, map[string]any{"logs": logs}},
	} {
		u := unstructuredObject(obj.gvk, pod.Namespace, pod.Name, obj.spec)
		u.SetOwnerReferences([]metav1.OwnerReference{owner})
		res := schema.GroupVersionResource{Group: obj.gvk.Group, Version: obj.gvk.Version, Resource: map[string]string{"Exec": "execs", "Logs": "logs"}[obj.gvk.Kind]}
		ri := s.dyn.Resource(res).Namespace(pod.Namespace)
		_, err := ri.Create(ctx, u, metav1.CreateOptions{FieldManager: fieldManager})
		if apierrors.IsAlreadyExists(err) {
			// Left over from an earlier pod of the same name (a StatefulSet's), not yet collected:
			// replace it, or the garbage collector would take it away from this pod.
			if old, gerr := ri.Get(ctx, pod.Name, metav1.GetOptions{}); gerr == nil {
				if refs := old.GetOwnerReferences(); len(refs) == 1 && refs[0].UID == pod.UID {
					continue
				}
			}
			_ = ri.Delete(ctx, pod.Name, metav1.DeleteOptions{})
			_, err = ri.Create(ctx, u, metav1.CreateOptions{FieldManager: fieldManager})
		}
		if err != nil {
			return fmt.Errorf("creating kwok %s: %w", obj.gvk.Kind, err)
		}
	}
	return nil
}

// runInformer starts the factory's informers, stops them and closes logFile when ctx ends (Stop
// waits for that through s.watchers), and returns once inf's cache has synced.
func (s *Sandbox) runInformer(ctx context.Context, factory interface {
	Start(stopCh <-chan struct{})
	Shutdown()
}, inf cache.SharedIndexInformer, logFile *os.File, what string) error {
	factory.Start(ctx.Done())
	s.watchers.Add(1)
	go func() {
		defer s.watchers.Done()
		<-ctx.Done()
		factory.Shutdown()
		logFile.Close()
	}()
	syncCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if !cache.WaitForCacheSync(syncCtx.Done(), inf.HasSynced) {
		return fmt.Errorf("%s did not sync", what)
	}
	return nil
}

// componentLog opens (appending) the log of one of the sandbox's in-process components in its
// directory, and gives a printf that stamps each line with the time.
func (s *Sandbox) componentLog(name string) (*os.File, func(format string, args ...any), error) {
	f, err := os.OpenFile(filepath.Join(s.Dir, name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, err
	}
	return f, func(format string, args ...any) {
		fmt.Fprintf(f, time.Now().Format(time.RFC3339Nano)+" "+format+"\n", args...)
	}, nil
}
