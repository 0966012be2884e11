package clusters

import (
	"fmt"
	"sort"
	"time"

	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/internal/lookups"
	"github.com/lockcheck/lockcheck/internal/suggest"
)

// Topology is a cluster as the workers see it: lock nodes reached through a
// worker slot's own proxies, and the storage node of the protected resource.
type Topology interface {
	Cluster
	// LockAddrs returns the addresses worker slot dials, one per lock node.
	LockAddrs(slot int) []string
	// StorageAddr returns the storage node's address.
	StorageAddr() string
}

// TopologyConfig is what a service needs to know of a test to build its
// topology. The runner fills it from the resolved test plan.
type TopologyConfig struct {
	// Workers is the number of worker slots.
	Workers int
	// LockNodes is how many lock nodes the design asks for.
	LockNodes int
	// Nodes is the ensemble size the user asked for (--nodes), for services
	// that have one (ZooKeeper, etcd).
	Nodes int
	// LogDir receives one log per node (the run directory's nodes/).
	LogDir string
	// ClockShim starts the lock nodes under the clock shim.
	ClockShim bool
	// Replicated asks for a topology with replicas a master can fail over
	// to, for services that have one (Redis: Sentinel).
	Replicated bool
	// Lease is the test's lease; services whose server gives up a silent
	// session (PostgreSQL, MariaDB) derive their session timeouts from it.
	Lease time.Duration
	// RunID names the run (its run directory); container topologies label
	// what they start with it.
	RunID string
	// Server is the path of the server binary to start, from the version
	// the test asked for (ServerVersion.Server); "" means the one the
	// service finds installed.
	Server string
}

// Service is a lock service lockcheck can start: how to check that its
// binaries are installed and how to build its topology. Each service
// registers itself from its own file, so adding one adds no branch to the
// runner.
type Service struct {
	// Name is the name lock designs give as their Design.Service.
	Name string
	// Summary is the one line `check list` prints.
	Summary string
	// Packages names the Debian packages the service needs.
	Packages string
	// Look checks that the service's binaries are installed; its error
	// names the package to install. RegisterService makes it check the
	// storage node's server too, which every topology starts.
	Look func() error
	// New returns the unstarted topology for cfg.
	New func(cfg TopologyConfig) Topology
	// Fronts names the service whose designs run on this one unchanged
	// (PgBouncer fronts postgres): `check run --service NAME` picks it for
	// such a design; "" for a service that runs only its own designs.
	Fronts string
	// Server names the server in stories ("PostgreSQL"); "" means Name.
	Server string
	// SessionSettings names the server settings that end a client session
	// gone silent, releasing every lock it held ("idle_session_timeout"),
	// for a service whose server has them; "" for others.
	SessionSettings string
	// SessionTimeout returns the bound SessionSettings get for a test's
	// lease; nil for a service without them.
	SessionTimeout func(lease time.Duration) time.Duration
	// Version, when set, returns the version of the service's server, which
	// test.json records under the service's name ("" when unknown).
	Version func() string
	// Versions are the server versions a run can ask for
	// (--service-version), the default first; nil for a service that runs
	// the server installed on the machine only.
	Versions []ServerVersion
	// Container is the service's form for --cluster docker, nil for a
	// service without one.
	Container *ContainerForm
	// External says how --cluster external points the service's workers
	// at lock servers someone else runs; nil for a service whose workers
	// need more than the servers' addresses (Sentinel names, a login, a
	// cluster's address map).
	External *ExternalForm
}

// ExternalForm is what --cluster external needs to know of a service.
type ExternalForm struct {
	// Ensemble says the addresses are the members of one ensemble, as many
	// as it has; otherwise there is one address per lock node the design
	// uses (one Redis, RedLock's five).
	Ensemble bool
	// Roles are the roles other than RoleLock that a topology file may
	// give the service's servers ("sentinel"), with what each is for.
	Roles map[string]string
	// Login names, for a service whose workers log in, the environment
	// variables its login comes from unless the topology file names
	// others; nil for a service with no login.
	Login *LoginEnv
	// Extend returns the external topology with the service's own
	// capabilities added (a session kill, the master found through its
	// failover managers); nil when the plain one serves.
	Extend func(e *External) Topology
	// Check refuses a topology file's servers the service cannot run on
	// (no Sentinel, no master name), nil to take any.
	Check func(cfg ExternalConfig) error
}

// LoginEnv names the environment variables of a database login, and the
// database to use when its variable is unset ("" for the user's name).
type LoginEnv struct {
	User, Password, Database string
	DefaultDatabase          string
}

// ContainerForm is a service's topology built from containers.
type ContainerForm struct {
	// Images are the short names of the images it runs (the folders
	// docker/NAME, listed in containers/images.txt).
	Images []string
	// New returns the unstarted topology for cfg, or an error when cfg asks
	// for something the container form does not have.
	New func(cfg TopologyConfig) (Topology, error)
}

// services holds the registered services; each service file adds itself
// from init and nothing changes it afterwards.
var services []Service

// RegisterService adds a service to Services; each service's file calls it
// from init. A service registered twice, or with no name, Look or New, is
// a programming error and panics.
func RegisterService(s Service) {
	if s.Name == "" || s.Look == nil || s.New == nil {
		panic(fmt.Sprintf("clusters: service %q: name, Look and New are required", s.Name))
	}
	for _, o := range services {
		if o.Name == s.Name {
			panic(fmt.Sprintf("clusters: service %q registered twice", s.Name))
		}
	}
	own := s.Look
	s.Look = func() error {
		if err := own(); err != nil {
			return err
		}
		// Every topology starts the storage node beside its lock nodes.
		return LookStorage()
	}
	services = append(services, s)
}

// registerService is RegisterService, for this package's own services.
func registerService(s Service) { RegisterService(s) }

// Services returns every registered lock service, sorted by name.
func Services() []Service {
	out := append([]Service(nil), services...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// FindService returns the service called name, or an error listing the
// known services.
func FindService(name string) (Service, error) {
	lookups.Count("service")
	var names []string
	for _, s := range Services() {
		if s.Name == name {
			return s, nil
		}
		names = append(names, s.Name)
	}
	return Service{}, suggest.Unknown("lock service", name, names)
}

// LookAll returns a Service.Look that finds every binary looks names, in
// order, and returns the first one missing.
func LookAll(looks ...func() (string, error)) func() error {
	return func() error {
		for _, look := range looks {
			if _, err := look(); err != nil {
				return err
			}
		}
		return nil
	}
}

// ServicesWhere returns the names of the registered services whose
// topology, built (unstarted) for a test of one worker on one lock node,
// with replicas to fail over to when replicated, has is true of: the
// services that have a capability, for an error that says where a fault
// applies. A service's New builds a topology without starting anything.
func ServicesWhere(replicated bool, has func(Topology) bool) []string {
	var names []string
	for _, s := range Services() {
		if has(s.New(TopologyConfig{Workers: 1, LockNodes: 1, Nodes: 3, Replicated: replicated})) {
			names = append(names, s.Name)
		}
	}
	return names
}

// Where says in a clause which services a fault applies to:
// "(it applies to the redis-cluster and zookeeper services)", or "" when
// none is registered.
func Where(replicated bool, has func(Topology) bool) string {
	names := ServicesWhere(replicated, has)
	switch len(names) {
	case 0:
		return ""
	case 1:
		return "(it applies to the " + names[0] + " service)"
	}
	return "(it applies to the " + history.JoinAnd(names) + " services)"
}
