// Package compose brings the lock topologies of the repository's
// docker-compose.yml up and down as named Compose projects, with Compose v2
// (`docker compose`) or v1 (`docker-compose`, which has no `up --wait`, so
// Up waits for every container's healthcheck itself). It also names the
// images the compose file uses (Image) and says whether a Docker engine
// answers and which images it lacks, so tests skip with a clear reason.
//
// compose runs the docker CLI and imports only the standard library; it
// removes only the containers, networks and volumes of the projects it is
// given.
package compose
