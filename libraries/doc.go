// Package libraries holds the Go client libraries the lock designs wrap
// and builds lockcheck's worker linked with another version of one of
// them (check run --library-version), from the Go module proxy, kept in
// the cache directory like the server versions.
package libraries
