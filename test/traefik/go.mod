// The Gateway API release Traefik v3.7.9 (requirements.txt) is built against: upstream's go.mod
// requires sigs.k8s.io/gateway-api v1.5.1. scripts/install-traefik.sh downloads that module (its
// checksum verified against go.sum) for its standard-channel CRD files, which the end-to-end
// tests install so that Traefik's informers find every kind they watch. When moving to another
// Traefik release, take the version from its go.mod and run `go mod download sigs.k8s.io/gateway-api`
// here to refresh go.sum.
module rayshift.dev/test/traefik

go 1.26.0

require (
	sigs.k8s.io/gateway-api v1.5.1
)
