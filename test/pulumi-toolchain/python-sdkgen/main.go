// Command python-sdkgen generates the Python SDK of a Pulumi package schema with Pulumi's own Python
// code generator (github.com/pulumi/pulumi/pkg/v3/codegen/python, at the CLI's pinned version), as
// `pulumi package add` does through Pulumi's Python language host, which the Go module proxy does
// not serve. Built by ../../../scripts/build-pulumi-sdk.sh against ../cli/go.mod.
//
//	python-sdkgen SCHEMA.json OUTDIR
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/blang/semver"
	"github.com/pulumi/pulumi/pkg/v3/codegen/python"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: sdkgen SCHEMA.json OUTDIR")
		os.Exit(2)
	}
	data, err := os.ReadFile(os.Args[1])
	check(err)
	var spec schema.PackageSpec
	check(json.Unmarshal(data, &spec))
	pkg, diags, err := schema.BindSpec(spec, noReferences{}, schema.ValidationOptions{})
	check(err)
	if diags.HasErrors() {
		fmt.Fprintln(os.Stderr, diags.Error())
		os.Exit(1)
	}
	files, err := python.GeneratePackage("rayshift-sdkgen", pkg, nil, noReferences{})
	check(err)
	for name, content := range files {
		path := filepath.Join(os.Args[2], name)
		check(os.MkdirAll(filepath.Dir(path), 0o755))
		check(os.WriteFile(path, content, 0o644))
	}
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// noReferences refuses every package reference: the rayshift schema refers to no other package.
type noReferences struct{}

func (noReferences) LoadPackage(pkg string, _ *semver.Version) (*schema.Package, error) {
	return nil, fmt.Errorf("the schema refers to package %s; only self-contained schemas are supported", pkg)
}

func (noReferences) LoadPackageV2(_ context.Context, d *schema.PackageDescriptor) (*schema.Package, error) {
	return noReferences{}.LoadPackage(d.Name, nil)
}

func (noReferences) LoadPackageReference(pkg string, _ *semver.Version) (schema.PackageReference, error) {
	return nil, fmt.Errorf("the schema refers to package %s; only self-contained schemas are supported", pkg)
}

func (noReferences) LoadPackageReferenceV2(_ context.Context, d *schema.PackageDescriptor) (schema.PackageReference, error) {
	return noReferences{}.LoadPackageReference(d.Name, nil)
}
