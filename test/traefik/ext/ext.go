// Package ext stands in for Traefik's nested dynamic/ext module. Upstream keeps it
// as a local directory (pkg/config/dynamic/ext) that a module zip does not carry,
// so rayshift's test build provides these empty extension points itself.
package ext

// HTTP is the (empty) extension point embedded in Traefik's HTTPConfiguration.
type HTTP struct{}

// Router is the (empty) extension point embedded in Traefik's Router.
type Router struct{}
