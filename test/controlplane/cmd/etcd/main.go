// Command etcd is upstream's etcd server at the version k8s.io/kubernetes pins
// (the same as etcd's server/main.go).
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
