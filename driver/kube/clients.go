package kube

import (
	"context"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
)

// The scheme of the two API groups labrun handles as types. Not client-go's kubernetes/scheme:
// it registers every group of k8s.io/api (some 55 packages), whose init is the biggest of
// labrun's startup and whose code is about 8 MB of the binary. Built at the first use, not in
// an init: registering the two groups' types costs 2–6 ms, which every command paid (vet and
// version included) whether or not it talks to a cluster.
type codecs struct {
	scheme *runtime.Scheme
	codecs serializer.CodecFactory
	params runtime.ParameterCodec
}

var kubeTypes = sync.OnceValue(func() codecs {
	s := runtime.NewScheme()
	// As kubernetes/scheme does: the options and Status under plain "v1", then the groups.
	metav1.AddToGroupVersion(s, k8sschema.GroupVersion{Version: "v1"})
	utilruntime.Must(corev1.AddToScheme(s))
	utilruntime.Must(appsv1.AddToScheme(s))
	return codecs{scheme: s, codecs: serializer.NewCodecFactory(s), params: runtime.NewParameterCodec(s)}
})

// clients are the REST clients of the two API groups labrun reads and changes through types
// (pods, config maps, deployments); everything else goes through the dynamic client. Their
// methods are named like client-go's typed clients and make the same requests (protobuf
// preferred, as those clients prefer it for these kinds; the log stream is plain text), but
// only the calls labrun makes exist.
type clients struct {
	core *rest.RESTClient
	apps *rest.RESTClient
}

func newClients(cfg *rest.Config) (clients, error) {
	core, err := groupClient(cfg, "/api", corev1.SchemeGroupVersion)
	if err != nil {
		return clients{}, err
	}
	apps, err := groupClient(cfg, "/apis", appsv1.SchemeGroupVersion)
	if err != nil {
		return clients{}, err
	}
	return clients{core: core, apps: apps}, nil
}

// groupClient is what client-go's generated clients build for a group version.
func groupClient(cfg *rest.Config, apiPath string, gv k8sschema.GroupVersion) (*rest.RESTClient, error) {
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &gv
	c.APIPath = apiPath
	c.NegotiatedSerializer = rest.CodecFactoryForGeneratedClient(kubeTypes().scheme, kubeTypes().codecs).WithoutConversion()
	return rest.RESTClientFor(c)
}

func (c clients) CoreV1() coreV1 { return coreV1{c.core} }
func (c clients) AppsV1() appsV1 { return appsV1{c.apps} }

type coreV1 struct{ rc *rest.RESTClient }

func (c coreV1) RESTClient() *rest.RESTClient    { return c.rc }
func (c coreV1) Pods(ns string) pods             { return pods{c.rc, ns} }
func (c coreV1) ConfigMaps(ns string) configMaps { return configMaps{c.rc, ns} }

type appsV1 struct{ rc *rest.RESTClient }

func (c appsV1) Deployments(ns string) deployments { return deployments{c.rc, ns} }

type pods struct {
	rc *rest.RESTClient
	ns string
}

func (c pods) Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.Pod, error) {
	out := &corev1.Pod{}
	return out, getInto(ctx, c.rc, c.ns, "pods", name, opts, out)
}

func (c pods) List(ctx context.Context, opts metav1.ListOptions) (*corev1.PodList, error) {
	out := &corev1.PodList{}
	err := c.rc.Get().UseProtobufAsDefault().Namespace(c.ns).Resource("pods").VersionedParams(&opts, kubeTypes().params).
		Timeout(listTimeout(opts)).Do(ctx).Into(out)
	return out, err
}

// Watch watches the pods opts selects (opts.Watch is set here), as client-go's typed client does.
func (c pods) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	return c.rc.Get().UseProtobufAsDefault().Namespace(c.ns).Resource("pods").VersionedParams(&opts, kubeTypes().params).
		Timeout(listTimeout(opts)).Watch(ctx)
}

func (c pods) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	return c.rc.Delete().UseProtobufAsDefault().Namespace(c.ns).Resource("pods").Name(name).Body(&opts).Do(ctx).Error()
}

// GetLogs returns the request of a pod's log; the caller streams it.
func (c pods) GetLogs(name string, opts *corev1.PodLogOptions) *rest.Request {
	return c.rc.Get().Namespace(c.ns).Name(name).Resource("pods").SubResource("log").VersionedParams(opts, kubeTypes().params)
}

type configMaps struct {
	rc *rest.RESTClient
	ns string
}

func (c configMaps) Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.ConfigMap, error) {
	out := &corev1.ConfigMap{}
	return out, getInto(ctx, c.rc, c.ns, "configmaps", name, opts, out)
}

type deployments struct {
	rc *rest.RESTClient
	ns string
}

func (c deployments) Get(ctx context.Context, name string, opts metav1.GetOptions) (*appsv1.Deployment, error) {
	out := &appsv1.Deployment{}
	return out, getInto(ctx, c.rc, c.ns, "deployments", name, opts, out)
}

func (c deployments) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions) (*appsv1.Deployment, error) {
	out := &appsv1.Deployment{}
	err := c.rc.Patch(pt).UseProtobufAsDefault().Namespace(c.ns).Resource("deployments").Name(name).VersionedParams(&opts, kubeTypes().params).
		Body(data).Do(ctx).Into(out)
	return out, err
}

// getInto is the GET of one namespaced object that every typed client's Get makes.
func getInto(ctx context.Context, rc *rest.RESTClient, ns, resource, name string, opts metav1.GetOptions, out runtime.Object) error {
	return rc.Get().UseProtobufAsDefault().Namespace(ns).Resource(resource).Name(name).VersionedParams(&opts, kubeTypes().params).Do(ctx).Into(out)
}

// listTimeout is the request timeout a list asks for, as client-go's typed clients set it.
func listTimeout(opts metav1.ListOptions) time.Duration {
	if opts.TimeoutSeconds == nil {
		return 0
	}
	return time.Duration(*opts.TimeoutSeconds) * time.Second
}
