"""rayshift's end-to-end test Serve apps (HTTP and gRPC), answering their version and cluster."""
