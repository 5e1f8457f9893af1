// Command kube-controller-manager is upstream's kube-controller-manager
// (k8s.io/kubernetes/cmd/kube-controller-manager), built from the Go module pinned in ../../go.mod;
// it mirrors upstream's cmd/kube-controller-manager/controller-manager.go.
package main

import (
	"os"
	_ "time/tzdata"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/kubernetes/cmd/kube-controller-manager/app"
)

func main() { os.Exit(cli.Run(app.NewControllerManagerCommand())) }
