package apiserver

// The field managers of the server's own writes, as a cluster names them:
// kube-apiserver's own controllers (the kubernetes Service) and
// kube-controller-manager's (a namespace's default ServiceAccount and root
// CA ConfigMap). Those writes go through the resource's store
// (resourceStore) like any client's: defaulting, admission, validation and
// field management included.
const (
	managerAPIServer         = "kube-apiserver"
	managerControllerManager = "kube-controller-manager"
)
