package clusters

import (
	"context"
	"errors"
	"fmt"
)

// StorageNode is the server of the protected resource that every topology
// starts beside its lock nodes: the workers write to it and no nemesis
// touches it. Its node is named StorageName.
type StorageNode interface {
	// Start launches the server and returns once it answers.
	Start(ctx context.Context) error
	// Stop shuts it down; stopping a stopped node is no error.
	Stop(ctx context.Context) error
	// Addr returns its host:port on loopback.
	Addr() string
	// Pid returns the server process's pid, 0 when it is not running.
	Pid() int
}

// StorageName is the node name of the storage node.
const StorageName = "storage"

// StorageKind is how the toolkit makes storage nodes: the package of the
// service that serves the protected resource registers it (RegisterStorage).
type StorageKind struct {
	// Look checks that the storage server's binary is installed; its
	// error names the package to install.
	Look func() error
	// New returns the unstarted storage node, its data under dataDir and
	// its log in logDir.
	New func(dataDir, logDir string) StorageNode
	// Ping asks the storage server at addr whether it answers (the
	// health watch of a run).
	Ping func(addr string) error
}

var storageKind *StorageKind

// RegisterStorage sets how storage nodes are made; the storage service's
// package calls it from init. A second registration, or one with no Look or
// New, is a programming error and panics.
func RegisterStorage(k StorageKind) {
	if k.Look == nil || k.New == nil || k.Ping == nil {
		panic("clusters: storage: Look, New and Ping are required")
	}
	if storageKind != nil {
		panic("clusters: storage registered twice")
	}
	storageKind = &k
}

// errNoStorage is returned when no package registered the storage node.
var errNoStorage = errors.New("no storage node registered (import the services package)")

// LookStorage checks that the storage server's binary is installed.
func LookStorage() error {
	if storageKind == nil {
		return errNoStorage
	}
	if err := storageKind.Look(); err != nil {
		return fmt.Errorf("the storage node of the protected resource: %w", err)
	}
	return nil
}

// NewStorage returns the unstarted storage node, its data under dataDir
// and its log logDir/storage.log.
func NewStorage(dataDir, logDir string) (StorageNode, error) {
	if storageKind == nil {
		return nil, errNoStorage
	}
	return storageKind.New(dataDir, logDir), nil
}

// StartStorage makes the storage node and starts it. The node it returns
// with an error may have started part way: stop it (StopStorage).
func StartStorage(ctx context.Context, dataDir, logDir string) (StorageNode, error) {
	s, err := NewStorage(dataDir, logDir)
	if err != nil {
		return nil, err
	}
	return s, s.Start(ctx)
}

// StorageNodeOf returns s as a Node, for a topology's Nodes; nil gives
// none.
func StorageNodeOf(s StorageNode) []Node {
	if s == nil {
		return nil
	}
	return []Node{{Name: StorageName, Role: "storage", Addr: s.Addr()}}
}

// StopStorage stops s; nil is no error.
func StopStorage(ctx context.Context, s StorageNode) error {
	if s == nil {
		return nil
	}
	return s.Stop(ctx)
}

// StoragePid adds s's pid to pids under StorageName when it runs; nil
// adds nothing.
func StoragePid(pids map[string]int, s StorageNode) map[string]int {
	if s != nil {
		if pid := s.Pid(); pid != 0 {
			pids[StorageName] = pid
		}
	}
	return pids
}

// PingStorage asks the storage server at addr whether it answers.
func PingStorage(addr string) error {
	if storageKind == nil {
		return errNoStorage
	}
	return storageKind.Ping(addr)
}
