module github.com/traefik/traefik/dynamic/ext

go 1.26.0
