// Command kubectl is upstream's kubectl (k8s.io/kubernetes/cmd/kubectl, whose code lives in the
// k8s.io/kubectl staging module), built from the Go modules pinned in ../../go.mod at the release
// of the test control plane; it mirrors upstream's cmd/kubectl/kubectl.go. The tests run
// `kubectl plugin list` and `kubectl rayshift …` through it, so plugin discovery is kubectl's own.
package main

import (
	"os"

	_ "k8s.io/client-go/plugin/pkg/client/auth"
	"k8s.io/component-base/cli"
	"k8s.io/component-base/logs"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"
)

func main() {
	// Verbosity is parsed before the command is built, as upstream does, so klog honours -v while
	// kubectl looks up plugins and reads .kuberc.
	logs.GlogSetter(cmd.GetLogVerbosity(os.Args)) // nolint:errcheck
	command := cmd.NewDefaultKubectlCommand()
	if err := cli.RunNoErrOutput(command); err != nil {
		util.CheckErr(err)
	}
}
